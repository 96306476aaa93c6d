/*
 * force_source: a signal source FMU without inputs or states, for coupled tests.
 *
 *   F(t) = offset + a1 sin(2 pi f1 t + p1) + a2 sin(2 pi f2 t + p2) + a3 sin(2 pi f3 t + p3)
 *
 * F is computed whenever it is read, in initialisation mode too (then at the start time).
 */
#include <math.h>

#include "fmi2_framework.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

fmi2Status model_initialize(ModelInstance *c)
{
    (void)c;
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double t = TIME;
    if (outputs)
        V(F) = V(offset) + V(a1) * sin(2.0 * M_PI * V(f1) * t + V(p1))
               + V(a2) * sin(2.0 * M_PI * V(f2) * t + V(p2))
               + V(a3) * sin(2.0 * M_PI * V(f3) * t + V(p3));
    return fmi2OK;
}

fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}

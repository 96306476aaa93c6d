/*
 * Power-law damper with direct feedthrough (fmu_surrogate/benchmarks/power_damper.py):
 *   F = c sign(v) |v|^(4/3)
 * No state: a co-simulation step only advances time (MODEL_DO_STEP); power_damper_cvode
 * integrates a dummy state with CVODE all the same (cvode_runtime.c), as OpenModelica's FMUs do.
 */
#include <math.h>

#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(c) >= 0.0)) return model_fail(c, "parameter c = %g must be >= 0", V(c));
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    if (outputs) V(F) = V(c) * copysign(pow(fabs(V(v)), 4.0 / 3.0), V(v));
    return fmi2OK;
}

#ifndef MODEL_CVODE /* power_damper_cvode: the step of cvode_runtime.c (a dummy state) */
fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}
#endif

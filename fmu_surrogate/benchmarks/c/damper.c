/*
 * Linear damper with direct feedthrough (fmu_surrogate/benchmarks/damper.py):  F = c v.
 *
 * No state: a co-simulation step only advances time (MODEL_DO_STEP); the output is evaluated
 * with the input of the step.
 */
#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(c) >= 0.0)) return model_fail(c, "parameter c = %g must be >= 0", V(c));
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    if (outputs) V(F) = V(c) * V(v);
    return fmi2OK;
}

fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}

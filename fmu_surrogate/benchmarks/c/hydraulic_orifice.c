/*
 * Linear hydraulic orifice to tank (fmu_surrogate/benchmarks/vendor/hydraulic.py):
 *   Q = p / R         (p in bar, Q in l/min, R in bar per l/min)
 * No state: a co-simulation step only advances time (MODEL_DO_STEP); the flow answers the
 * pressure of the step (direct feedthrough).
 */
#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(R) > 0.0)) return model_fail(c, "parameter R = %g bar/(l/min) must be > 0", V(R));
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    if (outputs) V(Q) = V(p) / V(R);
    return fmi2OK;
}

fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}

/*
 * Hydraulic accumulator, linear capacitance (fmu_surrogate/benchmarks/vendor/hydraulic.py):
 *   60 C p' = -Q      (p in bar, Q in l/min, C in l/bar, t in s)
 * Q is the flow drawn from the accumulator: p Q is power out of the port.  Co-simulation with
 * the framework's fixed-step Runge-Kutta 4 (MODEL_RK4).
 */
#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(C) > 0.0)) return model_fail(c, "parameter C = %g l/bar must be > 0", V(C));
    V(p) = V(p0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    (void)outputs;
    V(der_p) = -V(Q) / (60.0 * V(C));
    return fmi2OK;
}

/*
 * Progressive spring (fmu_surrogate/benchmarks/progressive_spring.py):
 *   x' = v,   F = k x (1 + (x / x_ref)^2)
 * Co-simulation with the framework's fixed-step Runge-Kutta 4 (MODEL_RK4); as
 * progressive_spring the state x is internal (not in the model description).
 */
#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(k) > 0.0)) return model_fail(c, "parameter k = %g must be > 0", V(k));
    if (!(V(x_ref) > 0.0)) return model_fail(c, "parameter x_ref = %g must be > 0", V(x_ref));
    V(x) = V(x0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double r = V(x) / V(x_ref);
    V(der_x) = V(v);
    if (outputs) V(F) = V(k) * V(x) * (1.0 + r * r);
    return fmi2OK;
}

/*
 * Linear pH spring with one velocity/force power port (example component of fmu_surrogate.couple).
 *
 *   x = q (elongation),  x' = (J - R) Q x + B u,  y = B^T Q x  with J = R = 0, Q = k, B = 1:
 *   q' = v,  F = -k q,  H = k q^2 / 2.  Input v (flow), output F = -k q (effort on the attached mass); no direct feedthrough.
 */
#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(k) > 0.0)) return model_fail(c, "parameter k = %g must be > 0", V(k));
    V(q) = V(q0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    V(der_q) = V(v);
    if (outputs) V(F) = -V(k) * V(q);
    return fmi2OK;
}

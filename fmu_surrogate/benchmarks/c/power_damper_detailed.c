/*
 * Hydraulic damper (fmu_surrogate/benchmarks/vendor/power_damper_detailed.py): through-rod
 * piston of area A, two chambers of compressible oil (compliances V_i / beta), an orifice with a
 * smooth laminar transition between them; the gauge pressures p1, p2 (above p_pre) are states.
 *   (V1 / beta) p1' = A v - Q,   (V2 / beta) p2' = Q - A v,   F = A (p1 - p2)
 *   Q = Cd a_o sqrt(2 / rho) dp / (dp^2 + dp_tr^2)^(1/4),   dp = p1 - p2
 * Co-simulation only, states internal, integrated by CVODE (cvode_runtime.c).  An absolute
 * pressure p_pre + p_i below zero (cavitation, outside the model) fails the evaluation.
 */
#include <math.h>

#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
#define POSITIVE(name)                                                                           \
    if (!(V(name) > 0.0)) return model_fail(c, "parameter " #name " = %g must be > 0", V(name))
    POSITIVE(A);
    POSITIVE(a_o);
    POSITIVE(Cd);
    POSITIVE(rho);
    POSITIVE(beta);
    POSITIVE(V1);
    POSITIVE(V2);
    POSITIVE(p_pre);
    POSITIVE(dp_tr);
#undef POSITIVE
    V(p1) = 0.0; /* at rest at the precharge */
    V(p2) = 0.0;
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double dp = V(p1) - V(p2), qa = V(A) * V(v);
    const double q = V(Cd) * V(a_o) * sqrt(2.0 / V(rho)) * dp / sqrt(sqrt(dp * dp + V(dp_tr) * V(dp_tr)));
    if (V(p_pre) + V(p1) < 0.0 || V(p_pre) + V(p2) < 0.0)
        return model_fail(c, "cavitation: absolute chamber pressures %g Pa, %g Pa (p_pre = %g Pa) "
                          "at v = %g m/s; the model holds while both stay > 0: raise p_pre or "
                          "keep |v| smaller", V(p_pre) + V(p1), V(p_pre) + V(p2), V(p_pre), V(v));
    V(der_p1) = (qa - q) * V(beta) / V(V1);
    V(der_p2) = (q - qa) * V(beta) / V(V2);
    if (outputs) V(F) = V(A) * dp;
    return fmi2OK;
}

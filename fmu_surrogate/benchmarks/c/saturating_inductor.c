/*
 * Coil with saturating flux (fmu_surrogate/benchmarks/saturating_inductor.py):
 *   psi' = V - R i,   i = (psi / L0) (1 + (psi / psi_sat)^2)
 * Co-simulation only, the flux linkage psi internal; fixed-step Runge-Kutta 4 (MODEL_RK4).
 */
#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(L0) > 0.0)) return model_fail(c, "parameter L0 = %g must be > 0", V(L0));
    if (!(V(psi_sat) > 0.0))
        return model_fail(c, "parameter psi_sat = %g must be > 0", V(psi_sat));
    if (!(V(R) >= 0.0)) return model_fail(c, "parameter R = %g must be >= 0", V(R));
    V(psi) = V(psi0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double r = V(psi) / V(psi_sat);
    const double i = V(psi) / V(L0) * (1.0 + r * r);
    V(der_psi) = V(V) - V(R) * i;
    if (outputs) V(i) = i;
    return fmi2OK;
}

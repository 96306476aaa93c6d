/*
 * DC motor with a saturating magnetic circuit (fmu_surrogate/benchmarks/vendor/saturating_motor.py):
 * electrical port (V in, i out), mechanical port (w in, delivered torque tau out).
 *
 *   psi' = V - R i - k w,   i = (psi / L0) (1 + (psi / psi_sat)^2),   tau = k i
 *
 * tau w is power out of the motor. Co-simulation only, the flux linkage psi internal;
 * fixed-step Runge-Kutta 4 (MODEL_RK4, n_substeps).
 */
#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(R) >= 0.0)) return model_fail(c, "parameter R = %g must be >= 0", V(R));
    if (!(V(L0) > 0.0)) return model_fail(c, "parameter L0 = %g must be > 0", V(L0));
    if (!(V(k) > 0.0)) return model_fail(c, "parameter k = %g must be > 0", V(k));
    if (!(V(psi_sat) > 0.0))
        return model_fail(c, "parameter psi_sat = %g must be > 0", V(psi_sat));
    V(psi) = V(psi0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double r = V(psi) / V(psi_sat);
    const double i = V(psi) / V(L0) * (1.0 + r * r);
    V(der_psi) = V(V) - V(R) * i - V(k) * V(w);
    if (outputs) {
        V(i) = i;
        V(tau) = V(k) * i;
    }
    return fmi2OK;
}

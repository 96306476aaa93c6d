/*
 * Separately excited DC motor (fmu_surrogate/benchmarks/dc_motor.py): electrical port (V in,
 * i out), mechanical port (w in, flange torque tau out), field command, reversing contactor.
 *
 *   L i_a' = s V - R i_a - k phi w,   i = s i_a,   tau = -k phi i_a,   s = direction, phi = field
 *
 * Co-simulation steps with the framework's fixed-step Runge-Kutta 4 (MODEL_RK4, n_substeps).
 */
#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(R) > 0.0)) return model_fail(c, "parameter R = %g must be > 0", V(R));
    if (!(V(L) > 0.0)) return model_fail(c, "parameter L = %g must be > 0", V(L));
    if (!(V(k) > 0.0)) return model_fail(c, "parameter k = %g must be > 0", V(k));
    V(i_a) = V(i0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const int s = VI(direction);
    const double phi = V(field);
    if (s < -1 || s > 1)
        return model_fail(c, "input direction = %d must be -1 (reverse), 0 (braking) or 1", s);
    if (!(phi >= 0.0)) return model_fail(c, "input field = %g must be >= 0 (flux fraction)", phi);
    V(der_i_a) = (s * V(V) - V(R) * V(i_a) - V(k) * phi * V(w)) / V(L);
    if (outputs) {
        V(i) = s * V(i_a);
        V(tau) = -V(k) * phi * V(i_a);
        VB(braking) = s == 0 ? fmi2True : fmi2False;
    }
    return fmi2OK;
}

/*
 * Mass on a progressive spring with a power-law damper to ground, with an acceleration sensor
 * (fmu_surrogate/benchmarks/vendor/progressive_spring.py, sprung_mass_sensor):
 *   x' = v,   m v' = F - k x (1 + (x / x_ref)^2) - c sign(v) |v|^(4/3)
 * Force in; velocity out (the power port) and acceleration a = v' out, computed from the
 * current state and the current force (a direct feedthrough of F). Co-simulation with the
 * framework's fixed-step Runge-Kutta 4 (MODEL_RK4); the elongation x and the momentum p = m v
 * are internal (not in the model description).
 */
#include <math.h>

#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    static const char *const positive[] = {"m", "k", "x_ref"};
    const double value[] = {V(m), V(k), V(x_ref)};
    int j;
    for (j = 0; j < 3; j++)
        if (!(value[j] > 0.0))
            return model_fail(c, "parameter %s = %g must be > 0", positive[j], value[j]);
    if (!(V(c) >= 0.0)) return model_fail(c, "parameter c = %g must be >= 0", V(c));
    V(x) = V(x0);
    V(p) = V(m) * V(v0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double vel = V(p) / V(m), r = V(x) / V(x_ref);
    const double net = V(F) - V(k) * V(x) * (1.0 + r * r)
                       - V(c) * copysign(pow(fabs(vel), 4.0 / 3.0), vel);
    V(der_x) = vel;
    V(der_p) = net;
    if (outputs) {
        V(v) = vel;
        V(a) = net / V(m);
    }
    return fmi2OK;
}

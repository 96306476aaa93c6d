/*
 * Free mass with a power-out port (fmu_surrogate/benchmarks/free_mass.py):  m v' = -F.
 *
 * F is the reaction force, the force the mass exerts on its drive: F v is power flowing out of
 * the port.  Lossless, marginally stable.  Built as free_inertia the same equation holds for
 * torque, angular velocity and inertia (only the units differ).
 */
#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(m) > 0.0)) return model_fail(c, "parameter m = %g must be > 0", V(m));
    V(v) = V(v0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    (void)outputs;
    V(der_v) = -V(F) / V(m);
    return fmi2OK;
}

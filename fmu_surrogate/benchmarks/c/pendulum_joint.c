/*
 * Pendulum on a driven joint (fmu_surrogate/benchmarks/vendor/rotating/pendulum_joint.py):
 *   phi' = w,   m l^2 w' = tau - d w - m g l sin(phi)
 * Co-simulation only, phi and w internal (w is also the output); its own CVODE.
 */
#include <math.h>

#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(m) > 0.0)) return model_fail(c, "parameter m = %g must be > 0", V(m));
    if (!(V(l) > 0.0)) return model_fail(c, "parameter l = %g must be > 0", V(l));
    if (!(V(d) >= 0.0)) return model_fail(c, "parameter d = %g must be >= 0", V(d));
    V(phi) = V(phi0);
    V(omega) = V(w0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double ml = V(m) * V(l);
    V(der_phi) = V(omega);
    V(der_omega) = (V(tau) - V(d) * V(omega) - ml * V(g) * sin(V(phi))) / (ml * V(l));
    if (outputs) V(w) = V(omega);
    return fmi2OK;
}

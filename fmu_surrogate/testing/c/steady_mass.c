/*
 * steady_mass: a vendor-like FMU initialised in steady state (Modelica `initial equation
 * der(x) = 0`), for tests of the steady-start pipeline.
 *
 *   m q'' = F + preload - k q - d q'          (a mass on a spring and a damper, pushed by F)
 *
 * States (internal, not in the model description): the deflection s and the velocity w.
 * Outputs: v = w, a = w' (feedthrough of F), q = s.
 *
 * At initialisation the mass rests at the equilibrium of the input F set before or during
 * initialisation mode: s = (F + preload) / k, w = 0 — as a Modelica tool's steady-state
 * initialisation does.  fmi2DoStep integrates with the framework's fixed-step Runge-Kutta 4
 * (MODEL_RK4, n_substeps per communication step), F held over the step.
 */
#include "fmi2_framework.h"

static fmi2Status check_parameters(ModelInstance *c)
{
    if (!(V(m) > 0.0)) return model_fail(c, "parameter m = %g must be > 0", V(m));
    if (!(V(k) > 0.0)) return model_fail(c, "parameter k = %g must be > 0", V(k));
    if (!(V(d) >= 0.0)) return model_fail(c, "parameter d = %g must be >= 0", V(d));
    return fmi2OK;
}

fmi2Status model_initialize(ModelInstance *c)
{
    fmi2Status s = check_parameters(c);
    if (s != fmi2OK) return s;
    /* steady state: der(s) = w = 0, der(w) = (F + preload - k s) / m = 0 */
    V(s) = (V(F) + V(preload)) / V(k);
    V(w) = 0.0;
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    V(der_s) = V(w);
    V(der_w) = (V(F) + V(preload) - V(k) * V(s) - V(d) * V(w)) / V(m);
    if (outputs) {
        V(v) = V(w);
        V(a) = V(der_w);
        V(q) = V(s);
    }
    return fmi2OK;
}

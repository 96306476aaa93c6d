/*
 * steady_mass: a vendor-like FMU initialised in steady state (Modelica `initial equation
 * der(x) = 0`), for tests of the steady-start pipeline.
 *
 *   m q'' = F + preload - k q - k3 q^3 - d q'   (a mass on a spring, linear or hardening, and a
 *                                                damper, pushed by F)
 *
 * States (internal, not in the model description): the deflection s and the velocity w.
 * Outputs: v = w, a = w' (feedthrough of F), q = s.
 *
 * At initialisation the mass rests at the equilibrium of the input F set before or during
 * initialisation mode: k s + k3 s^3 = F + preload, w = 0 — as a Modelica tool's steady-state
 * initialisation does.  fmi2DoStep integrates with the framework's fixed-step Runge-Kutta 4
 * (MODEL_RK4, n_substeps per communication step), F held over the step.
 */
#include <math.h>

#include "fmi2_framework.h"

static fmi2Status check_parameters(ModelInstance *c)
{
    if (!(V(m) > 0.0)) return model_fail(c, "parameter m = %g must be > 0", V(m));
    if (!(V(k) > 0.0)) return model_fail(c, "parameter k = %g must be > 0", V(k));
    if (!(V(k3) >= 0.0)) return model_fail(c, "parameter k3 = %g must be >= 0", V(k3));
    if (!(V(d) >= 0.0)) return model_fail(c, "parameter d = %g must be >= 0", V(d));
    return fmi2OK;
}

/* The deflection where the spring holds the force f: k s + k3 s^3 = f.  The linear spring's
 * s = f / k (one division, as before k3 existed); the hardening one by Newton's method from
 * s = f / k, which overshoots no root: g(s) = k s + k3 s^3 - f is increasing and convex on the
 * side of f (concave on the other), so the iterates move monotonically towards the root from
 * f / k.  They stop when they no longer move towards it (round-off reached): full precision. */
static double spring_rest(double k, double k3, double f)
{
    double s = f / k;
    if (k3 == 0.0 || f == 0.0) return s;
    for (int i = 0; i < 200; i++) {
        double next = s - (k * s + k3 * s * s * s - f) / (k + 3.0 * k3 * s * s);
        /* towards 0 from s = f / k; a step that does not is round-off at the root */
        if (!(fabs(next) < fabs(s))) break;
        s = next;
    }
    return s;
}

fmi2Status model_initialize(ModelInstance *c)
{
    fmi2Status s = check_parameters(c);
    if (s != fmi2OK) return s;
    /* steady state: der(s) = w = 0, der(w) = (F + preload - k s - k3 s^3) / m = 0 */
    V(s) = spring_rest(V(k), V(k3), V(F) + V(preload));
    V(w) = 0.0;
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    double spring = V(k) * V(s) + V(k3) * V(s) * V(s) * V(s);  /* k s exactly when k3 = 0 */
    V(der_s) = V(w);
    V(der_w) = (V(F) + V(preload) - spring - V(d) * V(w)) / V(m);
    if (outputs) {
        V(v) = V(w);
        V(a) = V(der_w);
        V(q) = V(s);
    }
    return fmi2OK;
}

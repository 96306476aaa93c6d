/*
 * Duffing oscillator (docs/design.md §5):  m y'' + c y' + (a + b y^2) y = u.
 */
#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(m) > 0.0)) return model_fail(c, "parameter m = %g must be > 0", V(m));
    V(y) = V(y0);
    V(ydot) = V(ydot0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double y = V(y), v = V(ydot);
    const double acc = (V(u) - V(c) * v - (V(a) + V(b) * y * y) * y) / V(m);
    V(der_y) = v;
    V(der_ydot) = acc;
    if (outputs) V(yddot) = acc;
    return fmi2OK;
}

/*
 * Benchmark 3a: RC network pH-DAE of index 1 (docs/design.md §3).
 *
 *   x1' = G (u - sqrt(2 x1)),   x2 = u,   x3 = G (u - sqrt(2 x1)),   x1(0) = x1_0
 *
 * The storage law sqrt(2 x1) needs x1 > 0; an evaluation with x1 <= 0 fails with a logged reason.
 */
#include <math.h>

#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(G) > 0.0)) return model_fail(c, "parameter G = %g must be > 0", V(G));
    if (!(V(x1_0) > 0.0))
        return model_fail(c, "parameter x1_0 = %g must be > 0 (sqrt(2 x1) needs x1 > 0)",
                          V(x1_0));
    V(x1) = V(x1_0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    double x1 = V(x1), d;
    if (!(x1 > 0.0))
        return model_fail(c, "state x1 = %g <= 0 at t = %.17g: the storage law sqrt(2 x1) of the "
                             "RC network is undefined (the input drained the capacitor)",
                          x1, TIME);
    d = V(G) * (V(u) - sqrt(2.0 * x1));
    V(der_x1) = d;
    if (outputs) {
        V(x2) = V(u);
        V(x3) = d;
    }
    return fmi2OK;
}

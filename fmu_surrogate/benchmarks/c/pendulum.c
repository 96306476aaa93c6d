/*
 * Benchmark 3b: planar pendulum, index-3 pH-DAE (docs/design.md §3), integrated in the
 * angle coordinates
 *
 *   alpha'' = -(1/l) (g - u) sin(alpha),   alpha(0) = alpha0,  alpha'(0) = alpha_dot0
 *
 * and mapped to the pH-DAE variables
 *   q = l (sin a, -cos a),  p = m l a' (cos a, sin a),  lambda = m/(2l) (cos a (u - g) - l a'^2)
 * with q', p' from the chain rule.
 */
#include <math.h>

#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(m) > 0.0)) return model_fail(c, "parameter m = %g must be > 0", V(m));
    if (!(V(l) > 0.0)) return model_fail(c, "parameter l = %g must be > 0", V(l));
    V(alpha) = V(alpha0);
    V(alpha_dot) = V(alpha_dot0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double m = V(m), l = V(l), g = V(g), u = V(u);
    const double a = V(alpha), w = V(alpha_dot);
    const double s = sin(a), co = cos(a);
    const double acc = -(g - u) * s / l;
    V(der_alpha) = w;
    V(der_alpha_dot) = acc;
    if (outputs) {
        V(q1) = l * s;
        V(q2) = -l * co;
        V(p1) = m * l * w * co;
        V(p2) = m * l * w * s;
        V(lambda) = m / (2.0 * l) * (co * (u - g) - l * w * w);
        V(der_q1) = l * w * co;
        V(der_q2) = l * w * s;
        V(der_p1) = m * l * (acc * co - w * w * s);
        V(der_p2) = m * l * (acc * s + w * w * co);
    }
    return fmi2OK;
}

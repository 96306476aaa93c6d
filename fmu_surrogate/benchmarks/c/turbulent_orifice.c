/*
 * Hydraulic orifice to tank with a laminar-turbulent transition, flow-number model
 * (fmu_surrogate/benchmarks/vendor/hydraulic.py):
 *   Q = K sign(p) sqrt(|p|) tanh(2 sqrt(|p| / p_crit))
 * (p in bar, Q in l/min, K in (l/min)/sqrt(bar)): laminar, Q = 2 K p / sqrt(p_crit), for
 * |p| << p_crit, turbulent, Q = K sqrt(|p|), above.  No state: a co-simulation step only
 * advances time (MODEL_DO_STEP); the flow answers the pressure of the step (direct feedthrough).
 */
#include <math.h>

#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(K) > 0.0))
        return model_fail(c, "parameter K = %g (l/min)/sqrt(bar) must be > 0", V(K));
    if (!(V(p_crit) > 0.0))
        return model_fail(c, "parameter p_crit = %g bar must be > 0", V(p_crit));
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    if (outputs) {
        const double a = fabs(V(p));
        const double q = V(K) * sqrt(a) * tanh(2.0 * sqrt(a / V(p_crit)));
        V(Q) = V(p) < 0.0 ? -q : q;
    }
    return fmi2OK;
}

fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}

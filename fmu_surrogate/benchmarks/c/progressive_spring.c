/*
 * Progressive spring (fmu_surrogate/benchmarks/vendor/progressive_spring.py):
 *   x' = v,   F = k x (1 + (x / x_ref)^2)
 * Co-simulation with the framework's fixed-step Runge-Kutta 4 (MODEL_RK4); as
 * progressive_spring the state x is internal (not in the model description).
 *
 * The same spring with the displacement s of the driven end as an input (MODEL_DISPLACEMENT,
 * no state, MODEL_DO_STEP): x = x0 + s, progressive_spring_displacement shows F;
 * progressive_spring_damper (MODEL_DAMPER, the adaptor convention: s and v in, f out) adds the
 * power-law damper c sign(v) |v|^(4/3) of the velocity input v.
 */
#include <math.h>

#include "fmi2_framework.h"

#ifdef MODEL_DISPLACEMENT
fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(k) > 0.0)) return model_fail(c, "parameter k = %g must be > 0", V(k));
    if (!(V(x_ref) > 0.0)) return model_fail(c, "parameter x_ref = %g must be > 0", V(x_ref));
#ifdef MODEL_DAMPER
    if (!(V(c) >= 0.0)) return model_fail(c, "parameter c = %g must be >= 0", V(c));
#endif
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double x = V(x0) + V(s), r = x / V(x_ref);
    if (!outputs) return fmi2OK;
#ifdef MODEL_DAMPER
    V(f) = V(k) * x * (1.0 + r * r) + V(c) * copysign(pow(fabs(V(v)), 4.0 / 3.0), V(v));
#else
    V(F) = V(k) * x * (1.0 + r * r);
#endif
    return fmi2OK;
}

fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}
#else
fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(k) > 0.0)) return model_fail(c, "parameter k = %g must be > 0", V(k));
    if (!(V(x_ref) > 0.0)) return model_fail(c, "parameter x_ref = %g must be > 0", V(x_ref));
    V(x) = V(x0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double r = V(x) / V(x_ref);
    V(der_x) = V(v);
    if (outputs) V(F) = V(k) * V(x) * (1.0 + r * r);
    return fmi2OK;
}
#endif

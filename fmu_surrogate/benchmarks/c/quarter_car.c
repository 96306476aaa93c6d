/*
 * Quarter-car suspension (fmu_surrogate/benchmarks/quarter_car.py): sprung and unsprung mass,
 * suspension spring (free length ls0) and damper, tyre spring (free radius lt0), gravity.
 *
 *   ms zs'' = ks (ls0 - zs + zu) + cs (vu - vs) - ms g + F
 *   mu zu'' = kt (lt0 - zu) - ks (ls0 - zs + zu) - cs (vu - vs) - mu g
 *
 * Co-simulation steps with the framework's fixed-step Runge-Kutta 4 (MODEL_RK4, n_substeps).
 */
#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    static const char *const positive[] = {"ms", "mu", "ks", "kt", "ls0", "lt0"};
    const double value[] = {V(ms), V(mu), V(ks), V(kt), V(ls0), V(lt0)};
    int k;
    for (k = 0; k < 6; k++)
        if (!(value[k] > 0.0))
            return model_fail(c, "parameter %s = %g must be > 0", positive[k], value[k]);
    if (!(V(cs) >= 0.0)) return model_fail(c, "parameter cs = %g must be >= 0", V(cs));
    V(zs) = V(zs0);
    V(vs) = V(vs0);
    V(zu) = V(zu0);
    V(vu) = V(vu0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double fs = V(ks) * (V(ls0) - V(zs) + V(zu)) + V(cs) * (V(vu) - V(vs));
    const double ft = V(kt) * (V(lt0) - V(zu));
    V(der_zs) = V(vs);
    V(der_vs) = (fs - V(ms) * V(g) + V(F)) / V(ms);
    V(der_zu) = V(vu);
    V(der_vu) = (ft - fs - V(mu) * V(g)) / V(mu);
    if (outputs) {
        V(a_s) = V(der_vs);
        V(F_tyre) = ft;
    }
    return fmi2OK;
}

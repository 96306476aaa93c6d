/*
 * Gas-charged (bladder) hydraulic accumulator, polytropic
 * (fmu_surrogate/benchmarks/vendor/hydraulic.py):
 *   V' = -Q / 60,   p = p_pre (V0 / (V0 - V))^n   (p in bar, Q in l/min, V in l, t in s)
 * V is the fluid volume, V0 - V the gas volume; Q is the flow drawn from the accumulator: p Q is
 * power out of the port.  Co-simulation only, V internal; fixed-step Runge-Kutta 4 (MODEL_RK4).
 * The pressure is computed from the initial charge, p = p_init (g_init / (V0 - V))^n with the gas
 * volume g_init = V0 - V_init (the same law: p_init g_init^n = p_pre V0^n), so that it is p_init
 * exactly at rest.  The model holds while 0 < V < V0: an evaluation outside fails, so does the
 * step that reached it (the accumulator emptied, or its gas compressed to nothing).
 */
#include <math.h>

#include "fmi2_framework.h"

/* Fluid volume of the initial charge, V0 (1 - (p_pre / p_init)^(1/n)) (accurate also for p_init
   close to p_pre). */
static double initial_volume(ModelInstance *c)
{
    return -V(V0) * expm1(log(V(p_pre) / V(p_init)) / V(n));
}

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(V0) > 0.0))
        return model_fail(c, "parameter V0 = %g l (gas volume at the precharge) must be > 0",
                          V(V0));
    if (!(V(n) >= 1.0))
        return model_fail(c, "parameter n = %g (polytropic exponent) must be >= 1 "
                          "(1: isothermal, 1.4: adiabatic)", V(n));
    if (!(V(p_pre) > 0.0))
        return model_fail(c, "parameter p_pre = %g bar (precharge pressure) must be > 0",
                          V(p_pre));
    if (!(V(p_init) > V(p_pre)))
        return model_fail(c, "parameter p_init = %g bar must be > p_pre = %g bar (the "
                          "accumulator starts charged): raise p_init or lower p_pre",
                          V(p_init), V(p_pre));
    V(V) = initial_volume(c);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double v = V(V);
    if (!(v > 0.0))
        return model_fail(c, "accumulator emptied at t = %.17g s (fluid volume V = %g l): the "
                          "flow drawn exceeds its charge; draw less or charge it higher (p_init)",
                          TIME, v);
    if (!(v < V(V0)))
        return model_fail(c, "gas compressed to nothing at t = %.17g s (fluid volume V = %g l, "
                          "V0 = %g l): the flow pushed in exceeds the gas volume; push in less "
                          "or give it more gas (V0)", TIME, v, V(V0));
    V(der_V) = -V(Q) / 60.0;
    if (outputs) V(p) = V(p_init) * pow((V(V0) - initial_volume(c)) / (V(V0) - v), V(n));
    return fmi2OK;
}

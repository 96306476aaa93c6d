/*
 * Power-law damper with direct feedthrough (fmu_surrogate/benchmarks/power_damper.py):
 *   F = c sign(v) |v|^(4/3)
 * No state: a co-simulation step only advances time (MODEL_DO_STEP); power_damper_cvode
 * integrates a dummy state with CVODE all the same (cvode_runtime.c), as OpenModelica's FMUs do.
 * power_damper_stepped (MODEL_OUTPUTS_IN_STEP) computes its outputs at initialisation and in
 * doStep only, as much generated code does: F is the law of the velocity the last step held (at
 * the start, the velocity set at initialisation), and setting v changes F at the next step.
 */
#include <math.h>

#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(c) >= 0.0)) return model_fail(c, "parameter c = %g must be >= 0", V(c));
#ifdef MODEL_OUTPUTS_IN_STEP
    c->held_v = V(v);
#endif
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
#ifdef MODEL_OUTPUTS_IN_STEP
    double v = c->held_v;
#else
    double v = V(v);
#endif
    if (outputs) V(F) = V(c) * copysign(pow(fabs(v), 4.0 / 3.0), v);
    return fmi2OK;
}

#ifndef MODEL_CVODE /* power_damper_cvode: the step of cvode_runtime.c (a dummy state) */
fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
#ifdef MODEL_OUTPUTS_IN_STEP
    c->held_v = V(v);
#endif
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}
#endif

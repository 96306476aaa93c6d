/*
 * Mass coupled to a driven end, stepped as 20-sim's exported co-simulation FMUs step
 * (fmu_surrogate/benchmarks/vendor/stepping/coupled_mass_clock.py):
 *
 *   fk = cc (x1 - x2) + dc (v1 - v2)
 *   x2' = v2,   m2 v2' = fk - c2 x2 - d2 v2
 *
 * fk is the force of the coupling at the driven end, positive when it pushes the driven end
 * back (compressed): fk v1 is power into the component.
 *
 * The model's own stepper (MODEL_DO_STEP): classical Runge-Kutta 4 with the fixed step
 * solver_step, the inputs x1, v1 held over the communication step.  The FMU counts its own time
 * in `clock` (MODEL_EXTRA_DATA, saved with the FMU state), set to the start time at
 * initialisation and advanced by clock += solver_step only; fmi2DoStep steps while
 * clock < currentCommunicationPoint + communicationStepSize, without a tolerance.  On points
 * t_k = t_0 + k h the clock and the points part by round-off, and a communication step takes
 * two internal steps or none.  The outputs are computed at initialisation and at the end of
 * fmi2DoStep only (with the inputs the step held): inputs set afterwards change them at the
 * next step.  The state s = (x2, v2) is internal.
 */
#include "fmi2_framework.h"

static void derivatives(const ModelInstance *c, const double s[2], double ds[2])
{
    const double fk = V(cc) * (V(x1) - s[0]) + V(dc) * (V(v1) - s[1]);
    ds[0] = s[1];
    ds[1] = (fk - V(c2) * s[0] - V(d2) * s[1]) / V(m2);
}

static void set_outputs(ModelInstance *c)
{
    V(fk) = V(cc) * (V(x1) - c->d.s[0]) + V(dc) * (V(v1) - c->d.s[1]);
    V(x2) = c->d.s[0];
    V(v2) = c->d.s[1];
}

fmi2Status model_initialize(ModelInstance *c)
{
    static const char *const nonnegative[] = {"c2", "d2", "cc", "dc"};
    const double value[] = {V(c2), V(d2), V(cc), V(dc)};
    int k;
    if (!(V(m2) > 0.0)) return model_fail(c, "parameter m2 = %g must be > 0", V(m2));
    for (k = 0; k < 4; k++)
        if (!(value[k] >= 0.0))
            return model_fail(c, "parameter %s = %g must be >= 0", nonnegative[k], value[k]);
    if (!(V(solver_step) > 0.0))
        return model_fail(c, "parameter solver_step = %g must be > 0", V(solver_step));
    c->d.clock = c->d.start_time;
    c->d.s[0] = 0.0;
    c->d.s[1] = 0.0;
    set_outputs(c);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    (void)c; /* the outputs are those of initialisation or of the last fmi2DoStep */
    (void)outputs;
    return fmi2OK;
}

fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
    const double h = V(solver_step);
    double *x = c->d.s, xs[2], k1[2], k2[2], k3[2], k4[2];
    int i;
    if (!(c->d.clock + h > c->d.clock))
        return model_fail(c, "solver_step = %g does not advance the clock %.17g", h, c->d.clock);
    while (c->d.clock < t0 + H) {
        derivatives(c, x, k1);
        for (i = 0; i < 2; i++) xs[i] = x[i] + 0.5 * h * k1[i];
        derivatives(c, xs, k2);
        for (i = 0; i < 2; i++) xs[i] = x[i] + 0.5 * h * k2[i];
        derivatives(c, xs, k3);
        for (i = 0; i < 2; i++) xs[i] = x[i] + h * k3[i];
        derivatives(c, xs, k4);
        for (i = 0; i < 2; i++) x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        c->d.clock += h;
    }
    set_outputs(c);
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}

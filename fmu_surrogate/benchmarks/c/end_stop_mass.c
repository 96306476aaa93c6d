/*
 * Mass on a spring and a damper in a housing with end stops
 * (fmu_surrogate/benchmarks/vendor/free_mass.py, end_stop_mass):
 *
 *   s' = v,   m v' = F - k s - c v + f_stop(s, v)
 *
 * f_stop is Modelica's Translational.Components.ElastoGap at each stop: beyond s_max the
 * contact spring f_c = kc (s - s_max) and the contact damper f_d = dc v, limited to
 * |f_d| <= f_c, push the mass back with f_c + f_d (never pulling it in); below s_min the same
 * mirrored.  Force in; velocity (the power port) and position (a measured output) out, both
 * states.  Co-simulation only, the position x and the momentum p = m v internal.
 *
 * The model's own stepper (MODEL_DO_STEP): the classical Runge-Kutta 4 in n = ceil(H / max_step)
 * equal substeps per communication step H, the force held.  The contact is not located: a
 * substep that crosses a stop integrates across the kink of the force law, as vendors'
 * fixed-step solvers do.  The outputs are computed from the state when they are read.
 */
#include <math.h>

#include "fmi2_framework.h"

/* Force of the stops on the mass along s (N). */
static double stop_force(const ModelInstance *c, double x, double vel)
{
    double fc, fd;
    if (x > V(s_max)) {
        fc = V(kc) * (x - V(s_max));
        fd = V(dc) * vel;
        fd = fd > fc ? fc : (fd < -fc ? -fc : fd);
        return -(fc + fd);
    }
    if (x < V(s_min)) {
        fc = V(kc) * (V(s_min) - x);
        fd = -V(dc) * vel;
        fd = fd > fc ? fc : (fd < -fc ? -fc : fd);
        return fc + fd;
    }
    return 0.0;
}

/* (x', p') at the state X = (x, p) with the held force. */
static void derivatives(const ModelInstance *c, const double X[2], double dX[2])
{
    const double vel = X[1] / V(m);
    dX[0] = vel;
    dX[1] = V(F) - V(k) * X[0] - V(c) * vel + stop_force(c, X[0], vel);
}

fmi2Status model_initialize(ModelInstance *c)
{
    static const char *const nonnegative[] = {"k", "c", "kc", "dc"};
    const double value[] = {V(k), V(c), V(kc), V(dc)};
    int j;
    if (!(V(m) > 0.0)) return model_fail(c, "parameter m = %g must be > 0", V(m));
    for (j = 0; j < 4; j++)
        if (!(value[j] >= 0.0))
            return model_fail(c, "parameter %s = %g must be >= 0", nonnegative[j], value[j]);
    if (!(V(s_max) > 0.0)) return model_fail(c, "parameter s_max = %g must be > 0", V(s_max));
    if (!(V(s_min) < 0.0)) return model_fail(c, "parameter s_min = %g must be < 0", V(s_min));
    if (!(V(max_step) > 0.0))
        return model_fail(c, "parameter max_step = %g must be > 0", V(max_step));
    V(x) = V(s0);
    V(p) = V(m) * V(v0);
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double X[2] = {V(x), V(p)};
    double dX[2];
    derivatives(c, X, dX);
    V(der_x) = dX[0];
    V(der_p) = dX[1];
    if (outputs) {
        V(v) = V(p) / V(m);
        V(s) = V(x);
    }
    return fmi2OK;
}

fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
    /* equal substeps of at most max_step (less 1e-9 of one: round-off of H / max_step) */
    const double ratio = H / V(max_step);
    const long n = ratio > 1.0 ? (long)ceil(ratio - 1e-9) : 1;
    const double h = H / (double)n;
    double X[2] = {V(x), V(p)}, Xs[2], k1[2], k2[2], k3[2], k4[2];
    long step;
    int i;
    if (!(ratio < 1e9))
        return model_fail(c, "communication step %g needs more than 1e9 substeps of max_step = %g",
                          H, V(max_step));
    for (step = 0; step < n; step++) {
        derivatives(c, X, k1);
        for (i = 0; i < 2; i++) Xs[i] = X[i] + 0.5 * h * k1[i];
        derivatives(c, Xs, k2);
        for (i = 0; i < 2; i++) Xs[i] = X[i] + 0.5 * h * k2[i];
        derivatives(c, Xs, k3);
        for (i = 0; i < 2; i++) Xs[i] = X[i] + h * k3[i];
        derivatives(c, Xs, k4);
        for (i = 0; i < 2; i++) X[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
    V(x) = X[0];
    V(p) = X[1];
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}

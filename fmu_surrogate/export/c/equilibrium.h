/*
 * The start at an equilibrium (SUR_EQUILIBRIUM, PortedSystem(..., initial="equilibrium"),
 * fmu_surrogate.ph.simulation.equilibrium), shared by surrogate_linear.c and
 * surrogate_nonlinear.c.
 *
 * Like a vendor's model initialised in steady state, the FMU starts at the equilibrium of the
 * inputs it is given at its start, 0 = (J - R(x)) z(x) + (G - P) u with u = TU u_ext + CU (the
 * sources' parameters included).  model_initialize computes it whenever the framework brings
 * the variables up to date in initialisation mode, last in fmi2ExitInitializationMode
 * (fmi3ExitInitializationMode): so the state is the equilibrium of the inputs set before the
 * FMU leaves initialisation (in the instantiated state or in initialisation mode), and a value
 * read in initialisation mode is that of the inputs set so far.  H at the start (sur_h0, the
 * baseline of energy_residual) is that of the equilibrium.  x_start is Newton's starting point.
 *
 * A linear core (surrogate_linear.c) solves (J - R) Q x = -(G - P) u once: LU with partial
 * pivoting where the condition number |M| |M^-1| in the max-norm is below 1/EQ_RCOND, else the
 * least-squares state of least norm (one-sided Jacobi SVD, singular values <= EQ_RCOND times the
 * largest dropped), as ph's equilibrium solves it (newton._solve).  A nonlinear core
 * (surrogate_nonlinear.c) runs Newton's method on the flow from x_start with the analytic
 * Jacobian (T - dF/dz) dz/dx, its steps as those of a time step (newton_factor: LU or the
 * pseudo-inverse), until a correction is at most EQ_TOL (1 + |x|) in the max-norm, at most
 * EQ_MAX_ITER iterations; ph's Newton takes the same steps with central differences.
 *
 * Then the flow must vanish to EQ_FLOW_RTOL of its terms' magnitudes, |T| |z| + |B| |u| +
 * |R_nl(z) z| (the largest row), beyond what a state error at Newton's tolerance leaves of it
 * (|A| EQ_TOL (1 + |x|) by rows, A the solve's matrix or Newton's last Jacobian; zero for a
 * Jacobian that is zero, SUR_EXPLICIT): where it does not (inputs that drive a mode without losses,
 * a constant force on a free mass: a singular solve's least-squares state, or Newton stalled),
 * ph raises ConvergenceError, and the FMU fails initialisation (fmi2Error, the reason logged,
 * the instance in the error state) rather than start from a state that is no equilibrium.
 *
 * Include after fmi2_framework.h, dense.h, surrogate_data.h and wiring.h.
 */
#ifndef FMU_SURROGATE_EQUILIBRIUM_H
#define FMU_SURROGATE_EQUILIBRIUM_H

#include <stdio.h>

/* fmu_surrogate.ph.simulation.equilibrium: MAX_ITER, the tol of equilibrium(), FLOW_RTOL;
   newton.RCOND */
#define EQ_MAX_ITER 50
#define EQ_TOL 1e-12
#define EQ_FLOW_RTOL 1e-9
#define EQ_RCOND 1e-9

/* Whether the flow f (NX) vanishes to EQ_FLOW_RTOL of the largest row of terms (NX: each row's
   sum of its terms' magnitudes) beyond floor (NX: what a state error at Newton's tolerance
   leaves of each row). */
static int eq_vanishes(const double *f, const double *terms, const double *floor)
{
    double big = 0.0;
    int i;
    for (i = 0; i < NX; i++)
        if (terms[i] > big) big = terms[i];
    for (i = 0; i < NX; i++)
        if (!(fabs(f[i]) <= EQ_FLOW_RTOL * (big + 1e-300) + floor[i])) return 0;
    return 1;
}

/* floor (NX) = the row sums of |A| (NX x NX) times EQ_TOL (1 + |x|): the flow a state error at
   Newton's tolerance leaves, by which the check also accepts a rest under zero inputs (where
   every term is as small as the flow). */
static void eq_floor(const double *A, const double *x, double *floor)
{
    double scale = 0.0;
    int i, j;
    for (i = 0; i < NX; i++)
        if (!(fabs(x[i]) <= scale)) scale = fabs(x[i]);
    scale = EQ_TOL * (1.0 + scale);
    for (i = 0; i < NX; i++) {
        double r = 0.0;
        for (j = 0; j < NX; j++) r += fabs(A[i * NX + j]);
        floor[i] = r * scale;
    }
}

/* The failure: the inputs, the reason and what to do (returns fmi2Error). */
static fmi2Status no_equilibrium(ModelInstance *c, const char *why, double resid, double scale)
{
    char ins[512];
    size_t k = 0;
    int i;
    ins[0] = '\0';
    for (i = 0; i < NUE; i++) {
        const int w = snprintf(ins + k, sizeof ins - k, "%s%s = %.17g", i ? ", " : "",
                               SUR_INPUT_NAMES[i], c->d.r[SUR_VR_U0 + i]);
        if (w < 0 || (size_t)w >= sizeof ins - k) break;
        k += (size_t)w;
    }
    return model_fail(c, "no equilibrium for the inputs %s at the start (%s; largest flow %.3g, "
                         "its terms up to %.3g): they may drive a mode without losses (a "
                         "constant force on a free mass); export the surrogate with "
                         "initial='state' to start it from x_start",
                      NUE ? ins : "(none)", why, resid, scale);
}

/* The largest entry of the NX values v. */
static double eq_amax(const double *v)
{
    double m = 0.0;
    int i;
    for (i = 0; i < NX; i++)
        if (!(fabs(v[i]) <= m)) m = fabs(v[i]);
    return m;
}

/* The check after the solve: ok, or no_equilibrium with the flow f and the terms. */
static fmi2Status eq_checked(ModelInstance *c, const double *f, const double *terms,
                             const double *floor, const char *why)
{
    if (eq_vanishes(f, terms, floor)) return fmi2OK;
    return no_equilibrium(c, why, eq_amax(f), eq_amax(terms));
}

#endif /* FMU_SURROGATE_EQUILIBRIUM_H */

/*
 * Exported nonlinear port-Hamiltonian surrogate (fmu_surrogate.export):
 *
 *   E x' = T z(x) + B u,   y = BO' z(x) + D u,   T = J - R,   E' z = grad H
 *
 * (B = G - P, BO = G + P, D = S - N with the feedthrough; dissipated power [z; u]'W[z; u] =
 * z'Rz + 2 z'Pu + u'Su) on the pH ports (u, y), wired to the FMU's variables by wiring.h,
 * with z(x), dz/dx and H(x) from fmu_surrogate.export.expressions (eff_z, eff_dz, eff_H in
 * surrogate_data.h).  Co-simulation uses the scheme of fmu_surrogate.ph.simulate with the input
 * held over the communication step (hold="zoh"): average vector field with SUR_NQ-point
 * Gauss-Legendre quadrature (implicit midpoint for SUR_NQ = 1),
 *
 *   E (x1 - x0) = h [T zbar + B u],   zbar = sum_q w_q z(x0 + s_q (x1 - x0)),
 *
 * solved by Newton's method with the analytic Jacobian (fresh for the first iteration and, unless
 * its correction was below CHORD, the second; then kept), the same predictor (quadratic
 * extrapolation), stopping rules (STALL below; a first correction whose error, bounded with the
 * last step's Jacobian, is below ACCEPT TOL ends the step) and minimum-norm steps on a singular
 * matrix, in SUR_STEP-sized sub-steps (one per communication step when SUR_STEP = 0).
 * Algebraic states (zero columns of E, index 1) are in the same Newton system and are made
 * consistent with the input at the start and after every step.  The energy terms are the
 * scheme's own: dissipated += h zbar' R zbar, supplied += h (B' zbar)' u.
 * Model exchange: the algebraic states are solved inside the derivative call; the continuous
 * states are the differential states and the two energy integrals.
 *
 * With SUR_NL (a NonlinearPH) the dissipation has a state-dependent part R_nl(z) (dis_f, dis_df,
 * dis_rate in surrogate_data.h): x' = T z - R_nl(z) z + B u with T = J - R0; the step adds
 * h R_nl(zbar) zbar to the residual and h dF/dz(zbar) dzbar/dx to its Jacobian, and the
 * dissipated power z'R_nl(z)z to [z; u]'W[z; u], as fmu_surrogate.ph.simulate does.
 * With SUR_PNL the feedthrough has a nonlinear part S_nl(u) (pdis_fr, pdis_df: the same
 * programs with the port inputs as argument): y = BO' z + D u + S_nl(u) u, and u'S_nl(u)u joins
 * the dissipated power.  A surrogate without states (NX = 0) is that static map alone.
 * With SUR_EXPLICIT (E = I, T = 0, no SUR_NL: a lossless core of integrators, a spring) the
 * step is x1 = x0 + h B u, no Newton iteration.
 * With SUR_DELAYED the co-simulation outputs see the inputs the last step held (wiring.h); with
 * SUR_LATE they are those of the state and inputs the last step started from (wiring.h); with
 * SUR_LAW_K the outputs add a static law of the external inputs they see (wiring.h); with
 * SUR_CDX_ON (E = I) they add SUR_CDX x', the flow at the state and the inputs they see.
 * With SUR_EQUILIBRIUM the state at the start is the equilibrium of the inputs, by Newton's
 * method on the flow from x_start (equilibrium.h).
 */
#include <float.h>

#include "fmi2_framework.h"
#include "dense.h"
#include "surrogate_data.h"
#include "wiring.h"

/* The stopping rules of fmu_surrogate.ph.newton (TOL, FLOOR_, RCOND, CHORD as there).  STALL is
   10x looser than the Python 1e-8: an identified kernel expansion is ill-conditioned (weights of
   1e4 ... 1e7 cancelling to efforts of order 1), its value carries round-off of ~4e-8 relative
   in any summation order (fmu_surrogate.export.expressions), and a residual stalled at that level
   is converged; well-conditioned steps stop on the step size long before. */
#define TOL 1e-12
#define FLOOR_ 1e-11
#define STALL 1e-7
#define RCOND 1e-9
#define CHORD 1e-4
#define ACCEPT 1e-3
/* bytes of a state vector (its arrays hold NXA >= 1 elements: C has no empty arrays) */
#define XBYTES (sizeof(double) * (size_t)NX)

static double amax(const double *v, int n)
{
    double m = 0.0;
    int i;
    for (i = 0; i < n; i++)
        if (!(fabs(v[i]) <= m)) m = fabs(v[i]);
    return m;
}

/*
 * x = pinv(A) b with singular values <= RCOND * max treated as zero (numpy.linalg.lstsq); on a
 * regular, well-conditioned A this is the solution of A x = b.  One-sided Jacobi SVD, A is n x n:
 * svd_factor writes U s, V and s into W (2 n^2 + n doubles) and returns the largest singular
 * value, svd_apply solves with them (a chord step of Newton's method reuses the factors).
 */
static double svd_factor(int n, const double *A, double *W)
{
    if (n == 1) { /* one state: the singular value is |A|, the pseudo-inverse 1/A or 0 */
        W[0] = A[0];
        return fabs(A[0]);
    }
    memcpy(W, A, sizeof(double) * (size_t)(n * n));
    return dn_jacobi_columns(n, W, W + n * n, W + 2 * n * n);
}

static void svd_apply(int n, const double *W, double smax, const double *b, double *x)
{
    const double *U = W, *V = W + n * n, *s = W + 2 * n * n;
    int i, j;
    if (n == 1) {
        x[0] = W[0] != 0.0 ? b[0] / W[0] : 0.0;
        return;
    }
    for (i = 0; i < n; i++) x[i] = 0.0;
    for (j = 0; j < n; j++) {
        double c = 0.0;
        if (!(s[j] > RCOND * smax) || s[j] == 0.0) continue;
        for (i = 0; i < n; i++) c += U[i * n + j] * b[i]; /* (s_j u_j)' b */
        c /= s[j] * s[j];
        for (i = 0; i < n; i++) x[i] += c * V[i * n + j];
    }
}

#if !SUR_EXPLICIT
/* The Newton matrix A (NX x NX) factored into W: LU with partial pivoting (c->sur_piv) when its
   condition number |A| |A^-1| in the max-norm is below 1/RCOND, else its SVD for the
   pseudo-inverse (fmu_surrogate.ph.simulation.newton._solve decides alike).  Returns |A^-1| in
   the max-norm for the LU (its inverse is computed in W + NX^2, n^3 operations: for three
   states a hundredth of the Jacobi SVD's), 0 for the SVD, with its largest singular value in
   *smax.  One state: W = A, and 1 for a != 0 (one_correction multiplies by |a| instead of
   dividing), 0 for a = 0. */
static double newton_factor(ModelInstance *c, const double *A, double *W, double *smax)
{
    double *inv = W + NX * NX, anorm = 0.0, ainv = 0.0;
    int i, j;
    if (NX == 1) {
        W[0] = A[0];
        *smax = fabs(A[0]);
        return A[0] != 0.0 ? 1.0 : 0.0;
    }
    memcpy(W, A, sizeof(double) * (size_t)(NX * NX));
    if (!dn_lu(NX, W, c->sur_piv)) {
        for (i = 0; i < NX * NX; i++) inv[i] = 0.0;
        for (i = 0; i < NX; i++) inv[i * NX + i] = 1.0;
        dn_lu_solve(NX, W, c->sur_piv, inv, NX);
        for (i = 0; i < NX; i++) {
            double ra = 0.0, ri = 0.0;
            for (j = 0; j < NX; j++) {
                ra += fabs(A[i * NX + j]);
                ri += fabs(inv[i * NX + j]);
            }
            if (ra > anorm) anorm = ra;
            if (ri > ainv) ainv = ri;
        }
        if (anorm * ainv < 1.0 / RCOND) return ainv;
    }
    *smax = svd_factor(NX, A, W);
    return 0.0;
}

/* x = A^-1 b (pseudo-inverse for the SVD) with the factors of newton_factor (ainv > 0: LU). */
static void newton_apply(const ModelInstance *c, const double *W, double ainv, double smax,
                         const double *b, double *x)
{
    if (NX > 1 && ainv > 0.0) {
        memcpy(x, b, XBYTES);
        dn_lu_solve(NX, W, c->sur_piv, x, 1);
    } else {
        svd_apply(NX, W, smax, b, x);
    }
}

/* Whether the first correction of a step (largest entry step, the new state's scale 1 + |x1|)
   leaves an error below ACCEPT TOL scale, estimated from the change of the Jacobian since the
   last step: |A^-1| L/2 |dx|^2 with L = |A - Jp| / delta, |A^-1| = ainv in the max-norm (0: none
   accepted) (fmu_surrogate.ph.simulation.newton._one_correction, which explains it). */
static int one_correction(const ModelInstance *c, const double *A, double ainv,
                          const double *x0, const double *xk, double step, double scale)
{
    double delta = 0.0, norm = 0.0;
    int i, j;
    for (i = 0; i < NX; i++) {
        const double a = fabs(x0[i] - c->d.sur_x0prev[i]), b = fabs(xk[i] - c->d.sur_xprev[i]);
        if (a > delta) delta = a;
        if (b > delta) delta = b;
    }
    if (!(0.0 < step && step <= delta && step <= CHORD * scale) || ainv == 0.0) return 0;
    for (i = 0; i < NX; i++) {
        double r = 0.0;
        for (j = 0; j < NX; j++) r += fabs(A[i * NX + j] - c->d.sur_jprev[i * NX + j]);
        if (r > norm) norm = r;
    }
    /* (multiplied out: one state divides nowhere in the step) */
    if (NX == 1) return 0.5 * norm * step * step <= ACCEPT * TOL * scale * fabs(A[0]) * delta;
    return 0.5 * ainv * norm * step * step <= ACCEPT * TOL * scale * delta;
}
#endif

#if SUR_NA > 0
static int svd_solve(int n, const double *A, const double *b, double *x)
{
    double small[2 * 8 * 8 + 8]; /* small systems: no allocation in the Newton loop */
    double *W = n <= 8 ? small : (double *)malloc(sizeof(double) * (size_t)(2 * n * n + n));
    if (!W) return 1;
    svd_apply(n, W, svd_factor(n, A, W), b, x);
    if (W != small) free(W);
    return 0;
}
#endif

/* Numerical rank as numpy.linalg.matrix_rank (tolerance smax * n * eps); k x k matrix. */
static int rank_of(int k, const double *A)
{
    double *U = (double *)malloc(sizeof(double) * (size_t)(k * k)), smax, s[SUR_NA_ALLOC];
    int j, r = 0;
    if (!U) return -1;
    memcpy(U, A, sizeof(double) * (size_t)(k * k));
    smax = dn_jacobi_columns(k, U, NULL, s);
    for (j = 0; j < k; j++)
        if (s[j] > smax * k * DBL_EPSILON) r++;
    free(U);
    return r;
}

static const double *xs(const ModelInstance *c) { return &c->d.r[SUR_VR_X0]; }

/* B u (length NX) */
static void bu(const double *u, double *out) { mv_SUR_B(u, out); }

/*
 * Memos of the functions that a co-simulation step evaluates again with the same argument: the
 * framework evaluates the outputs after fmi2DoStep and again after the next input is set (the
 * same state x), and the step's energy terms and the evaluation after it see the same held input
 * u.  Each memo is keyed on the exact argument (bitwise), so a hit returns what the call would.
 */
static int same(const double *a, const double *b, int n)
{
    return memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

/* z = z(x) */
static void effort(ModelInstance *c, const double *x, double *z)
{
    if (!(c->sur_memo & 1) || !same(x, c->sur_mx, NX)) {
        memcpy(c->sur_mx, x, XBYTES);
        eff_z(x, c->sur_mz);
        c->sur_memo = 1; /* a new x: H(x) is not known yet */
    }
    memcpy(z, c->sur_mz, XBYTES);
}

#if SUR_HAS_H
/* H(x) */
static double hamiltonian(ModelInstance *c, const double *x)
{
    double z[NXA];
    effort(c, x, z); /* keys the memo on x */
    if (!(c->sur_memo & 2)) {
        c->sur_mh = eff_H(x);
        c->sur_memo |= 2;
    }
    return c->sur_mh;
}
#endif

#if SUR_NL
/* z'R_nl(z)z */
static double dissipation_rate(ModelInstance *c, const double *z)
{
    if (!(c->sur_memo_z) || !same(z, c->sur_mrz, NX)) {
        memcpy(c->sur_mrz, z, XBYTES);
        c->sur_mr = dis_rate(z);
        c->sur_memo_z = 1;
    }
    return c->sur_mr;
}
#endif

#if SUR_PNL
/* S_nl(u) u and u'S_nl(u)u */
static double port_dissipation(ModelInstance *c, const double *u, double *fu)
{
    if (!(c->sur_memo_u) || !same(u, c->sur_mu, NU)) {
        double fr[NUA + 1]; /* S_nl(u) u and the rate from one evaluation of their terms */
        memcpy(c->sur_mu, u, sizeof(double) * (size_t)NU);
        pdis_fr(u, fr);
        memcpy(c->sur_mfu, fr, sizeof(double) * (size_t)NU);
        c->sur_mur = fr[NU];
        c->sur_memo_u = 1;
    }
    memcpy(fu, c->sur_mfu, sizeof(double) * (size_t)NU);
    return c->sur_mur;
}
#endif

/* pH port outputs y = BO' z + D u, dissipated power [z; u]'W[z; u] and supplied power y'u. */
static void port_power(ModelInstance *c, const double *z, const double *u, double *y,
                       double *diss, double *supp)
{
    double rz[NXA], du[NUA], d = 0.0, s = 0.0;
    int i, j;
    mv_SUR_R(z, rz);
    mv_SUR_D(u, du);
#if SUR_HAS_P
    {
        double pu[NXA];
        mv_SUR_P(u, pu);
        for (i = 0; i < NX; i++) d += z[i] * (rz[i] + 2.0 * pu[i]);
    }
#else
    for (i = 0; i < NX; i++) d += z[i] * rz[i];
#endif
#if SUR_NL
    d += dissipation_rate(c, z);
#endif
#if SUR_PNL
    {   /* the nonlinear feedthrough: y += S_nl(u) u, dissipated power u'S_nl(u)u */
        double fu[NUA], rate = port_dissipation(c, u, fu);
        for (j = 0; j < NU; j++) du[j] += fu[j];
        d += rate;
    }
#else
    (void)c;
#endif
    mvta_SUR_BO(z, du); /* y = D u + BO' z */
#if SUR_HAS_S
    {
        double su[NUA];
        mv_SUR_S(u, su);
        for (j = 0; j < NU; j++) d += u[j] * su[j];
    }
#endif
    for (j = 0; j < NU; j++) {
        y[j] = du[j];
        s += du[j] * u[j];
    }
    *diss = d;
    *supp = s;
}

#if SUR_NA > 0
/* Jaa = (T dz/dx)[algebraic rows, algebraic columns] at x (SUR_NA x SUR_NA); Jz receives
   dz/dx (NX x NX). */
static void algebraic_jacobian(const double *x, double *Jz, double *Jaa)
{
    int i, j, k;
    eff_dz(x, Jz);
    for (i = 0; i < SUR_NA; i++)
        for (j = 0; j < SUR_NA; j++) {
            double acc = 0.0;
            for (k = 0; k < NX; k++)
                acc += SUR_T[SUR_ROWS_A[i] * NX + k] * Jz[k * NX + SUR_COLS_A[j]];
            Jaa[i * SUR_NA + j] = acc;
        }
}
#endif

/* Solve the algebraic rows for the algebraic states at input u (index 1); 0 on success. */
static int consistent(ModelInstance *c, double *x, const double *u)
{
#if SUR_NA > 0
    double z[NXA], tz[NXA], b[NXA], r[SUR_NA], dx[SUR_NA], best_x[NXA];
    double *Jz = c->sur_jz, Jaa[SUR_NA * SUR_NA];
    double best = INFINITY, prev = INFINITY;
    int it, i;
    memcpy(best_x, x, XBYTES);
    bu(u, b);
    for (it = 0; it < SUR_MAX_NEWTON; it++) {
        double rn, scale;
        eff_z(x, z);
        dn_matvec(NX, NX, NX, SUR_T, z, tz);
        for (i = 0; i < SUR_NA; i++) r[i] = tz[SUR_ROWS_A[i]] + b[SUR_ROWS_A[i]];
        rn = amax(r, SUR_NA);
        if (rn < best) {
            best = rn;
            memcpy(best_x, x, XBYTES);
        }
        scale = NU > 0 ? amax(tz, NX) + amax(b, NX) : 1.0;
        if (it > 1 && rn > 0.5 * prev && best <= STALL * (scale + 1e-300)) {
            memcpy(x, best_x, XBYTES);
            return 0;
        }
        prev = rn;
        algebraic_jacobian(x, Jz, Jaa);
        for (i = 0; i < SUR_NA; i++) r[i] = -r[i];
        if (svd_solve(SUR_NA, Jaa, r, dx)) return 1;
        for (i = 0; i < SUR_NA; i++) x[SUR_COLS_A[i]] += dx[i];
        if (amax(dx, SUR_NA) <= TOL * (1.0 + amax(x, NX))) return 0;
    }
    return 1;
#else
    (void)c; (void)x; (void)u;
    return 0;
#endif
}

/* The flow f = T z + B u - R_nl(z) z at the effort z and the port inputs u (E x' = f). */
static void core_flow(const double *z, const double *u, double *f)
{
    double b[NXA];
    int i;
    mv_SUR_T(z, f);
    bu(u, b);
    for (i = 0; i < NX; i++) f[i] += b[i];
#if SUR_NL
    {
        double fn[NXA];
        dis_f(z, fn);
        for (i = 0; i < NX; i++) f[i] -= fn[i];
    }
#endif
}

#ifdef SUR_EQUILIBRIUM
#include "equilibrium.h"

/* x (from x_start) = the equilibrium of the port inputs u: Newton's method on the flow
   (equilibrium.h), its steps as a time step's (newton_factor, newton_apply) with the Jacobian
   (T - dF/dz) dz/dx; then the check that the flow vanishes. */
static fmi2Status equilibrium_state(ModelInstance *c, double *x, const double *u)
{
    double z[NXA], f[NXA], terms[NXA], floor[NXA];
    int i, k;
#if !SUR_EXPLICIT
    double dx[NXA], smax = 0.0, ainv, step;
    double *Jac = c->sur_jac, *Jz = c->sur_jz;
    int it, j;
    for (it = 0; it < EQ_MAX_ITER; it++) {
        eff_z(x, z);
        core_flow(z, u, f);
        eff_dz(x, Jz);
#if SUR_NL
        dis_df(z, c->sur_jf);
#endif
        for (i = 0; i < NX; i++) {
            f[i] = -f[i];
            for (j = 0; j < NX; j++) {
                double acc = 0.0;
                for (k = 0; k < NX; k++) acc += SUR_T[i * NX + k] * Jz[k * NX + j];
#if SUR_NL
                for (k = 0; k < NX; k++) acc -= c->sur_jf[i * NX + k] * Jz[k * NX + j];
#endif
                Jac[i * NX + j] = acc;
            }
        }
        ainv = newton_factor(c, Jac, c->sur_svd, &smax);
        newton_apply(c, c->sur_svd, ainv, smax, f, dx);
        for (i = 0; i < NX; i++) x[i] += dx[i];
        step = amax(dx, NX);
        if (!isfinite(step)) it = EQ_MAX_ITER - 1; /* diverged: no equilibrium found */
        else if (step <= EQ_TOL * (1.0 + amax(x, NX))) break;
    }
#endif
    /* (SUR_EXPLICIT: the flow B u does not depend on the state, Newton's step is 0 from any
       start, as ph's equilibrium finds: only the check) */
    eff_z(x, z);
    core_flow(z, u, f);
    for (i = 0; i < NX; i++) {
        double mag = 0.0;
        for (k = 0; k < NX; k++) mag += fabs(SUR_T[i * NX + k]) * fabs(z[k]);
        for (k = 0; k < NU; k++) mag += fabs(SUR_B[i * SUR_BS + k]) * fabs(u[k]);
        terms[i] = mag;
    }
#if SUR_NL
    {
        double fn[NXA];
        dis_f(z, fn); /* the nonlinear dissipation's force, a term of its own */
        for (i = 0; i < NX; i++) terms[i] += fabs(fn[i]);
    }
#endif
#if SUR_EXPLICIT
    for (i = 0; i < NX; i++) floor[i] = 0.0; /* a Jacobian that is zero */
#else
    if (it == EQ_MAX_ITER)
        return no_equilibrium(c, "Newton from x_start did not converge in 50 iterations",
                              amax(f, NX), amax(terms, NX));
    eq_floor(c->sur_jac, x, floor); /* with Newton's last Jacobian */
#endif
    return eq_checked(c, f, terms, floor, "the flow does not vanish where Newton stopped");
}
#endif

fmi2Status model_initialize(ModelInstance *c)
{
    double *x = &c->d.r[SUR_VR_X0], u[NUA];
    int i;
    for (i = 0; i < NX; i++) x[i] = c->d.r[SUR_VR_XS0 + i]; /* x = x_start */
    port_inputs(c, u);
#ifdef SUR_EQUILIBRIUM
    if (NX > 0 && equilibrium_state(c, x, u) > fmi2Warning) return fmi2Error;
#endif
#if SUR_NA > 0
    {
        double *Jz = c->sur_jz, blk[SUR_NA * SUR_NA];
        algebraic_jacobian(x, Jz, blk);
        if (rank_of(SUR_NA, blk) < SUR_NA)
            return model_fail(c, "the algebraic equations cannot be solved for the algebraic "
                                 "states at the initial state (a DAE of index > 1, or a "
                                 "degenerate start); this FMU handles ODE and index-1 "
                                 "surrogates: start from another state");
    }
    if (consistent(c, x, u))
        return model_fail(c, "the algebraic equations have no solution near the initial state; "
                             "pass a consistent initial state");
#endif
    c->d.sur_started = 0;
    c->d.sur_h0 = SUR_HAS_H ? eff_H(x) : 0.0;
#ifdef SUR_DELAYED
    start_step_inputs(c);
#endif
#ifdef SUR_LATE
    c->d.sur_late = 0; /* the outputs of the current state and inputs until the first step */
#endif
#ifdef SUR_FIRST
    c->d.sur_first = 1; /* fixed outputs until the first step (wiring.h) */
#endif
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    double *x = &c->d.r[SUR_VR_X0], z[NXA], f[NXA], u[NUA];
    int i, j;
    port_inputs(c, u);
#if SUR_NA > 0
    if (c->type == fmi2ModelExchange && !(c->d.state & ST_INITIALIZATION) && consistent(c, x, u))
        return model_fail(c, "the algebraic equations have no solution at t = %g", c->d.time);
#endif
    effort(c, x, z);
    core_flow(z, u, f);
    /* E_dd x_d' = f_d (SUR_EINV: the inverse of E restricted to the differential rows/states) */
    for (i = 0; i < SUR_ND; i++) {
        double acc = 0.0;
        for (j = 0; j < SUR_ND; j++) acc += SUR_EINV[i * SUR_ND + j] * f[SUR_ROWS_D[j]];
        c->d.r[SUR_VR_DX0 + i] = acc;
    }
    {
        double y[NUA], d, s;
        port_power(c, z, u, y, &d, &s);
        if (outputs) {
            const double *ue = seen_inputs(c), *rate = f; /* x' = f (Cdx: E = I) */
            double uo[NUA], yo[NUA], d_o, s_o;
#ifdef SUR_CDX_ON
            double fo[NXA];
#endif
            if (ue != ues(c)) { /* delayed feedthrough (wiring.h): y of the inputs the step held */
                ports_of(c, ue, uo);
                port_power(c, z, uo, yo, &d_o, &s_o);
#ifdef SUR_CDX_ON
                core_flow(z, uo, fo); /* and x' (outputs that read it) */
                rate = fo;
#endif
            }
            external_outputs(c, ue != ues(c) ? yo : y, x, rate, ue);
#ifdef SUR_LATE
            show_late_outputs(c); /* after a step: those of its start (wiring.h) */
#endif
#ifdef SUR_FAST_D_ON
            show_fast_feedthrough(c); /* inputs set since the step held them (wiring.h) */
#endif
#ifdef SUR_FIRST
            show_first_outputs(c); /* before the first step: fixed values (wiring.h) */
#endif
        }
        V(der_energy_dissipated) = d;
        V(der_energy_supplied) = s;
#if SUR_HAS_SRC
        {
            double cv[NUA], p = 0.0;
            constant_inputs(c, cv);
            for (j = 0; j < NU; j++) p += cv[j] * y[j];
            V(der_energy_supplied_sources) = p;
        }
#endif
    }
#if SUR_HAS_H
    if (outputs) {
        V(H) = hamiltonian(c, x);
        V(energy_residual) = V(H) - c->d.sur_h0 + V(energy_dissipated) - V(energy_supplied);
    }
#endif
    return fmi2OK;
}

/* The path-averaged effort zb of the step from xk to xn (SUR_NQ-point Gauss-Legendre) and, when
   dzb is given, its derivative by xn (Jz: a workspace for dz/dx at a node). */
static void mean_effort(const double *xk, const double *xn, double *zb, double *dzb, double *Jz)
{
    double xi[NXA], zq[NXA];
    int q, i;
    for (i = 0; i < NX; i++) zb[i] = 0.0;
    if (dzb)
        for (i = 0; i < NX * NX; i++) dzb[i] = 0.0;
    for (q = 0; q < SUR_NQ; q++) {
        for (i = 0; i < NX; i++) xi[i] = xk[i] + SUR_NODES[q] * (xn[i] - xk[i]);
        eff_z(xi, zq);
        for (i = 0; i < NX; i++) zb[i] += SUR_WEIGHTS[q] * zq[i];
        if (dzb) {
            eff_dz(xi, Jz);
            for (i = 0; i < NX * NX; i++) dzb[i] += SUR_WEIGHTS[q] * SUR_NODES[q] * Jz[i];
        }
    }
}

/* Residual F, optionally the Jacobian, and the path-averaged effort zb of one step. */
static void residual(ModelInstance *c, const double *xk, const double *xn, const double *b_u,
                     double h, double *F, double *Jac, double *zb)
{
    double delta[NXA], tzb[NXA], ed[NXA];
    double *dzb = c->sur_dzb;
    int i, j, k;
    for (i = 0; i < NX; i++) delta[i] = xn[i] - xk[i];
    mean_effort(xk, xn, zb, Jac ? dzb : NULL, c->sur_jz);
    mv_SUR_T(zb, tzb);
    mv_SUR_E(delta, ed);
    for (i = 0; i < NX; i++) F[i] = ed[i] - h * (tzb[i] + b_u[i]);
#if SUR_NL
    dis_f(zb, tzb); /* the state-dependent dissipation at the step's mean effort */
    for (i = 0; i < NX; i++) F[i] = F[i] + h * tzb[i];
#endif
    if (Jac)
        for (i = 0; i < NX; i++)
            for (j = 0; j < NX; j++) {
                double acc = 0.0;
                for (k = 0; k < NX; k++) acc += SUR_T[i * NX + k] * dzb[k * NX + j];
                Jac[i * NX + j] = SUR_E[i * NX + j] - h * acc;
            }
#if SUR_NL
    if (Jac) {
        double *Jf = c->sur_jf;
        dis_df(zb, Jf);
        for (i = 0; i < NX; i++)
            for (j = 0; j < NX; j++) {
                double acc = 0.0;
                for (k = 0; k < NX; k++) acc += Jf[i * NX + k] * dzb[k * NX + j];
                Jac[i * NX + j] = Jac[i * NX + j] + h * acc;
            }
    }
#endif
}

/* The start of Newton's method: the state at t + h extrapolated from the last nodes, quadratic
   through three (linear with algebraic states, which jump with the input), linear through two
   after the first step, x before it (fmu_surrogate.ph.simulation.time_steps._predictor). */
static void predictor(const ModelInstance *c, const double *x2, double a, double *xn)
{
    const double b = c->d.sur_hprev, cc = c->d.sur_hprev2;
    double al = 0.0, be = 0.0;
    int i;
    if (c->d.sur_started == 1 || (SUR_NA > 0 && c->d.sur_started)) {
        al = a / b;
    } else if (c->d.sur_started == 2) {
        const double g = a * (a + b) / (b + cc);
        al = (a + g) / b;
        be = g / cc;
    }
    for (i = 0; i < NX; i++)
        xn[i] = x2[i] + al * (x2[i] - c->d.sur_xprev[i]) - be * (c->d.sur_xprev[i] - c->d.sur_xprev2[i]);
}

#if SUR_EXPLICIT
/* The new state xn and the step's mean effort zb from xk over h with B u = b held, when E = I,
   J - R = 0 and no state-dependent dissipation: x1 = x0 + h B u, nothing to solve (as in
   fmu_surrogate.ph.simulate).  Returns 1 (solved). */
static int solve_step(ModelInstance *c, const double *xk, const double *b, double h, double *xn,
                      double *zb, double *best)
{
    int i;
    (void)best;
    for (i = 0; i < NX; i++) xn[i] = xk[i] + h * b[i];
    mean_effort(xk, xn, zb, NULL, c->sur_jz);
    return 1;
}
#else
/* The new state xn and the step's mean effort zb from xk over h with B u = b held, by Newton's
   method as fmu_surrogate.ph.simulate runs it: a fresh Jacobian in the first iteration, and in
   the second unless the first correction was below CHORD; then kept (chord steps, its SVD
   reused); converged on a correction below TOL, or on a first one that one_correction accepts,
   with the mean effort moved to the new state to first order (the rest is O(TOL^2)), or on a
   residual stalled at round-off (STALL).  Returns 1 when solved, else 0 with the smallest
   residual in *best. */
static int solve_step(ModelInstance *c, const double *xk, const double *b, double h, double *xn,
                      double *zb, double *best)
{
    double F[NXA], dx[NXA], best_x[NXA], best_zb[NXA], ed[NXA], tz[NXA], x0[NXA];
    double *Jac = c->sur_jac, *W = c->sur_svd, prev = INFINITY, smax = 0.0, ainv = 0.0;
    int it, i, j, fresh = 1, known;
    if (NX == 0) return 1; /* a static map: nothing to solve */
    predictor(c, xk, h, xn);
    memcpy(x0, xn, XBYTES);
    memcpy(best_x, xn, XBYTES);
    memcpy(best_zb, xn, XBYTES);
    /* the last step's Jacobian bounds the error of a first correction (ODEs, the same h) */
    known = SUR_NA == 0 && c->d.sur_started && fabs(h - c->d.sur_hprev) <= 1e-9 * h;
    for (it = 1; it <= SUR_MAX_NEWTON; it++) {
        double fn, scale, step, xscale;
        int accept = 0;
        residual(c, xk, xn, b, h, F, fresh ? Jac : NULL, zb);
        fn = amax(F, NX);
        if (fn < *best) {
            *best = fn;
            memcpy(best_x, xn, XBYTES);
            memcpy(best_zb, zb, XBYTES);
        }
        if (it > 3) { /* the stall test (its scale is needed from the fourth iteration on) */
            for (i = 0; i < NX; i++) dx[i] = xn[i] - xk[i];
            mv_SUR_E(dx, ed);
            mv_SUR_T(zb, tz);
            scale = amax(ed, NX) + h * (NU > 0 ? amax(tz, NX) + amax(b, NX) : amax(tz, NX));
            if ((fn > 0.5 * prev || fn <= FLOOR_ * (scale + 1e-300)) &&
                *best <= STALL * (scale + 1e-300)) {
                memcpy(xn, best_x, XBYTES);
                memcpy(zb, best_zb, XBYTES);
                return 1;
            }
        }
        prev = fn;
        for (i = 0; i < NX; i++) F[i] = -F[i];
        if (fresh) ainv = newton_factor(c, Jac, W, &smax);
        newton_apply(c, W, ainv, smax, F, dx);
        for (i = 0; i < NX; i++) xn[i] += dx[i];
        step = amax(dx, NX);
        if (!isfinite(step)) return 0;
        xscale = 1.0 + amax(xn, NX);
        if (it == 1) { /* then this Jacobian is the last step's for the next */
            accept = known && one_correction(c, Jac, ainv, x0, xk, step, xscale);
            memcpy(c->d.sur_jprev, Jac, sizeof(double) * (size_t)(NX * NX));
            memcpy(c->d.sur_x0prev, x0, XBYTES);
        }
        if (step <= TOL * xscale || accept) {
            const double *dzb = c->sur_dzb; /* of the last fresh Jacobian */
            for (i = 0; i < NX; i++) {
                double acc = 0.0;
                for (j = 0; j < NX; j++) acc += dzb[i * NX + j] * dx[j];
                zb[i] += acc;
            }
            return 1;
        }
        /* a small first correction leaves the Jacobian good for the whole step (chord) */
        fresh = it < 2 && step > CHORD * xscale;
    }
    return 0;
}
#endif

/* One step of the scheme from xk (in place) over h with the input u held (solve_step), its
   energy terms, and the history of the predictor. */
static fmi2Status scheme_step(ModelInstance *c, double *xk, const double *u, double h, double t)
{
    double xn[NXA], zb[NXA], b[NXA], best = INFINITY;
    bu(u, b);
    if (!solve_step(c, xk, b, h, xn, zb, &best))
        return model_fail(c, "Newton did not converge in the step from t = %.17g over %g s "
                             "after %d iterations (residual %.2e); use a smaller step, or check "
                             "the input and the initial state", t, h, SUR_MAX_NEWTON, best);
    {
        double y[NUA], d, s;
        port_power(c, zb, u, y, &d, &s);
#if SUR_HAS_SRC
        {
            double cv[NUA], p = 0.0;
            int i;
            constant_inputs(c, cv);
            for (i = 0; i < NU; i++) p += cv[i] * y[i];
            V(energy_supplied_sources) += h * p;
        }
#endif
        V(energy_dissipated) += h * d;
        V(energy_supplied) += h * s;
    }
#if SUR_NA > 0
    if (consistent(c, xn, u))
        return model_fail(c, "the algebraic equations have no solution at t = %.17g", t + h);
#endif
    if (c->d.sur_started) { /* the last two steps before the new node, for the predictor */
        memcpy(c->d.sur_xprev2, c->d.sur_xprev, XBYTES);
        c->d.sur_hprev2 = c->d.sur_hprev;
    }
    memcpy(c->d.sur_xprev, xk, XBYTES);
    c->d.sur_hprev = h;
    c->d.sur_started = c->d.sur_started ? 2 : 1;
    memcpy(xk, xn, XBYTES);
    return fmi2OK;
}

fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
    double *x = &c->d.r[SUR_VR_X0], u[NUA];
    int k = 1, j;
#ifdef SUR_DELAYED
    hold_step_inputs(c);
#endif
#ifdef SUR_FIRST
    c->d.sur_first = 0; /* the model's outputs from the first step on (wiring.h) */
#endif
#ifdef SUR_LATE
    if (freeze_outputs(c) > fmi2Warning) return fmi2Error; /* late outputs (wiring.h) */
#endif
    port_inputs(c, u);
#if SUR_NA > 0
    if (consistent(c, x, u)) /* the input changed at t0: the algebraic states follow */
        return model_fail(c, "the algebraic equations have no solution at t = %.17g", t0);
#endif
    if (SUR_STEP > 0.0) k = (int)ceil(H / SUR_STEP * (1.0 - 1e-12));
    if (k < 1) k = 1;
    for (j = 0; j < k; j++) {
        const double t = t0 + H * j / k;
        if (scheme_step(c, x, u, (t0 + H * (j + 1) / k) - t, t) > fmi2Warning) return fmi2Error;
    }
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}

fmi2Status model_directional_derivative(ModelInstance *c, const fmi2ValueReference unknowns[],
                                        size_t n_unknown, const fmi2ValueReference knowns[],
                                        size_t n_known, const fmi2Real seed[],
                                        fmi2Real sensitivity[])
{
    /* ODE surrogates (E invertible): linearisation with the analytic Jacobian dz/dx; the
       external inputs act on the ports through SUR_TU */
    double dxs[NXA], due[FMU_ALLOC_SIZE(NUE)], dus[NUA], dz[NXA], tdz[NXA], z[NXA], f[NXA];
    double u[NUA], y[NUA], dy[NUA], dd, ds;
#ifdef SUR_LAW_K
    double dlaw[NYEA];
#endif
    double *Jz = c->sur_jz;
    const double *x = xs(c);
    size_t i, k;
    port_inputs(c, u);
    for (i = 0; i < NX; i++) dxs[i] = 0.0;
    for (i = 0; i < (size_t)NUE; i++) due[i] = 0.0;
    for (k = 0; k < n_known; k++) {
        const int kx = (int)knowns[k] - SUR_VR_X0, ku = (int)knowns[k] - SUR_VR_U0;
        if (kx >= 0 && kx < NX) dxs[kx] += seed[k];
        else if (ku >= 0 && ku < NUE) due[ku] += seed[k];
        else if (!(knowns[k] == VR_energy_dissipated || knowns[k] == VR_energy_supplied
#if SUR_HAS_SRC
                   || knowns[k] == VR_energy_supplied_sources
#endif
                   ))
            return model_fail(c, "value reference %u is not a state or an input (knowns must "
                                 "be states or inputs)", (unsigned)knowns[k]);
    }
    dn_matvec(NU, NUE, NUE, SUR_TU, due, dus);
    eff_z(x, z);
    eff_dz(x, Jz);
    dn_matvec(NX, NX, NX, Jz, dxs, dz);           /* dz = Jz dx */
    dn_matvec(NX, NX, NX, SUR_T, dz, tdz);
    {
        double b[NXA];
        bu(dus, b);
        for (i = 0; i < NX; i++) f[i] = tdz[i] + b[i]; /* d(T z + B u) */
    }
#if SUR_NL
    {   /* d(-F(z)) = -dF/dz dz */
        double dfz[NXA];
        dis_df(z, c->sur_jf);
        dn_matvec(NX, NX, NX, c->sur_jf, dz, dfz);
        for (i = 0; i < NX; i++) f[i] -= dfz[i];
    }
#endif
    port_power(c, z, u, y, &dd, &ds);
#ifdef SUR_LAW_K
    law_directional(ues(c), due, dlaw); /* the static law's part of d y_ext (wiring.h) */
#endif
    {
        /* dy = BO' dz + D du; d[z; u]'W[z; u] = 2 (Rz + Pu)'dz + 2 (P'z + Su)'du;
           d(y'u) = dy'u + y'du */
        double rz[NXA], pu[NXA], pz[NUA], su[NUA], ddu[NUA], dd_nl = 0.0;
        int j, l;
        dn_matvec(NX, NX, NX, SUR_R, z, rz);
        dn_matvec(NX, NU, SUR_BS, SUR_P, u, pu);
        dn_matvec(NU, NU, NU, SUR_S, u, su);
        dn_matvec(NU, NU, NU, SUR_D, dus, ddu);
#if SUR_PNL
        {   /* d(S_nl(u) u) = dF/du du; d(u'F(u)) = F(u)'du + u'(dF/du du) */
            double ju[NUA * NUA], fu[NUA], dfu[NUA];
            pdis_f(u, fu);
            pdis_df(u, ju);
            dn_matvec(NU, NU, NU, ju, dus, dfu);
            for (j = 0; j < NU; j++) {
                ddu[j] += dfu[j];
                dd_nl += fu[j] * dus[j] + u[j] * dfu[j];
            }
        }
#endif
        for (j = 0; j < NU; j++) {
            double acc = ddu[j], p = 0.0;
            for (l = 0; l < NX; l++) {
                acc += SUR_BO[l * SUR_BS + j] * dz[l];
                p += SUR_P[l * SUR_BS + j] * z[l];
            }
            dy[j] = acc;
            pz[j] = p;
        }
        dd = dd_nl;
        ds = 0.0;
        for (l = 0; l < NX; l++) dd += 2.0 * (rz[l] + pu[l]) * dz[l];
#if SUR_NL
        {   /* d(z'F(z)) = F(z)'dz + z'(dF/dz dz) (sur_jf holds dF/dz at z) */
            double fz[NXA], dfz[NXA];
            dis_f(z, fz);
            dn_matvec(NX, NX, NX, c->sur_jf, dz, dfz);
            for (l = 0; l < NX; l++) dd += fz[l] * dz[l] + z[l] * dfz[l];
        }
#endif
        for (j = 0; j < NU; j++) {
            dd += 2.0 * (pz[j] + su[j]) * dus[j];
            ds += dy[j] * u[j] + y[j] * dus[j];
        }
    }
    for (i = 0; i < n_unknown; i++) {
        const fmi2ValueReference un = unknowns[i];
        double acc = 0.0;
        int j, l;
        if ((int)un >= SUR_VR_DX0 && (int)un < SUR_VR_DX0 + SUR_ND) {
            const int r = (int)un - SUR_VR_DX0;
            for (j = 0; j < SUR_ND; j++) acc += SUR_EINV[r * SUR_ND + j] * f[SUR_ROWS_D[j]];
        } else if ((int)un >= SUR_VR_Y0 && (int)un < SUR_VR_Y0 + NYE) {
            const int r = (int)un - SUR_VR_Y0; /* Ty dy + Cx dx + Du du_ext (+ Cdx dx') */
            for (j = 0; j < NU; j++) acc += SUR_TY[r * NU + j] * dy[j];
            for (l = 0; l < NX; l++) acc += SUR_CX[r * NX + l] * dxs[l];
            for (j = 0; j < NUE; j++) acc += SUR_DU[r * NUE + j] * due[j];
#ifdef SUR_CDX_ON
            for (l = 0; l < NX; l++) acc += SUR_CDX[r * NX + l] * f[l]; /* f = d(x'), E = I */
#endif
#ifdef SUR_LAW_K
            acc += dlaw[r];
#endif
#if SUR_HAS_H
        } else if (un == VR_H) { /* dH = z' E dx (compatibility E' z = grad H) */
            for (l = 0; l < NX; l++)
                for (j = 0; j < NX; j++) acc += z[l] * SUR_E[l * NX + j] * dxs[j];
#endif
        } else if (un == VR_der_energy_dissipated) {
            acc = dd;
        } else if (un == VR_der_energy_supplied) {
            acc = ds;
#if SUR_HAS_SRC
        } else if (un == VR_der_energy_supplied_sources) { /* cu' dy */
            double cv[NUA];
            constant_inputs(c, cv);
            for (j = 0; j < NU; j++) acc += cv[j] * dy[j];
#endif
        } else {
            return model_fail(c, "value reference %u is not a state derivative, an output port, "
                                 "H or an energy derivative", (unsigned)un);
        }
        sensitivity[i] = acc;
    }
    return fmi2OK;
}

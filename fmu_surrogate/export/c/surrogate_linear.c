/*
 * Exported linear port-Hamiltonian surrogate (fmu_surrogate.export):
 *
 *   x' = A x + Bu u,   y = C x + D u,   H = 1/2 x' HM x
 *   (A = E^-1 (J - R) Q, Bu = E^-1 (G - P), C = (G + P)' Q, D = S - N, HM = Q' E; generated in
 *   surrogate_data.h) on the pH ports (u, y), wired to the FMU's variables (u_ext, y_ext) by
 *
 *   u = TU u_ext + CU   (sources: ports with a zero row of TU take their parameter's value)
 *   y_ext = TY y + CX x + DU u_ext + CY (+ a static law of u_ext, SUR_LAW_K: wiring.h)
 *           (+ CDX x', outputs that read the state's rate, SUR_CDX_ON: wiring.h)
 *
 * Co-simulation: the input is held over a communication step (zero-order hold), so the step is
 * exact: w = (x, u), w' = M w with M = [[A, Bu], [0, 0]], x(t0 + h) = [exp(M h) w(t0)]_x.  The
 * exponential and the energy integrals over a step (Van Loan, see dense.h)
 *   dissipated  int [z; u]'W[z; u] dt = w0' WR w0,    supplied  int y'u dt = w0' WS w0
 * are computed when the communication step size changes (by more than 1e-12 relative) and
 * cached otherwise, so
 * energy_residual = H(x) - H(x_init) + dissipated - supplied is the round-off of the exact step.
 * With a constant part cu of the port inputs (SUR_HAS_SRC), its share of the supplied energy,
 * int cu'y dt = cu' (C [psi w0]_x + h D u) with psi = int_0^h exp(M s) ds, is
 * energy_supplied_sources.
 * With SUR_DELAYED the co-simulation outputs see the inputs the last step held (wiring.h); with
 * SUR_LATE they are those of the state and inputs the last step started from (wiring.h); with
 * SUR_EQUILIBRIUM the state at the start is the equilibrium of the inputs, from one solve of
 * (J - R) Q x = -(G - P) u (equilibrium.h).
 * Model exchange: the derivatives from the same matrices; the two energy integrals are continuous
 * states as well (der(energy_dissipated) = [z; u]'W[z; u], der(energy_supplied) = y'u),
 * integrated by the importer with the inputs it applies to the model, so energy_residual there
 * measures the importer's integration error.
 */
#include "fmi2_framework.h"
#include "dense.h"
#include "surrogate_data.h"
#include "wiring.h"

#define SUR_H_RTOL 1e-12

static const double *xs(const ModelInstance *c) { return &c->d.r[SUR_VR_X0]; }

static double hamiltonian(const double *x) { return 0.5 * dn_quad(NX, SUR_HM, x); }

/* w' P w for w = (x, u). */
static double quad_w(const double *P, const double *x, const double *u)
{
    double w[FMU_ALLOC_SIZE(NW)];
    int i;
    for (i = 0; i < NX; i++) w[i] = x[i];
    for (i = 0; i < NU; i++) w[NX + i] = u[i];
    return dn_quad(NW, P, w);
}

#ifdef SUR_EQUILIBRIUM
#include "equilibrium.h"

/* x = M^-1 b for M = (J - R) Q (SUR_EQ_M), or the least-squares x of least norm where M is
   singular or its condition number in the max-norm reaches 1/EQ_RCOND (newton._solve); one
   state: b / M, or 0 for M = 0.  Returns 0, or 1 when out of memory. */
static int equilibrium_solve(const double *b, double *x)
{
    const size_t nn = (size_t)NX * (size_t)NX;
    double *W, *inv, *s, anorm = 0.0, ainv = 0.0, smax;
    int *piv, i, j;
    if (NX == 1) {
        x[0] = SUR_EQ_M[0] != 0.0 ? b[0] / SUR_EQ_M[0] : 0.0;
        return 0;
    }
    W = (double *)malloc(sizeof(double) * (2 * nn + NX));
    piv = (int *)malloc(sizeof(int) * NXA);
    if (!W || !piv) {
        free(W);
        free(piv);
        return 1;
    }
    inv = W + nn; /* then the SVD's V */
    s = W + 2 * nn;
    memcpy(W, SUR_EQ_M, sizeof(double) * nn);
    if (!dn_lu(NX, W, piv)) {
        for (i = 0; i < (int)nn; i++) inv[i] = 0.0;
        for (i = 0; i < NX; i++) inv[i * NX + i] = 1.0;
        dn_lu_solve(NX, W, piv, inv, NX);
        for (i = 0; i < NX; i++) {
            double ra = 0.0, ri = 0.0;
            for (j = 0; j < NX; j++) {
                ra += fabs(SUR_EQ_M[i * NX + j]);
                ri += fabs(inv[i * NX + j]);
            }
            if (ra > anorm) anorm = ra;
            if (ri > ainv) ainv = ri;
        }
        if (anorm * ainv < 1.0 / EQ_RCOND) {
            memcpy(x, b, sizeof(double) * NX);
            dn_lu_solve(NX, W, piv, x, 1);
            free(W);
            free(piv);
            return 0;
        }
    }
    /* M V = U diag(s) (the columns of W): x = V diag(1/s^2) (U diag(s))' b over s > rcond smax */
    memcpy(W, SUR_EQ_M, sizeof(double) * nn);
    smax = dn_jacobi_columns(NX, W, inv, s);
    for (i = 0; i < NX; i++) x[i] = 0.0;
    for (j = 0; j < NX; j++) {
        double cj = 0.0;
        if (!(s[j] > EQ_RCOND * smax) || s[j] == 0.0) continue;
        for (i = 0; i < NX; i++) cj += W[i * NX + j] * b[i];
        cj /= s[j] * s[j];
        for (i = 0; i < NX; i++) x[i] += cj * inv[i * NX + j];
    }
    free(W);
    free(piv);
    return 0;
}

/* x = the equilibrium of the current inputs, (J - R) Q x = -(G - P) u (equilibrium.h). */
static fmi2Status equilibrium_state(ModelInstance *c, double *x)
{
    double u[NUA], b[NXA], z[NXA], f[NXA], terms[NXA], floor[NXA];
    int i, j;
    port_inputs(c, u);
    for (i = 0; i < NX; i++) {
        double acc = 0.0;
        for (j = 0; j < NU; j++) acc += SUR_EQ_B[i * NU + j] * u[j];
        b[i] = -acc;
    }
    if (equilibrium_solve(b, x))
        return model_fail(c, "out of memory for the equilibrium at the start");
    dn_matvec(NX, NX, NX, SUR_EQ_Q, x, z); /* the check: the flow (J - R) z + (G - P) u */
    for (i = 0; i < NX; i++) {
        double acc = 0.0, mag = 0.0;
        for (j = 0; j < NX; j++) {
            acc += SUR_EQ_T[i * NX + j] * z[j];
            mag += fabs(SUR_EQ_T[i * NX + j]) * fabs(z[j]);
        }
        for (j = 0; j < NU; j++) {
            acc += SUR_EQ_B[i * NU + j] * u[j];
            mag += fabs(SUR_EQ_B[i * NU + j]) * fabs(u[j]);
        }
        f[i] = acc;
        terms[i] = mag;
    }
    eq_floor(SUR_EQ_M, x, floor);
    return eq_checked(c, f, terms, floor, "(J - R) Q is singular and the flow does not vanish "
                                          "at its least-squares state");
}
#endif

fmi2Status model_initialize(ModelInstance *c)
{
    int i;
    for (i = 0; i < NX; i++) c->d.r[SUR_VR_X0 + i] = c->d.r[SUR_VR_XS0 + i]; /* x = x_start */
#ifdef SUR_EQUILIBRIUM
    if (equilibrium_state(c, &c->d.r[SUR_VR_X0]) > fmi2Warning) return fmi2Error;
#endif
    c->d.sur_h0 = hamiltonian(xs(c));
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
    const double *x = xs(c);
    double *dx = &c->d.r[SUR_VR_DX0], u[NUA], bu[NXA], y[NUA], du[NUA];
    int i;
    port_inputs(c, u);
    dn_matvec(NX, NX, NX, SUR_A, x, dx);
    dn_matvec(NX, NU, NU, SUR_B, u, bu);
    for (i = 0; i < NX; i++) dx[i] += bu[i];
    V(der_energy_dissipated) = quad_w(SUR_PR, x, u);
    V(der_energy_supplied) = quad_w(SUR_PS, x, u);
    dn_matvec(NU, NX, NX, SUR_C, x, y);
    dn_matvec(NU, NU, NU, SUR_D, u, du);
    for (i = 0; i < NU; i++) y[i] += du[i];
#if SUR_HAS_SRC
    {
        double cv[NUA], p = 0.0;
        constant_inputs(c, cv);
        for (i = 0; i < NU; i++) p += cv[i] * y[i];
        V(der_energy_supplied_sources) = p;
    }
#endif
    if (outputs) {
        const double *ue = seen_inputs(c), *rate = dx; /* x' of the inputs the outputs see */
#ifdef SUR_CDX_ON
        double dxo[NXA];
#endif
        if (ue != ues(c)) { /* delayed feedthrough (wiring.h): y of the inputs the step held */
            ports_of(c, ue, u);
            dn_matvec(NU, NX, NX, SUR_C, x, y);
            dn_matvec(NU, NU, NU, SUR_D, u, du);
            for (i = 0; i < NU; i++) y[i] += du[i];
#ifdef SUR_CDX_ON
            dn_matvec(NX, NX, NX, SUR_A, x, dxo); /* and x' (outputs that read it) */
            dn_matvec(NX, NU, NU, SUR_B, u, bu);
            for (i = 0; i < NX; i++) dxo[i] += bu[i];
            rate = dxo;
#endif
        }
        external_outputs(c, y, x, rate, ue);
#ifdef SUR_LATE
        show_late_outputs(c); /* after a step: those of its start (wiring.h) */
#endif
#ifdef SUR_FAST_D_ON
        show_fast_feedthrough(c); /* inputs set since the step held them (wiring.h) */
#endif
#ifdef SUR_FIRST
        show_first_outputs(c); /* before the first step: fixed values (wiring.h) */
#endif
        V(H) = hamiltonian(x);
        V(energy_residual) = V(H) - c->d.sur_h0 + V(energy_dissipated) - V(energy_supplied);
    }
    return fmi2OK;
}

#if SUR_HAS_SRC
/* psi = int_0^h exp(M s) ds, the upper-right block of exp([[M, I], [0, 0]] h); 0 on success. */
static int integral_expm(double h, double *psi)
{
    const int q = 2 * NW;
    double *Z = (double *)malloc(sizeof(double) * 2 * (size_t)q * (size_t)q), *F;
    int i, j, bad;
    if (!Z) return 1;
    F = Z + (size_t)q * (size_t)q;
    memset(Z, 0, sizeof(double) * (size_t)q * (size_t)q);
    for (i = 0; i < NW; i++) {
        for (j = 0; j < NW; j++) Z[i * q + j] = SUR_M[i * NW + j] * h;
        Z[i * q + NW + i] = h;
    }
    bad = dn_expm(q, Z, F);
    if (!bad)
        for (i = 0; i < NW; i++)
            for (j = 0; j < NW; j++) psi[i * NW + j] = F[i * q + NW + j];
    free(Z);
    return bad;
}
#endif

/* exp(M h) and the energy integrals for step size h (cached). */
static fmi2Status prepare(ModelInstance *c, double h)
{
    double *M;
    int i, bad;
    /* importers' step sizes t_{k+1} - t_k jitter at round-off level (a few ulp of t): a step
       within SUR_H_RTOL of the cached one reuses it */
    if (c->sur_cached && fabs(h - c->sur_h) <= SUR_H_RTOL * c->sur_h) return fmi2OK;
    M = (double *)malloc(sizeof(double) * NW * NW);
    if (M)
        for (i = 0; i < NW * NW; i++) M[i] = SUR_M[i] * h;
    bad = !M || dn_expm(NW, M, c->sur_phi) || dn_van_loan(NW, SUR_M, SUR_PR, h, c->sur_wr) ||
          dn_van_loan(NW, SUR_M, SUR_PS, h, c->sur_ws);
#if SUR_HAS_SRC
    bad = bad || integral_expm(h, c->sur_psi);
#endif
    free(M);
    if (bad)
        return model_fail(c, "matrix exponential for the step size %g failed (out of memory "
                             "or singular Pade denominator)", h);
    c->sur_h = h;
    c->sur_cached = 1;
    return fmi2OK;
}

fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
    double *x = &c->d.r[SUR_VR_X0], xn[NXA], u[NUA];
    int i, j;
#ifdef SUR_DELAYED
    hold_step_inputs(c);
#endif
#ifdef SUR_FIRST
    c->d.sur_first = 0; /* the model's outputs from the first step on (wiring.h) */
#endif
#ifdef SUR_LATE
    if (freeze_outputs(c) > fmi2Warning) return fmi2Error; /* late outputs (wiring.h) */
#endif
    if (prepare(c, H) > fmi2Warning) return fmi2Error;
    port_inputs(c, u);
    V(energy_dissipated) += quad_w(c->sur_wr, x, u);
    V(energy_supplied) += quad_w(c->sur_ws, x, u);
#if SUR_HAS_SRC
    { /* int cu'y dt = cu' (C [psi w0]_x + h D u) */
        double cv[NUA], xi[NXA], y[NUA], du[NUA], s = 0.0;
        constant_inputs(c, cv);
        for (i = 0; i < NX; i++) {
            double acc = 0.0;
            for (j = 0; j < NX; j++) acc += c->sur_psi[i * NW + j] * x[j];
            for (j = 0; j < NU; j++) acc += c->sur_psi[i * NW + NX + j] * u[j];
            xi[i] = acc;
        }
        dn_matvec(NU, NX, NX, SUR_C, xi, y);
        dn_matvec(NU, NU, NU, SUR_D, u, du);
        for (i = 0; i < NU; i++) s += cv[i] * (y[i] + H * du[i]);
        V(energy_supplied_sources) += s;
    }
#endif
    for (i = 0; i < NX; i++) {
        double acc = 0.0;
        for (j = 0; j < NX; j++) acc += c->sur_phi[i * NW + j] * x[j];
        for (j = 0; j < NU; j++) acc += c->sur_phi[i * NW + NX + j] * u[j];
        xn[i] = acc;
    }
    for (i = 0; i < NX; i++) x[i] = xn[i];
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}

/* d(w' P w)/dw_k for w = (x, u). */
static double dquad(const double *P, const double *x, const double *u, int k)
{
    double acc = 0.0;
    int j;
    for (j = 0; j < NW; j++) {
        const double wj = j < NX ? x[j] : u[j - NX];
        acc += (P[k * NW + j] + P[j * NW + k]) * wj;
    }
    return acc;
}

/* d(unknown)/d(known) of the linear model at the current state and input: knowns are states and
   external inputs; an external input k acts on the ports through column k of TU. */
static int partial(const ModelInstance *c, fmi2ValueReference un, fmi2ValueReference kn,
                   double *out)
{
    int row, col, i;
    const int kx = (int)kn - SUR_VR_X0, ku = (int)kn - SUR_VR_U0;
    const int is_x = kx >= 0 && kx < NX, is_u = ku >= 0 && ku < NUE;
    const int is_e = kn == VR_energy_dissipated || kn == VR_energy_supplied
#if SUR_HAS_SRC
                     || kn == VR_energy_supplied_sources
#endif
        ;
    if (!is_x && !is_u && !is_e) return 1;
    *out = 0.0;
    if ((int)un >= SUR_VR_DX0 && (int)un < SUR_VR_DX0 + NX) {
        row = (int)un - SUR_VR_DX0;
        if (is_x) *out = SUR_A[row * NX + kx];
        if (is_u) *out = SUR_BE[row * NUE + ku];
        return 0;
    }
    if ((int)un >= SUR_VR_Y0 && (int)un < SUR_VR_Y0 + NYE) {
        row = (int)un - SUR_VR_Y0;
        if (is_x) *out = SUR_CE[row * NX + kx];
        if (is_u) *out = SUR_DE[row * NUE + ku];
#ifdef SUR_LAW_K
        if (is_u) { /* the static law's slope (wiring.h) */
            double e[FMU_ALLOC_SIZE(NUE)], dlaw[NYEA];
            for (i = 0; i < NUE; i++) e[i] = i == ku ? 1.0 : 0.0;
            law_directional(ues(c), e, dlaw);
            *out += dlaw[row];
        }
#endif
        return 0;
    }
    if (un == VR_H) {
        if (is_x) /* dH/dx = 1/2 (HM + HM') x */
            for (col = 0; col < NX; col++)
                *out += 0.5 * (SUR_HM[kx * NX + col] + SUR_HM[col * NX + kx]) * xs(c)[col];
        return 0;
    }
#if SUR_HAS_SRC
    if (un == VR_der_energy_supplied_sources) { /* cu' (C dx + D TU du_ext) */
        double cv[NUA];
        constant_inputs(c, cv);
        for (i = 0; i < NU; i++) {
            if (is_x) *out += cv[i] * SUR_C[i * NX + kx];
            if (is_u)
                for (col = 0; col < NU; col++)
                    *out += cv[i] * SUR_D[i * NU + col] * SUR_TU[col * NUE + ku];
        }
        return 0;
    }
#endif
    if (un == VR_der_energy_dissipated || un == VR_der_energy_supplied) {
        const double *P = un == VR_der_energy_dissipated ? SUR_PR : SUR_PS;
        double u[NUA];
        port_inputs(c, u);
        if (is_x) *out = dquad(P, xs(c), u, kx);
        if (is_u)
            for (i = 0; i < NU; i++)
                if (SUR_TU[i * NUE + ku] != 0.0)
                    *out += dquad(P, xs(c), u, NX + i) * SUR_TU[i * NUE + ku];
        return 0;
    }
    return 2;
}

fmi2Status model_directional_derivative(ModelInstance *c, const fmi2ValueReference unknowns[],
                                        size_t n_unknown, const fmi2ValueReference knowns[],
                                        size_t n_known, const fmi2Real seed[],
                                        fmi2Real sensitivity[])
{
    size_t i, k;
    for (i = 0; i < n_unknown; i++) {
        double acc = 0.0, d;
        for (k = 0; k < n_known; k++) {
            int s = partial(c, unknowns[i], knowns[k], &d);
            if (s == 1)
                return model_fail(c, "value reference %u is not a state or an input (knowns "
                                     "must be states or inputs)", (unsigned)knowns[k]);
            if (s == 2)
                return model_fail(c, "value reference %u is not a state derivative, an output "
                                     "port, H or an energy derivative (energy_residual is not "
                                     "differentiable: it depends on the history)",
                                  (unsigned)unknowns[i]);
            acc += d * seed[k];
        }
        sensitivity[i] = acc;
    }
    return fmi2OK;
}

/*
 * Dense linear algebra for the exported surrogate FMUs (row-major n x n arrays, C99, libm only):
 * products, LU with partial pivoting, the matrix exponential by scaling and squaring with the
 * degree-13 Pade approximant (Higham, SIAM J. Matrix Anal. Appl. 26(4), 2005 -- the algorithm of
 * scipy.linalg.expm for large norms), and Van Loan's integral of a quadratic form along
 * w' = M w (C. F. Van Loan, IEEE Trans. Autom. Control 23(3), 1978), and the one-sided Jacobi
 * orthogonalisation behind the nonlinear surrogate's minimum-norm Newton steps.
 *
 * Every function returning int returns 0 on success and 1 when out of memory or singular.
 */
#ifndef FMU_SURROGATE_DENSE_H
#define FMU_SURROGATE_DENSE_H

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* out = M v for the r x c block of a row-major M with row stride ld; out may not alias v. */
static void dn_matvec(int r, int c, int ld, const double *M, const double *v, double *out)
{
    int i, j;
    for (i = 0; i < r; i++) {
        double acc = 0.0;
        for (j = 0; j < c; j++) acc += M[i * ld + j] * v[j];
        out[i] = acc;
    }
}

/* w' P w for an n x n row-major P. */
static double dn_quad(int n, const double *P, const double *w)
{
    double s = 0.0;
    int i, j;
    for (i = 0; i < n; i++) {
        double acc = 0.0;
        for (j = 0; j < n; j++) acc += P[i * n + j] * w[j];
        s += w[i] * acc;
    }
    return s;
}

/* C = A B (n x n); C may not alias A or B. */
static void dn_mul(int n, const double *A, const double *B, double *C)
{
    int i, j, k;
    memset(C, 0, sizeof(double) * (size_t)n * (size_t)n);
    for (i = 0; i < n; i++)
        for (k = 0; k < n; k++) {
            const double a = A[i * n + k];
            if (a == 0.0) continue;
            for (j = 0; j < n; j++) C[i * n + j] += a * B[k * n + j];
        }
}

static double dn_norm1(int n, const double *A)
{
    double best = 0.0;
    int i, j;
    for (j = 0; j < n; j++) {
        double s = 0.0;
        for (i = 0; i < n; i++) s += fabs(A[i * n + j]);
        if (s > best) best = s;
    }
    return best;
}

/* LU factorisation with partial pivoting in place; returns 1 if singular. */
static int dn_lu(int n, double *A, int *piv)
{
    int i, j, k;
    for (k = 0; k < n; k++) {
        int p = k;
        double big = fabs(A[k * n + k]);
        for (i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > big) {
                big = fabs(A[i * n + k]);
                p = i;
            }
        piv[k] = p;
        if (big == 0.0) return 1;
        if (p != k)
            for (j = 0; j < n; j++) {
                double t = A[k * n + j];
                A[k * n + j] = A[p * n + j];
                A[p * n + j] = t;
            }
        for (i = k + 1; i < n; i++) {
            double f = (A[i * n + k] /= A[k * n + k]);
            if (f != 0.0)
                for (j = k + 1; j < n; j++) A[i * n + j] -= f * A[k * n + j];
        }
    }
    return 0;
}

/* Solve (LU) X = B for nrhs columns of the row-major n x nrhs matrix B (overwritten). */
static void dn_lu_solve(int n, const double *LU, const int *piv, double *B, int nrhs)
{
    int i, j, k;
    for (k = 0; k < n; k++)
        if (piv[k] != k)
            for (j = 0; j < nrhs; j++) {
                double t = B[k * nrhs + j];
                B[k * nrhs + j] = B[piv[k] * nrhs + j];
                B[piv[k] * nrhs + j] = t;
            }
    for (i = 0; i < n; i++)
        for (k = 0; k < i; k++) {
            const double l = LU[i * n + k];
            if (l != 0.0)
                for (j = 0; j < nrhs; j++) B[i * nrhs + j] -= l * B[k * nrhs + j];
        }
    for (i = n - 1; i >= 0; i--) {
        for (k = i + 1; k < n; k++) {
            const double u = LU[i * n + k];
            if (u != 0.0)
                for (j = 0; j < nrhs; j++) B[i * nrhs + j] -= u * B[k * nrhs + j];
        }
        for (j = 0; j < nrhs; j++) B[i * nrhs + j] /= LU[i * n + i];
    }
}

/* E = exp(A) (n x n) by scaling and squaring with the [13/13] Pade approximant. */
static int dn_expm(int n, const double *A, double *E)
{
    static const double b[14] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                                 1187353796428800.0,  129060195264000.0,   10559470521600.0,
                                 670442572800.0,      33522128640.0,       1323241920.0,
                                 40840800.0,          960960.0,            16380.0,
                                 182.0,               1.0};
    const double theta13 = 5.371920351148152;
    const size_t nn = (size_t)n * (size_t)n;
    double *w = (double *)malloc(sizeof(double) * nn * 7);
    int *piv = (int *)malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    double *As, *A2, *A4, *A6, *U, *V, *T, scale;
    int s = 0, i, k, status = 0;
    if (!w || !piv) {
        free(w);
        free(piv);
        return 1;
    }
    As = w; A2 = w + nn; A4 = w + 2 * nn; A6 = w + 3 * nn; U = w + 4 * nn; V = w + 5 * nn;
    T = w + 6 * nn;
    {
        const double nrm = dn_norm1(n, A);
        if (nrm > theta13) s = (int)ceil(log2(nrm / theta13));
    }
    scale = ldexp(1.0, -s);
    for (k = 0; k < (int)nn; k++) As[k] = A[k] * scale;
    dn_mul(n, As, As, A2);
    dn_mul(n, A2, A2, A4);
    dn_mul(n, A4, A2, A6);
    /* U = As (A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I) */
    for (k = 0; k < (int)nn; k++) T[k] = b[13] * A6[k] + b[11] * A4[k] + b[9] * A2[k];
    dn_mul(n, A6, T, U);
    for (k = 0; k < (int)nn; k++) U[k] += b[7] * A6[k] + b[5] * A4[k] + b[3] * A2[k];
    for (i = 0; i < n; i++) U[i * n + i] += b[1];
    memcpy(T, U, sizeof(double) * nn);
    dn_mul(n, As, T, U);
    /* V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I */
    for (k = 0; k < (int)nn; k++) T[k] = b[12] * A6[k] + b[10] * A4[k] + b[8] * A2[k];
    dn_mul(n, A6, T, V);
    for (k = 0; k < (int)nn; k++) V[k] += b[6] * A6[k] + b[4] * A4[k] + b[2] * A2[k];
    for (i = 0; i < n; i++) V[i * n + i] += b[0];
    /* (V - U) E = (V + U) */
    for (k = 0; k < (int)nn; k++) {
        T[k] = V[k] - U[k];
        E[k] = V[k] + U[k];
    }
    if (dn_lu(n, T, piv)) status = 1;
    else {
        dn_lu_solve(n, T, piv, E, n);
        for (i = 0; i < s; i++) {
            dn_mul(n, E, E, T);
            memcpy(E, T, sizeof(double) * nn);
        }
    }
    free(w);
    free(piv);
    return status;
}

/*
 * W = int_0^h exp(M' s) P exp(M s) ds for w' = M w (p x p, P symmetric), so that the quadratic
 * form w(t)' P w(t) integrates to w0' W w0 over a step of length h.  Van Loan: the exponential of
 * [[-M', P], [0, M]] d over a sub-step d = h / 2^k with |M|_1 d <= 1 (the block stays well scaled),
 * then doubling W(2d) = W(d) + exp(M d)' W(d) exp(M d).
 */
static int dn_van_loan(int p, const double *M, const double *P, double h, double *W)
{
    const int q = 2 * p;
    const size_t pp = (size_t)p * (size_t)p, qq = (size_t)q * (size_t)q;
    double *Z = (double *)malloc(sizeof(double) * (2 * qq + 3 * pp));
    double *F, *Phi, *T1, *T2, d;
    int i, j, k = 0, r;
    if (!Z) return 1;
    F = Z + qq; Phi = F + qq; T1 = Phi + pp; T2 = T1 + pp;
    {
        const double nrm = dn_norm1(p, M) * h;
        if (nrm > 1.0) k = (int)ceil(log2(nrm));
    }
    d = ldexp(h, -k);
    memset(Z, 0, sizeof(double) * qq);
    for (i = 0; i < p; i++)
        for (j = 0; j < p; j++) {
            Z[i * q + j] = -M[j * p + i] * d;
            Z[i * q + p + j] = P[i * p + j] * d;
            Z[(p + i) * q + p + j] = M[i * p + j] * d;
        }
    if (dn_expm(q, Z, F)) {
        free(Z);
        return 1;
    }
    for (i = 0; i < p; i++)
        for (j = 0; j < p; j++) {
            Phi[i * p + j] = F[(p + i) * q + p + j];
            T1[i * p + j] = F[i * q + p + j]; /* F12 */
        }
    /* W = F22' F12 */
    for (i = 0; i < p; i++)
        for (j = 0; j < p; j++) {
            double acc = 0.0;
            for (r = 0; r < p; r++) acc += Phi[r * p + i] * T1[r * p + j];
            W[i * p + j] = acc;
        }
    for (r = 0; r < k; r++) {
        /* W += Phi' W Phi ; Phi = Phi^2 */
        dn_mul(p, W, Phi, T1);
        for (i = 0; i < p; i++)
            for (j = 0; j < p; j++) {
                double acc = 0.0;
                int l;
                for (l = 0; l < p; l++) acc += Phi[l * p + i] * T1[l * p + j];
                T2[i * p + j] = acc;
            }
        for (i = 0; i < (int)pp; i++) W[i] += T2[i];
        dn_mul(p, Phi, Phi, T1);
        memcpy(Phi, T1, sizeof(double) * pp);
    }
    free(Z);
    return 0;
}

/* One-sided Jacobi SVD of the n x n row-major U in place: on return the columns of U are
   orthogonal (U = u_j s_j), s[j] their norms, and V (if not NULL, n x n) accumulates the
   rotations; returns the largest s[j]. */
static double dn_jacobi_columns(int n, double *U, double *V, double *s)
{
    double smax = 0.0;
    int i, j, p, q, sweep, rotated = 1;
    if (V) {
        for (i = 0; i < n * n; i++) V[i] = 0.0;
        for (i = 0; i < n; i++) V[i * n + i] = 1.0;
    }
    for (sweep = 0; sweep < 80 && rotated; sweep++) {
        rotated = 0;
        for (p = 0; p < n - 1; p++)
            for (q = p + 1; q < n; q++) {
                double al = 0.0, be = 0.0, ga = 0.0, ze, t, co, si;
                for (i = 0; i < n; i++) {
                    al += U[i * n + p] * U[i * n + p];
                    be += U[i * n + q] * U[i * n + q];
                    ga += U[i * n + p] * U[i * n + q];
                }
                if (ga == 0.0 || fabs(ga) <= DBL_EPSILON * sqrt(al * be)) continue;
                rotated = 1;
                ze = (be - al) / (2.0 * ga);
                t = (ze >= 0 ? 1.0 : -1.0) / (fabs(ze) + sqrt(1.0 + ze * ze));
                co = 1.0 / sqrt(1.0 + t * t);
                si = co * t;
                for (i = 0; i < n; i++) {
                    const double up = U[i * n + p], uq = U[i * n + q];
                    U[i * n + p] = co * up - si * uq;
                    U[i * n + q] = si * up + co * uq;
                    if (V) {
                        const double vp = V[i * n + p], vq = V[i * n + q];
                        V[i * n + p] = co * vp - si * vq;
                        V[i * n + q] = si * vp + co * vq;
                    }
                }
            }
    }
    for (j = 0; j < n; j++) {
        double acc = 0.0;
        for (i = 0; i < n; i++) acc += U[i * n + j] * U[i * n + j];
        s[j] = sqrt(acc);
        if (s[j] > smax) smax = s[j];
    }
    return smax;
}

#endif /* FMU_SURROGATE_DENSE_H */

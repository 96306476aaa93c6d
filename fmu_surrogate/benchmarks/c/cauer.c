/*
 * Benchmark 6a: Cauer low-pass filter (MSL CauerLowPassAnalog) with a nonlinear load branch
 * (docs/design.md §6).
 *
 * Nodes in (= vin), n1, n2, n3.  R1: in-n1, C1: n1-0, L1 || C2: n1-n2, C3: n2-0, L2 || C4: n2-n3,
 * C5: n3-0, R2: n3-0, and the branch n3-0: R4 in series with the nonlinear resistor
 *
 *     v3 = R4 i + v,    w1 i = w2 v^2 + w3 v^3          (true law: w = (1, 0, 0.01))
 *
 * States x = (v1, v2, v3, iL1, iL2):
 *     Cn (v1, v2, v3)' = ((vin - v1)/R1 - iL1,  iL1 - iL2,  iL2 - v3/R2 - i)
 *     L1 iL1' = v1 - v2,   L2 iL2' = v2 - v3
 * with the tridiagonal node capacitance matrix
 *     Cn = [[C1+C2, -C2, 0], [-C2, C2+C3+C4, -C4], [0, -C4, C4+C5]].
 *
 * The branch is an algebraic loop solved for (i, v) by a damped Newton iteration at every
 * evaluation (warm-started from the last solution).  Parameter values w for which it has no
 * solution or a singular Jacobian make the evaluation fail with a logged reason, as a vendor FMU
 * would.
 */
#include <math.h>

#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(R1) > 0.0)) return model_fail(c, "parameter R1 = %g must be > 0", V(R1));
    if (!(V(R2) > 0.0)) return model_fail(c, "parameter R2 = %g must be > 0", V(R2));
    if (!(V(R4) >= 0.0)) return model_fail(c, "parameter R4 = %g must be >= 0", V(R4));
    if (!(V(C1) > 0.0 && V(C2) > 0.0 && V(C3) > 0.0 && V(C4) > 0.0 && V(C5) > 0.0))
        return model_fail(c, "capacitances C1..C5 must be > 0 (got %g, %g, %g, %g, %g)", V(C1),
                          V(C2), V(C3), V(C4), V(C5));
    if (!(V(L1) > 0.0 && V(L2) > 0.0))
        return model_fail(c, "inductances L1, L2 must be > 0 (got %g, %g)", V(L1), V(L2));
    if (!(V(newton_tol) > 0.0))
        return model_fail(c, "parameter newton_tol = %g must be > 0", V(newton_tol));
    if (VI(newton_max_iter) < 1)
        return model_fail(c, "parameter newton_max_iter = %d must be >= 1",
                          (int)VI(newton_max_iter));
    return fmi2OK;
}

/* Residual of the branch equations at (i, v). */
static void branch_residual(double w1, double w2, double w3, double R4, double v3, double i,
                            double v, double *r1, double *r2)
{
    *r1 = w1 * i - w2 * v * v - w3 * v * v * v;
    *r2 = R4 * i + v - v3;
}

/* Solve the branch for (i, v) given v3; on success store them in i_nl, v_nl.
 * Converged when both residuals are below newton_tol relative to the magnitude of their terms,
 * checked where the Jacobian is regular; at most newton_max_iter damped Newton steps. */
static fmi2Status branch_solve(ModelInstance *c, double v3)
{
    const double w1 = V(w1), w2 = V(w2), w3 = V(w3), R4 = V(R4), tol = V(newton_tol);
    const int max_iter = VI(newton_max_iter);
    double i = V(i_nl), v = V(v_nl), r1, r2, norm;
    int it;
    if (!isfinite(i) || !isfinite(v)) i = v = 0.0;
    branch_residual(w1, w2, w3, R4, v3, i, v, &r1, &r2);
    norm = sqrt(r1 * r1 + r2 * r2);
    for (it = 0;; it++) {
        /* Jacobian [[w1, b], [R4, 1]] with b = -(2 w2 v + 3 w3 v^2) */
        const double b = -(2.0 * w2 * v + 3.0 * w3 * v * v);
        const double det = w1 - b * R4;
        const double scale = fabs(w1) + fabs(b * R4);
        double di, dv, lam = 1.0;
        int halvings;
        if (!(fabs(det) > 1e-12 * scale) || !isfinite(det))
            return model_fail(c, "singular Jacobian in the Newton iteration for the nonlinear "
                                 "resistor at t = %.17g: det = %g at v = %g, i = %g "
                                 "(w1 = %g, w2 = %g, w3 = %g, R4 = %g, v3 = %g)",
                              TIME, det, v, i, w1, w2, w3, R4, v3);
        if (fabs(r1) <= tol * (fabs(w1 * i) + fabs(w2 * v * v) + fabs(w3 * v * v * v)) &&
            fabs(r2) <= tol * (fabs(R4 * i) + fabs(v) + fabs(v3)))
            break; /* converged */
        if (it >= max_iter)
            return model_fail(c, "Newton iteration for the nonlinear resistor did not converge "
                                 "in %d iterations at t = %.17g: |residual| = %g at v = %g, "
                                 "i = %g (w1 = %g, w2 = %g, w3 = %g, v3 = %g)",
                              max_iter, TIME, norm, v, i, w1, w2, w3, v3);
        di = (-r1 + b * r2) / det;
        dv = (-w1 * r2 + R4 * r1) / det;
        /* damping: halve the step until the residual norm decreases */
        for (halvings = 0; halvings < 30; halvings++) {
            double ni = i + lam * di, nv = v + lam * dv, s1, s2, nn;
            branch_residual(w1, w2, w3, R4, v3, ni, nv, &s1, &s2);
            nn = sqrt(s1 * s1 + s2 * s2);
            if (nn <= (1.0 - 1e-4 * lam) * norm || nn == 0.0) {
                i = ni;
                v = nv;
                r1 = s1;
                r2 = s2;
                norm = nn;
                break;
            }
            lam *= 0.5;
        }
        if (halvings == 30)
            return model_fail(c, "Newton iteration for the nonlinear resistor found no descent "
                                 "direction at t = %.17g: |residual| = %g at v = %g, i = %g "
                                 "(w1 = %g, w2 = %g, w3 = %g, v3 = %g): the branch law has no "
                                 "solution here",
                              TIME, norm, v, i, w1, w2, w3, v3);
        if (!isfinite(i) || !isfinite(v))
            return model_fail(c, "Newton iteration for the nonlinear resistor produced "
                                 "non-finite values at t = %.17g (w1 = %g, w2 = %g, w3 = %g)",
                              TIME, w1, w2, w3);
    }
    V(i_nl) = i;
    V(v_nl) = v;
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double v1 = V(v1), v2 = V(v2), v3 = V(v3), iL1 = V(iL1), iL2 = V(iL2);
    const double C1 = V(C1), C2 = V(C2), C3 = V(C3), C4 = V(C4), C5 = V(C5);
    double f1, f2, f3, d1, d2, d3, l21, l32, y1, y2, y3;
    fmi2Status s = branch_solve(c, v3);
    if (s > fmi2Warning) return s;
    /* node currents */
    f1 = (V(vin) - v1) / V(R1) - iL1;
    f2 = iL1 - iL2;
    f3 = iL2 - v3 / V(R2) - V(i_nl);
    /* solve the tridiagonal SPD system Cn dv = f (LDL^T, no pivoting needed) */
    d1 = C1 + C2;
    l21 = -C2 / d1;
    d2 = C2 + C3 + C4 - l21 * l21 * d1;
    l32 = -C4 / d2;
    d3 = C4 + C5 - l32 * l32 * d2;
    y1 = f1;
    y2 = f2 - l21 * y1;
    y3 = f3 - l32 * y2;
    V(der_v3) = y3 / d3;
    V(der_v2) = y2 / d2 - l32 * V(der_v3);
    V(der_v1) = y1 / d1 - l21 * V(der_v2);
    V(der_iL1) = (v1 - v2) / V(L1);
    V(der_iL2) = (v2 - v3) / V(L2);
    if (outputs) V(v_R4) = V(R4) * V(i_nl);
    return fmi2OK;
}

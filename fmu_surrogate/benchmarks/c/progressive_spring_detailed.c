/*
 * Progressive spring as a coil with mass (fmu_surrogate/benchmarks/vendor/
 * progressive_spring_detailed.py): N_SEG segments, segment j a progressive spring of stiffness
 * N k and reference elongation x_ref / N with a damper c_seg in parallel, mass m_coil / N on
 * each inner node; node 0 fixed, node N driven at the velocity v.
 *   X' = v,  s_j' = w_j,  (m_coil / N) w_j' = f_{j+1} - f_j,  F = f_N
 *   f_j = N k e_j (1 + (N e_j / x_ref)^2) + c_seg e_j',  e_j = s_j - s_{j-1}  (s_0 = 0, s_N = X)
 * Co-simulation only, states internal, integrated by CVODE (cvode_runtime.c).  The generated
 * header lays the states out contiguously: X, s_1 .. s_{N-1}, w_1 .. w_{N-1}, and their
 * derivatives in the same order.
 */
#include "fmi2_framework.h"

#if VR_s_1 != VR_X + 1 || VR_w_1 != VR_X + N_SEG || VR_der_s_1 != VR_der_X + 1 ||                \
    VR_der_w_1 != VR_der_X + N_SEG
#error "progressive_spring_detailed: states and derivatives must be contiguous"
#endif

fmi2Status model_initialize(ModelInstance *c)
{
    double *x = &c->d.r[VR_X];
    int j;
    if (!(V(k) > 0.0)) return model_fail(c, "parameter k = %g must be > 0", V(k));
    if (!(V(x_ref) > 0.0)) return model_fail(c, "parameter x_ref = %g must be > 0", V(x_ref));
    if (!(V(m_coil) > 0.0)) return model_fail(c, "parameter m_coil = %g must be > 0", V(m_coil));
    if (!(V(c_seg) >= 0.0)) return model_fail(c, "parameter c_seg = %g must be >= 0", V(c_seg));
    x[0] = V(x0); /* at rest in the uniform preload */
    for (j = 1; j < N_SEG; j++) {
        x[j] = V(x0) * j / N_SEG;
        x[N_SEG - 1 + j] = 0.0;
    }
    return fmi2OK;
}

/* tension of a segment of elongation e and elongation rate de */
static double tension(const ModelInstance *c, double e, double de)
{
    const double r = N_SEG * e / V(x_ref);
    return N_SEG * V(k) * e * (1.0 + r * r) + V(c_seg) * de;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double *x = &c->d.r[VR_X];
    const double *s = x, *w = x + N_SEG - 1; /* s[j], w[j] for j = 1 .. N_SEG - 1 */
    double *dx = &c->d.r[VR_der_X];
    const double inv_m = N_SEG / V(m_coil);
    double f_prev = tension(c, s[1], w[1]); /* segment 1: from the fixed node 0 */
    int j;
    dx[0] = V(v);
    for (j = 1; j < N_SEG; j++) {
        const double s_next = j + 1 < N_SEG ? s[j + 1] : x[0];
        const double w_next = j + 1 < N_SEG ? w[j + 1] : V(v);
        const double f_next = tension(c, s_next - s[j], w_next - w[j]);
        dx[j] = w[j];
        dx[N_SEG - 1 + j] = (f_next - f_prev) * inv_m;
        f_prev = f_next;
    }
    if (outputs) V(F) = f_prev; /* f_N, the driven end */
    return fmi2OK;
}

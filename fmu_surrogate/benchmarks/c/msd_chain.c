/*
 * Benchmark 4a: single mass-spring-damper chain (docs/design.md §4), N_CELLS masses.
 *
 *   x = (q_1, p_1, ..., q_N, p_N),  x' = (J - R) Q x + B u,  y = B^T Q x
 *
 * Q: springs k between neighbouring masses plus a wall spring on the last mass, 1/m on the
 * momenta; R: damper c from every mass to ground; inputs F1, F2 act on masses 1 and 2; the
 * outputs are their velocities.  The generated header lays the states out contiguously:
 * q_j at VR_q_1 + 2 (j-1), p_j one after it; the derivatives likewise from VR_der_q_1.
 */
#include "fmi2_framework.h"

#if VR_p_1 != VR_q_1 + 1 || VR_q_2 != VR_q_1 + 2 || VR_der_p_1 != VR_der_q_1 + 1 ||            \
    VR_der_q_2 != VR_der_q_1 + 2
#error "msd_chain: states and derivatives must be interleaved and contiguous"
#endif

fmi2Status model_initialize(ModelInstance *c)
{
    if (!(V(mass) > 0.0)) return model_fail(c, "parameter mass = %g must be > 0", V(mass));
    if (!(V(spring) > 0.0)) return model_fail(c, "parameter spring = %g must be > 0", V(spring));
    if (!(V(damper) >= 0.0)) return model_fail(c, "parameter damper = %g must be >= 0", V(damper));
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double *x = &c->d.r[VR_q_1];
    double *dx = &c->d.r[VR_der_q_1];
    const double k = V(spring), inv_m = 1.0 / V(mass), damp = V(damper);
    int j;
    for (j = 0; j < N_CELLS; j++) {
        const double q = x[2 * j], v = x[2 * j + 1] * inv_m;
        double eq = 0.0; /* dH/dq_j */
        if (j > 0) eq += k * (q - x[2 * j - 2]);
        if (j < N_CELLS - 1) eq += k * (q - x[2 * j + 2]);
        else eq += k * q; /* wall spring on the last mass */
        dx[2 * j] = v;
        dx[2 * j + 1] = -eq - damp * v;
    }
    dx[1] += V(F1);
    dx[3] += V(F2);
    if (outputs) {
        V(v1) = x[1] * inv_m;
        V(v2) = x[3] * inv_m;
    }
    return fmi2OK;
}

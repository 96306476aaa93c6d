/*
 * Saturating coil with eddy currents in its laminations (fmu_surrogate/benchmarks/vendor/
 * saturating_inductor_detailed.py): a Cauer ladder of N_SEC layers, series inductors (layer k:
 * i_k = g(N psi_k), g the lumped law) and shunt eddy resistances R_s = R_core sum (j/N)^2.
 *   psi_1' = V - R i_1 - u_1,  psi_k' = u_{k-1} - u_k,  u_k = R_s (i_k - i_{k+1}),  u_N = 0
 *   i = i_1
 * Co-simulation only, the layer fluxes internal, integrated by CVODE (cvode_runtime.c).  The
 * generated header lays out psi_1 .. psi_N and their derivatives contiguously.
 */
#include "fmi2_framework.h"

#if VR_psi_2 != VR_psi_1 + 1 || VR_der_psi_2 != VR_der_psi_1 + 1
#error "saturating_inductor_detailed: states and derivatives must be contiguous"
#endif

fmi2Status model_initialize(ModelInstance *c)
{
    double *psi = &c->d.r[VR_psi_1];
    int k;
    if (!(V(L0) > 0.0)) return model_fail(c, "parameter L0 = %g must be > 0", V(L0));
    if (!(V(psi_sat) > 0.0))
        return model_fail(c, "parameter psi_sat = %g must be > 0", V(psi_sat));
    if (!(V(R) >= 0.0)) return model_fail(c, "parameter R = %g must be >= 0", V(R));
    if (!(V(R_core) > 0.0)) return model_fail(c, "parameter R_core = %g must be > 0", V(R_core));
    for (k = 0; k < N_SEC; k++) psi[k] = V(psi0) / N_SEC; /* no eddy current */
    return fmi2OK;
}

/* current of a layer of flux linkage psi_k: the lumped law at N psi_k */
static double layer_current(const ModelInstance *c, double psi_k)
{
    const double psi = N_SEC * psi_k, r = psi / V(psi_sat);
    return psi / V(L0) * (1.0 + r * r);
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    const double *psi = &c->d.r[VR_psi_1];
    double *dpsi = &c->d.r[VR_der_psi_1];
    double rs = 0.0, i_k, u_prev;
    int k;
    for (k = 1; k < N_SEC; k++) rs += (double)k * k;
    rs *= V(R_core) / ((double)N_SEC * N_SEC);
    i_k = layer_current(c, psi[0]);
    if (outputs) V(i) = i_k;
    u_prev = V(V) - V(R) * i_k; /* u_0: the voltage across the ladder */
    for (k = 0; k < N_SEC; k++) {
        const double i_next = k + 1 < N_SEC ? layer_current(c, psi[k + 1]) : 0.0;
        const double u = k + 1 < N_SEC ? rs * (i_k - i_next) : 0.0;
        dpsi[k] = u_prev - u;
        u_prev = u;
        i_k = i_next;
    }
    return fmi2OK;
}

/*
 * The wiring of an exported surrogate's pH ports (u, y) to the FMU's variables (u_ext, y_ext),
 * shared by surrogate_linear.c and surrogate_nonlinear.c (fmu_surrogate.export.wiring):
 *
 *   u = SUR_TU u_ext + SUR_CU          (sources: ports with a zero row of SUR_TU take the value
 *                                       of their parameter, SUR_VR_SRC0 + k)
 *
 * With SUR_HAS_SRC the energy supplied by the constant part of u (sources and offsets),
 * integral of y' cu, is the variable energy_supplied_sources.
 *   y_ext = SUR_TY y + SUR_CX x + SUR_DU u_ext + SUR_CY
 *
 * Include after fmi2_framework.h, dense.h and surrogate_data.h.
 */
#ifndef FMU_SURROGATE_WIRING_H
#define FMU_SURROGATE_WIRING_H

#define NXA FMU_ALLOC_SIZE(NX)
#define NUA FMU_ALLOC_SIZE(NU)
#define NYEA FMU_ALLOC_SIZE(NYE)

static const double *ues(const ModelInstance *c) { return &c->d.r[SUR_VR_U0]; }

/* The constant part of the pH port inputs (NU): SUR_CU with the sources' parameter values. */
static void constant_inputs(const ModelInstance *c, double *cv)
{
    int i;
    for (i = 0; i < NU; i++) cv[i] = SUR_CU[i];
    for (i = 0; i < SUR_NSRC; i++) cv[SUR_SRC[i]] = c->d.r[SUR_VR_SRC0 + i];
}

/* pH port inputs u (NU) from the external inputs and the constant part. */
static void port_inputs(const ModelInstance *c, double *u)
{
    double cv[NUA];
    int i;
    constant_inputs(c, cv);
    dn_matvec(NU, NUE, NUE, SUR_TU, ues(c), u);
    for (i = 0; i < NU; i++) u[i] += cv[i];
}

/* The external outputs (written to their variables) from the pH port outputs y and x. */
static void external_outputs(ModelInstance *c, const double *y, const double *x)
{
    double a[NYEA], b[NYEA];
    int i;
    dn_matvec(NYE, NU, NU, SUR_TY, y, a);
    dn_matvec(NYE, NX, NX, SUR_CX, x, b);
    for (i = 0; i < NYE; i++) a[i] += b[i] + SUR_CY[i];
    dn_matvec(NYE, NUE, NUE, SUR_DU, ues(c), b);
    for (i = 0; i < NYE; i++) c->d.r[SUR_VR_Y0 + i] = a[i] + b[i];
}

#endif /* FMU_SURROGATE_WIRING_H */

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
 * Delayed feedthrough (SUR_DELAYED, fmu_surrogate.ph.ports): in co-simulation the outputs see the
 * external inputs the last step held, sur_ustep, as the FMU the surrogate stands for does (its
 * outputs at a communication point are those of the inputs over the step before).  Setting an
 * input changes them only after the next fmi2DoStep, which first stores the inputs it holds.
 * At the start sur_ustep is the parameters <input>_before (SUR_VR_UB0 + k) or, without them,
 * the inputs when the FMU leaves initialisation.  The states see the current inputs as always,
 * and in model exchange (no steps) the outputs do too: the continuous-time model.
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

/* pH port inputs u (NU) from external inputs ue (NUE) and the constant part. */
static void ports_of(const ModelInstance *c, const double *ue, double *u)
{
    double cv[NUA];
    int i;
    constant_inputs(c, cv);
    dn_matvec(NU, NUE, NUE, SUR_TU, ue, u);
    for (i = 0; i < NU; i++) u[i] += cv[i];
}

/* pH port inputs u (NU) from the current external inputs. */
static void port_inputs(const ModelInstance *c, double *u) { ports_of(c, ues(c), u); }

/* The external inputs the outputs see: the current ones, or those the last step held. */
static const double *seen_inputs(const ModelInstance *c)
{
#ifdef SUR_DELAYED
    if (c->type == fmi2CoSimulation) return c->d.sur_ustep;
#endif
    return ues(c);
}

#ifdef SUR_DELAYED
/* The inputs a step holds become those the outputs see (first thing of model_do_step). */
static void hold_step_inputs(ModelInstance *c)
{
    int i;
    for (i = 0; i < NUE; i++) c->d.sur_ustep[i] = ues(c)[i];
}

/* At initialisation (model_initialize): the parameters <input>_before, else the inputs. */
static void start_step_inputs(ModelInstance *c)
{
#ifdef SUR_VR_UB0
    int i;
    for (i = 0; i < NUE; i++) c->d.sur_ustep[i] = c->d.r[SUR_VR_UB0 + i];
#else
    hold_step_inputs(c);
#endif
}
#endif

/* The external outputs (written to their variables) from the pH port outputs y, the states x
   and the external inputs ue they see (seen_inputs). */
static void external_outputs(ModelInstance *c, const double *y, const double *x,
                             const double *ue)
{
    double a[NYEA], b[NYEA];
    int i;
    dn_matvec(NYE, NU, NU, SUR_TY, y, a);
    dn_matvec(NYE, NX, NX, SUR_CX, x, b);
    for (i = 0; i < NYE; i++) a[i] += b[i] + SUR_CY[i];
    dn_matvec(NYE, NUE, NUE, SUR_DU, ue, b);
    for (i = 0; i < NYE; i++) c->d.r[SUR_VR_Y0 + i] = a[i] + b[i];
}

#endif /* FMU_SURROGATE_WIRING_H */

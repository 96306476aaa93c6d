/*
 * The wiring of an exported surrogate's pH ports (u, y) to the FMU's variables (u_ext, y_ext),
 * shared by surrogate_linear.c and surrogate_nonlinear.c (fmu_surrogate.export.wiring):
 *
 *   u = SUR_TU u_ext + SUR_CU          (sources: ports with a zero row of SUR_TU take the value
 *                                       of their parameter, SUR_VR_SRC0 + k)
 *
 * With SUR_HAS_SRC the energy supplied by the constant part of u (sources and offsets),
 * integral of y' cu, is the variable energy_supplied_sources.
 *   y_ext = SUR_TY y + SUR_CX x + SUR_DU u_ext + SUR_CY (+ law) (+ SUR_CDX x')
 *
 * Outputs that read the state's rate (SUR_CDX_ON, PortMap.Cdx; a core with E = I): they add
 * SUR_CDX x', with x' = (J - R(x)) z(x) + (G - P) u the rate at the state and at the port inputs
 * of the external inputs the outputs see (those the last step held with SUR_DELAYED), which the
 * model's code passes to external_outputs.
 *
 * Static law (SUR_LAW_K terms, fmu_surrogate.ph.StaticLaw): a nonlinear law of the external
 * inputs the outputs see, added to them like SUR_DU u_ext,
 *   law = sum_k SUR_LAW_C[:, k] f_k(s_k),   s = SUR_LAW_W u_ext + SUR_LAW_B,
 * f_k by SUR_LAW_KIND[k]: 0 cubic s^3, 1 tanh s, 2 hinge max(s, 0) (slope 0 at the kink).
 *
 * Delayed feedthrough (SUR_DELAYED, fmu_surrogate.ph.ports): in co-simulation the outputs see the
 * external inputs the last step held, sur_ustep, as the FMU the surrogate stands for does (its
 * outputs at a communication point are those of the inputs over the step before).  Setting an
 * input changes them only after the next fmi2DoStep, which first stores the inputs it holds.
 * At the start sur_ustep is the parameters <input>_before (SUR_VR_UB0 + k) or, without them,
 * the inputs when the FMU leaves initialisation.  The states see the current inputs as always,
 * and in model exchange (no steps) the outputs do too: the continuous-time model.
 *
 * Late outputs (SUR_LATE, fmu_surrogate.ph.ports): in co-simulation the outputs read at a
 * communication point are those of the point before, state and inputs, as the FMU the surrogate
 * stands for (generated code that computes its outputs at the start of doStep, then advances its
 * states).  fmi2DoStep first computes the outputs of the state and inputs it starts from
 * (freeze_outputs) and keeps them, sur_ylate; until the next step every evaluation shows them
 * (show_late_outputs), whatever inputs are set.  Before the first step (initialisation, after
 * fmi2Reset) the outputs are those of the current state and inputs, so the first two points show
 * the same values.  Only the port outputs are late: H, the energies and the derivatives are the
 * core's at the current time.  The frozen outputs are part of the FMU state.  No model exchange
 * (fmu_surrogate.export.fmi.fmu_export).
 *
 * Outputs before the first step (SUR_FIRST, PortedSystem.first_outputs): from initialisation (or
 * fmi2Reset) until the first fmi2DoStep the outputs are the fixed values SUR_FIRST_Y, as the FMU
 * the surrogate stands for shows them (outputs computed in doStep only); sur_first is part of the
 * FMU state.  No model exchange.
 *
 * Fast feedthrough (SUR_FAST_D_ON, PortedSystem.fast_feedthrough; with SUR_DELAYED): in
 * co-simulation the outputs add SUR_FAST_D (u_ext - sur_ustep), the change of the inputs set
 * since the last step held them (at the start: since <input>_before), as the FMU the surrogate
 * stands for responds to new inputs through internal dynamics far faster than its step.  Zero
 * right after a step, which holds the inputs it was given; model exchange shows the
 * continuous-time model.
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
    mv_SUR_TU(ue, u);
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

#ifdef SUR_FAST_D_ON
/* The fast feedthrough's response to the inputs set since the last step held them. */
static void show_fast_feedthrough(ModelInstance *c)
{
    double du[FMU_ALLOC_SIZE(NUE)], dy[NYEA];
    int i;
    if (c->type != fmi2CoSimulation) return;
    for (i = 0; i < NUE; i++) du[i] = ues(c)[i] - c->d.sur_ustep[i];
    dn_matvec(NYE, NUE, NUE, SUR_FAST_D, du, dy);
    for (i = 0; i < NYE; i++) c->d.r[SUR_VR_Y0 + i] += dy[i];
}
#endif

#ifdef SUR_LATE
/* After the first step: the outputs frozen at the start of the last step replace those just
   computed (last thing of model_evaluate with outputs). */
static void show_late_outputs(ModelInstance *c)
{
    int i;
    if (!c->d.sur_late) return;
    for (i = 0; i < NYE; i++) c->d.r[SUR_VR_Y0 + i] = c->d.sur_ylate[i];
}

/* First thing of model_do_step: the outputs of the state and inputs the step starts from, kept
   until the next step. */
static fmi2Status freeze_outputs(ModelInstance *c)
{
    fmi2Status s;
    int i;
    c->d.sur_late = 0;
    s = model_evaluate(c, 1);
    if (s > fmi2Warning) return s;
    for (i = 0; i < NYE; i++) c->d.sur_ylate[i] = c->d.r[SUR_VR_Y0 + i];
    c->d.sur_late = 1;
    return s;
}
#endif

#ifdef SUR_FIRST
/* Before the first step: the fixed outputs replace those just computed (after the late ones). */
static void show_first_outputs(ModelInstance *c)
{
    int i;
    if (!c->d.sur_first) return;
    for (i = 0; i < NYE; i++) c->d.r[SUR_VR_Y0 + i] = SUR_FIRST_Y[i];
}
#endif

#ifdef SUR_LAW_K
/* f_k(s) of the static law's term k, and its slope f_k'(s) in *slope. */
static double law_term(int k, double s, double *slope)
{
    switch (SUR_LAW_KIND[k]) {
    case 0:
        *slope = 3.0 * s * s;
        return s * s * s;
    case 1: {
        const double t = tanh(s);
        *slope = 1.0 - t * t;
        return t;
    }
    default:
        *slope = s > 0.0 ? 1.0 : 0.0;
        return s > 0.0 ? s : 0.0;
    }
}

/* The terms f_k(s_k) (SUR_LAW_K) and their slopes at the external inputs ue. */
static void law_terms(const double *ue, double *f, double *slope)
{
    int j, k;
    for (k = 0; k < SUR_LAW_K; k++) {
        double s = 0.0;
        for (j = 0; j < NUE; j++) s += SUR_LAW_W[k * NUE + j] * ue[j];
        f[k] = law_term(k, s + SUR_LAW_B[k], &slope[k]);
    }
}

/* The law's directional derivative dlaw (NYE) at the external inputs ue along due:
   SUR_LAW_C diag(f'(s)) SUR_LAW_W due. */
static void law_directional(const double *ue, const double *due, double *dlaw)
{
    double f[SUR_LAW_K], slope[SUR_LAW_K], ds[SUR_LAW_K];
    int k;
    law_terms(ue, f, slope);
    dn_matvec(SUR_LAW_K, NUE, NUE, SUR_LAW_W, due, ds);
    for (k = 0; k < SUR_LAW_K; k++) ds[k] *= slope[k];
    dn_matvec(NYE, SUR_LAW_K, SUR_LAW_K, SUR_LAW_C, ds, dlaw);
}
#endif

/* The external outputs (written to their variables) from the pH port outputs y, the states x,
   their rate xdot and the external inputs ue they see (seen_inputs; y and xdot of those). */
static void external_outputs(ModelInstance *c, const double *y, const double *x,
                             const double *xdot, const double *ue)
{
    double a[NYEA], b[NYEA];
    int i;
    mv_SUR_TY(y, a);
    mv_SUR_CX(x, b);
    for (i = 0; i < NYE; i++) a[i] += b[i] + SUR_CY[i];
    mv_SUR_DU(ue, b);
    for (i = 0; i < NYE; i++) a[i] += b[i];
#ifdef SUR_CDX_ON
    mv_SUR_CDX(xdot, b); /* the rate's part, before the law's (PortedSystem.external_outputs) */
    for (i = 0; i < NYE; i++) a[i] += b[i];
#else
    (void)xdot;
#endif
#ifdef SUR_LAW_K
    {
        double f[SUR_LAW_K], slope[SUR_LAW_K];
        law_terms(ue, f, slope);
        dn_matvec(NYE, SUR_LAW_K, SUR_LAW_K, SUR_LAW_C, f, b);
        for (i = 0; i < NYE; i++) a[i] += b[i];
    }
#endif
    for (i = 0; i < NYE; i++) c->d.r[SUR_VR_Y0 + i] = a[i];
}

#endif /* FMU_SURROGATE_WIRING_H */

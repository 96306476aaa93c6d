/*
 * Co-simulation step of the benchmark FMUs that carry their own variable-step solver, SUNDIALS
 * CVODE, as vendors' co-simulation FMUs do (OpenModelica's among them).  Benchmark FMUs only:
 * the exported surrogates never link with it.
 *
 * Compiled with fmi2_framework.c and the model's C file when the generated header defines
 * MODEL_CVODE (with MODEL_DO_STEP, MODEL_FREE_INSTANCE and the workspace pointer below).  The
 * model provides model_initialize and model_evaluate as for the framework's own integrators.
 *
 * Each fmi2DoStep (the communication step [t0, t0 + H], inputs held) integrates the states with
 * CVODE, BDF with Newton iterations on a dense direct linear solver:
 *   - CVodeReInit at t0 from the current states (the inputs may have jumped there);
 *   - CVodeSetStopTime(t0 + H): no internal step goes past the communication point;
 *   - relative tolerance: the tolerance of fmi2SetupExperiment when defined, else parameter
 *     cvode_rtol; absolute tolerance rtol * 1 per state (a nominal value of 1, as OpenModelica
 *     for a state without a nominal attribute); at most cvode_max_steps internal steps.
 * A model without states integrates one dummy state with derivative 0, as OpenModelica does, so
 * the solver runs all the same.  The solver memory is created at the first step and kept (it is
 * work space, not FMU state: every step starts from the states of the instance).  A CVODE
 * failure (flag < 0) fails the step with a message naming the flag.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FMI2_FRAMEWORK_IMPL
#include "fmi2_framework.h"
#include "sundials_api.h"

/* number of states CVODE integrates: the model's, or the dummy state */
#define NX (N_STATES > 0 ? N_STATES : 1)

struct CvodeRuntime {
    SUNContext ctx;
    void *mem;
    N_Vector y;
    N_Vector atol;
    SUNMatrix A;
    SUNLinearSolver ls;
    int configured;     /* tolerances and step limit set (to the values below) */
    double rtol;
    int max_steps;
    char error[512];    /* last message of SUNDIALS' error handler in this step */
};

static void on_error(int line, const char *func, const char *file, const char *msg,
                     SUNErrCode err_code, void *data, SUNContext ctx)
{
    struct CvodeRuntime *rt = (struct CvodeRuntime *)data;
    (void)line;
    (void)file;
    (void)ctx;
    snprintf(rt->error, sizeof rt->error, "%s (%s, code %d)", msg ? msg : "",
             func ? func : "?", (int)err_code);
}

/* Right-hand side: the model's derivatives at (t, y); positive return = recoverable failure
   (CVODE retries with a smaller step), the reason in c->message. */
static int rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *user_data)
{
    ModelInstance *c = (ModelInstance *)user_data;
    const double *x = N_VGetArrayPointer(y);
    double *dx = N_VGetArrayPointer(ydot);
#if N_STATES > 0
    int k;
    for (k = 0; k < N_STATES; k++) c->d.r[STATE_VR[k]] = x[k];
#endif
    c->d.time = t;
    if (model_evaluate(c, 0) > fmi2Warning) return 1;
#if N_STATES > 0
    for (k = 0; k < N_STATES; k++) {
        double v = c->d.r[DER_VR[k]];
        if (!isfinite(v)) {
            model_fail(c, "derivative '%s' is not finite (%g) at t = %.17g",
                       REAL_NAMES[DER_VR[k]], v, t);
            return 1;
        }
        dx[k] = v;
    }
#else
    (void)x;
    dx[0] = 0.0; /* the dummy state */
#endif
    return 0;
}

static void release(ModelInstance *c)
{
    struct CvodeRuntime *rt = c->cvode;
    if (!rt) return;
    if (rt->mem) CVodeFree(&rt->mem);
    if (rt->ls) SUNLinSolFree(rt->ls);
    if (rt->A) SUNMatDestroy(rt->A);
    if (rt->atol) N_VDestroy(rt->atol);
    if (rt->y) N_VDestroy(rt->y);
    if (rt->ctx) SUNContext_Free(&rt->ctx);
    c->cb.freeMemory(rt);
    c->cvode = NULL;
}

void model_free_instance(ModelInstance *c) { release(c); }

/* fmi2Error naming the CVODE function, its flag and SUNDIALS' message. */
static fmi2Status cvode_fail(ModelInstance *c, const char *fn, int flag, double t)
{
    char reason[sizeof c->message];
    char *name = CVodeGetReturnFlagName(flag);
    const char *detail = c->cvode && c->cvode->error[0] ? c->cvode->error : "";
    memcpy(reason, c->message, sizeof reason); /* the model's reason, if it failed */
    model_fail(c, "CVODE: %s returned flag %d (%s) at t = %.17g%s%s%s%s", fn, flag,
               name ? name : "?", t, detail[0] ? ": " : "", detail,
               reason[0] ? "; model: " : "", reason);
    free(name);
    return fmi2Error;
}

/* Create the solver memory (first step); on failure nothing is kept. */
static fmi2Status setup(ModelInstance *c, double t0)
{
    struct CvodeRuntime *rt;
    const char *fn = NULL;
    int flag = 0;
    rt = (struct CvodeRuntime *)c->cb.allocateMemory(1, sizeof *rt);
    if (!rt) return model_fail(c, "CVODE: out of memory for the solver");
    memset(rt, 0, sizeof *rt);
    c->cvode = rt;
    if (SUNContext_Create(SUN_COMM_NULL, &rt->ctx) != 0 || !rt->ctx) {
        release(c);
        return model_fail(c, "CVODE: SUNContext_Create failed");
    }
    /* errors reach the importer through the FMU's logger, not SUNDIALS' stderr */
    SUNContext_ClearErrHandlers(rt->ctx);
    SUNContext_PushErrHandler(rt->ctx, on_error, rt);
    rt->y = N_VNew_Serial(NX, rt->ctx);
    rt->atol = N_VNew_Serial(NX, rt->ctx);
    rt->A = SUNDenseMatrix(NX, NX, rt->ctx);
    rt->mem = CVodeCreate(CV_BDF, rt->ctx);
    if (rt->y && rt->atol && rt->A) rt->ls = SUNLinSol_Dense(rt->y, rt->A, rt->ctx);
    if (!rt->y || !rt->atol || !rt->A || !rt->mem || !rt->ls) {
        release(c);
        return model_fail(c, "CVODE: out of memory for the solver");
    }
    memset(N_VGetArrayPointer(rt->y), 0, NX * sizeof(double));
    if ((flag = CVodeInit(rt->mem, rhs, t0, rt->y)) < 0) fn = "CVodeInit";
    else if ((flag = CVodeSetUserData(rt->mem, c)) < 0) fn = "CVodeSetUserData";
    else if ((flag = CVodeSetLinearSolver(rt->mem, rt->ls, rt->A)) < 0) fn = "CVodeSetLinearSolver";
    if (fn) {
        cvode_fail(c, fn, flag, t0);
        release(c);
        return fmi2Error;
    }
    return fmi2OK; /* tolerances and step limit: set by model_do_step */
}

fmi2Status model_do_step(ModelInstance *c, double t0, double H)
{
    struct CvodeRuntime *rt;
    double rtol = c->d.tolerance_defined ? c->d.tolerance : V(cvode_rtol);
    double tret = t0, *y;
    int flag, k;

    c->message[0] = '\0';
    if (!c->cvode && setup(c, t0) > fmi2Warning) return fmi2Error;
    rt = c->cvode;
    rt->error[0] = '\0';
    if (!rt->configured || rtol != rt->rtol) {
        double *atol = N_VGetArrayPointer(rt->atol);
        for (k = 0; k < NX; k++) atol[k] = rtol;
        if ((flag = CVodeSVtolerances(rt->mem, rtol, rt->atol)) < 0)
            return cvode_fail(c, "CVodeSVtolerances", flag, t0);
        rt->rtol = rtol;
    }
    if (!rt->configured || VI(cvode_max_steps) != rt->max_steps) {
        if ((flag = CVodeSetMaxNumSteps(rt->mem, VI(cvode_max_steps))) < 0)
            return cvode_fail(c, "CVodeSetMaxNumSteps", flag, t0);
        rt->max_steps = VI(cvode_max_steps);
    }
    rt->configured = 1;
    y = N_VGetArrayPointer(rt->y);
#if N_STATES > 0
    for (k = 0; k < N_STATES; k++) y[k] = c->d.r[STATE_VR[k]];
#else
    y[0] = 0.0;
#endif
    if ((flag = CVodeReInit(rt->mem, t0, rt->y)) < 0) return cvode_fail(c, "CVodeReInit", flag, t0);
    if ((flag = CVodeSetStopTime(rt->mem, t0 + H)) < 0)
        return cvode_fail(c, "CVodeSetStopTime", flag, t0);
    flag = CVode(rt->mem, t0 + H, rt->y, &tret, CV_NORMAL);
#if N_STATES > 0
    for (k = 0; k < N_STATES; k++) c->d.r[STATE_VR[k]] = y[k];
#endif
    if (flag < 0) {
        c->d.time = tret;
        return cvode_fail(c, "CVode", flag, tret);
    }
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;
}

/*
 * Minimal FMI 2.0 framework for the FMUs of fmu-surrogate: the exported surrogates and the
 * benchmark FMUs (co-simulation and model exchange in one binary).
 *
 * A model file provides only its equations:
 *
 *   fmi2Status model_initialize(ModelInstance *c);
 *       Called when leaving initialization mode (and for values requested during it): check the
 *       parameters and set the states whose initial value is calculated from parameters.
 *       Must be idempotent.
 *
 *   fmi2Status model_evaluate(ModelInstance *c, int outputs);
 *       Compute the state derivatives from time, states, inputs and parameters (all read from
 *       c->d.r via the V(name) macro); when `outputs` is non-zero also every other calculated
 *       variable.  Return model_fail(c, "reason ...") on failure: the framework logs the reason
 *       (category logStatusError) when the failure reaches the importer.
 *
 * The generated header model_vars.h (see fmu_surrogate/export/fmi/model_description.py) defines
 * the sizes, value references VR_<symbol>, start values and the state/derivative lists.
 *
 * Co-simulation: fmi2DoStep integrates the model with an adaptive Dormand-Prince 5(4) scheme
 * (relative tolerance = the tolerance of fmi2SetupExperiment if defined, else parameter cs_rtol;
 * absolute tolerance cs_atol; at most cs_max_steps internal steps per communication step).
 * Inputs are held constant over a communication step.  A failed evaluation inside a trial step
 * shrinks the step; only a failure that persists down to the minimal step size is reported.
 *
 * Optional hooks, switched on by macros of model_vars.h (the exported surrogates use them):
 *   MODEL_RK4                     fmi2DoStep integrates with the classical Runge-Kutta scheme of
 *                                 order 4 in VI(n_substeps) equal substeps per communication
 *                                 step (a fixed-step solver, as many vendors' FMUs have) instead
 *                                 of Dormand-Prince (which then needs no cs_* parameters);
 *   MODEL_DO_STEP                 fmi2DoStep calls model_do_step(c, t0, H) instead of the
 *                                 framework's integrators (which then need no parameters);
 *   MODEL_DIRECTIONAL_DERIVATIVE  fmi2GetDirectionalDerivative calls
 *                                 model_directional_derivative(c, ...);
 *   MODEL_EXTRA_DATA              member declarations appended to ModelData (saved with the FMU
 *                                 state), MODEL_EXTRA_WORKSPACE to ModelInstance (not saved);
 *   MODEL_FREE_INSTANCE           fmi2FreeInstance calls model_free_instance(c) first (to release
 *                                 what the model allocated into its MODEL_EXTRA_WORKSPACE);
 *   MODEL_FIXED_VRS, MODEL_FIXED_VALUES
 *                                 comma-separated value references and values of parameters the
 *                                 model holds for that value only: leaving initialisation with
 *                                 another value fails, naming both values;
 *   MODEL_HELD_VRS, MODEL_HELD_VALUES
 *                                 the same for inputs: any evaluation with another value fails.
 */
#ifndef FMI2_FRAMEWORK_H
#define FMI2_FRAMEWORK_H

#include "fmi2Functions.h"
#include "model_vars.h"

#define FMU_ALLOC_SIZE(n) ((n) > 0 ? (n) : 1)

/* Instance states (bit flags so that allowed-state checks are a single mask test). */
enum {
    ST_INSTANTIATED = 1 << 0,
    ST_INITIALIZATION = 1 << 1,
    ST_EVENT = 1 << 2,
    ST_CONTINUOUS = 1 << 3,
    ST_STEP_COMPLETE = 1 << 4,
    ST_TERMINATED = 1 << 5,
    ST_ERROR = 1 << 6
};

/* Log category bits (order as in the model description's <LogCategories>). */
enum { LOG_ERROR = 1 << 0, LOG_WARNING = 1 << 1, LOG_CALLS = 1 << 2, LOG_ALL = 7 };

/* The part of an instance that fmi2GetFMUstate copies (no pointers inside). */
typedef struct {
    double time;
    double r[FMU_ALLOC_SIZE(N_REALS)];
    fmi2Integer i[FMU_ALLOC_SIZE(N_INTEGERS)];
    fmi2Boolean b[FMU_ALLOC_SIZE(N_BOOLEANS)];
    int state;              /* one of ST_* */
    int dirty;              /* calculated variables are out of date */
    double h_next;          /* CS: proposed internal step size for the next step (0: none yet) */
    double start_time;
    double stop_time;
    int stop_time_defined;
    double tolerance;
    int tolerance_defined;
#ifdef MODEL_EXTRA_DATA
    MODEL_EXTRA_DATA
#endif
} ModelData;

typedef struct ModelInstance {
    ModelData d;
    char *instance_name;
    fmi2Type type;
    fmi2CallbackFunctions cb;
    int logging_on;
    unsigned log_categories;
    char message[1024];     /* reason of the last failed model evaluation */
    /* CS integrator work space */
    double x[FMU_ALLOC_SIZE(N_STATES)];
    double xs[FMU_ALLOC_SIZE(N_STATES)];
    double k[7][FMU_ALLOC_SIZE(N_STATES)];
#ifdef MODEL_EXTRA_WORKSPACE
    MODEL_EXTRA_WORKSPACE
#endif
} ModelInstance;

/* Access to Real / Integer / Boolean variables by their generated symbol. */
#define V(name) (c->d.r[VR_##name])
#define VI(name) (c->d.i[VR_##name - INT_VR0])
#define VB(name) (c->d.b[VR_##name - BOOL_VR0])
#define TIME (c->d.time)

#if defined(__GNUC__)
#define FMU_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FMU_PRINTF(a, b)
#endif

/* Implemented by each model. */
fmi2Status model_initialize(ModelInstance *c);
fmi2Status model_evaluate(ModelInstance *c, int outputs);

#ifdef MODEL_DO_STEP
/* Advance states and time from t0 over H (inputs held); fmi2OK or model_fail(...). */
fmi2Status model_do_step(ModelInstance *c, double t0, double H);
#endif
#ifdef MODEL_FREE_INSTANCE
/* Release the model's own resources of instance c (called once, before c is freed). */
void model_free_instance(ModelInstance *c);
#endif
#ifdef MODEL_DIRECTIONAL_DERIVATIVE
fmi2Status model_directional_derivative(ModelInstance *c, const fmi2ValueReference unknowns[],
                                        size_t n_unknown, const fmi2ValueReference knowns[],
                                        size_t n_known, const fmi2Real seed[],
                                        fmi2Real sensitivity[]);
#endif

/* Record the reason of a failed evaluation (logged by the framework); returns fmi2Error. */
fmi2Status model_fail(ModelInstance *c, const char *fmt, ...) FMU_PRINTF(2, 3);

/* Log a message now (status >= fmi2Warning is always logged; fmi2OK only with debug logging). */
void model_log(ModelInstance *c, fmi2Status status, unsigned category, const char *fmt, ...)
    FMU_PRINTF(4, 5);

#endif /* FMI2_FRAMEWORK_H */

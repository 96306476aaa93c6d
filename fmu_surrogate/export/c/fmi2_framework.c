/*
 * FMI 2.0 boilerplate shared by the benchmark FMUs; see fmi2_framework.h for the model interface.
 * Both interface types (model exchange and co-simulation) are served by the same binary.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define FMI2_FRAMEWORK_IMPL
#include "fmi2_framework.h"

enum { ACCESS_NEVER = 0, ACCESS_BEFORE_INIT_DONE = 1, ACCESS_ALWAYS = 2 };

#define ST_RUNNING (ST_EVENT | ST_CONTINUOUS | ST_STEP_COMPLETE)
#define ST_EVALUABLE (ST_INITIALIZATION | ST_RUNNING)
#define ST_ANY (ST_INSTANTIATED | ST_INITIALIZATION | ST_RUNNING | ST_TERMINATED | ST_ERROR)

static const char *const CATEGORY_NAMES[] = {"logStatusError", "logStatusWarning", "logCalls"};

/* ------------------------------------------------------------------------------------ logging */
static const char *category_name(unsigned category)
{
    if (category & LOG_ERROR) return CATEGORY_NAMES[0];
    if (category & LOG_WARNING) return CATEGORY_NAMES[1];
    return CATEGORY_NAMES[2];
}

static void vlog(ModelInstance *c, fmi2Status status, unsigned category, const char *fmt,
                 va_list ap)
{
    char text[1200], escaped[2400];
    size_t i, j = 0;
    if (!c || !c->cb.logger) return;
    if (!(c->log_categories & category)) return;
    if (status == fmi2OK && !c->logging_on) return;
    vsnprintf(text, sizeof text, fmt, ap);
    /* the importer treats the message as a printf format: escape '%' */
    for (i = 0; text[i] && j + 2 < sizeof escaped; i++) {
        if (text[i] == '%') escaped[j++] = '%';
        escaped[j++] = text[i];
    }
    escaped[j] = '\0';
    c->cb.logger(c->cb.componentEnvironment, c->instance_name, status, category_name(category),
                 escaped);
}

void model_log(ModelInstance *c, fmi2Status status, unsigned category, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(c, status, category, fmt, ap);
    va_end(ap);
}

fmi2Status model_fail(ModelInstance *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->message, sizeof c->message, fmt, ap);
    va_end(ap);
    return fmi2Error;
}

#define LOG_CALL(c, fn)                                                                         \
    do {                                                                                        \
        if ((c)->logging_on && ((c)->log_categories & LOG_CALLS))                               \
            model_log((c), fmi2OK, LOG_CALLS, "%s", (fn));                                      \
    } while (0)

static const char *state_name(int state)
{
    switch (state) {
    case ST_INSTANTIATED: return "instantiated";
    case ST_INITIALIZATION: return "initialization mode";
    case ST_EVENT: return "event mode";
    case ST_CONTINUOUS: return "continuous-time mode";
    case ST_STEP_COMPLETE: return "step complete";
    case ST_TERMINATED: return "terminated";
    default: return "error";
    }
}

/* A model failure reached the importer: log the reason and enter the error state. */
static fmi2Status failed(ModelInstance *c, const char *fn)
{
    model_log(c, fmi2Error, LOG_ERROR, "%s: %s", fn, c->message);
    c->d.state = ST_ERROR;
    return fmi2Error;
}

/* A call the importer should not have made (wrong state, bad argument): log, keep the state. */
static fmi2Status usage_error(ModelInstance *c, const char *fn, const char *fmt, ...)
    FMU_PRINTF(3, 4);
static fmi2Status usage_error(ModelInstance *c, const char *fn, const char *fmt, ...)
{
    char text[1000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    model_log(c, fmi2Error, LOG_ERROR, "%s: %s", fn, text);
    return fmi2Error;
}

static int allowed(ModelInstance *c, const char *fn, int mask)
{
    if (!c) return 0;
    LOG_CALL(c, fn);
    if (c->d.state & mask) return 1;
    usage_error(c, fn, "not allowed in state '%s'", state_name(c->d.state));
    return 0;
}

#define CHECK(c, fn, mask)                                                                      \
    do {                                                                                        \
        if (!allowed((c), (fn), (mask))) return fmi2Error;                                      \
    } while (0)

/* ------------------------------------------------------------------------------- evaluation */
static void set_start_values(ModelInstance *c)
{
    memset(&c->d, 0, sizeof c->d);
    if (N_REALS > 0) memcpy(c->d.r, REAL_START, sizeof(double) * N_REALS);
    if (N_INTEGERS > 0) {
        int k;
        for (k = 0; k < N_INTEGERS; k++) c->d.i[k] = INT_START[k];
    }
    if (N_BOOLEANS > 0) {
        int k;
        for (k = 0; k < N_BOOLEANS; k++) c->d.b[k] = BOOL_START[k] ? fmi2True : fmi2False;
    }
    c->d.state = ST_INSTANTIATED;
    c->d.dirty = 1;
    c->message[0] = '\0';
}

/* Whether the n variables vr[] of c are finite, branch-free (an exponent of all ones, inf or
   NaN, carries into the sign bit): a co-simulation step of a small model is a few hundred
   instructions, a test and branch per variable would be a sixth of them. */
static int all_finite(const ModelInstance *c, const unsigned *vr, int n)
{
    uint64_t carry = 0;
    int j;
    for (j = 0; j < n; j++) {
        uint64_t bits;
        memcpy(&bits, &c->d.r[vr[j]], sizeof bits);
        carry |= (bits & 0x7ff0000000000000u) + 0x0010000000000000u;
    }
    return !(carry >> 63);
}

/* After an evaluation: the variables only the model writes, CALC_VR (the calculated ones and
   the states, which fmi2SetContinuousStates does not check), are finite.  Inputs and parameters
   are checked when they are set (fmi2SetReal). */
static fmi2Status check_finite(ModelInstance *c)
{
    int j;
    if (all_finite(c, CALC_VR, N_CALC)) return fmi2OK;
    for (j = 0; j < N_CALC; j++) {
        const unsigned k = CALC_VR[j];
        if (!isfinite(c->d.r[k]))
            return model_fail(c, "variable '%s' is not finite (%g) at t = %.17g", REAL_NAMES[k],
                              c->d.r[k], c->d.time);
    }
    return fmi2OK;
}

#if defined(MODEL_FIXED_VRS) || defined(MODEL_HELD_VRS)
/* Index of the first of the n variables vr whose value differs from value (1e-12 relative), or
   n when none does. */
static size_t first_change(const ModelInstance *c, const fmi2ValueReference *vr,
                           const double *value, size_t n)
{
    size_t k;
    for (k = 0; k < n; k++)
        if (!(fabs(c->d.r[vr[k]] - value[k]) <= 1e-12 * fabs(value[k]))) break;
    return k;
}
#endif

#ifdef MODEL_FIXED_VRS
/* Parameters the model holds for one value only (MODEL_FIXED_VRS, MODEL_FIXED_VALUES: a
   surrogate identified at these values of its source's parameters): another value fails. */
static fmi2Status check_fixed(ModelInstance *c)
{
    static const fmi2ValueReference vr[] = {MODEL_FIXED_VRS};
    static const double value[] = {MODEL_FIXED_VALUES};
    size_t k = first_change(c, vr, value, sizeof vr / sizeof vr[0]);
    if (k == sizeof vr / sizeof vr[0]) return fmi2OK;
    return model_fail(c, "parameter '%s' = %.17g, but this model was identified at %s = %.17g "
                      "and holds for that value only; identify it again from runs at the new "
                      "value", REAL_NAMES[vr[k]], c->d.r[vr[k]], REAL_NAMES[vr[k]], value[k]);
}
#else
static fmi2Status check_fixed(ModelInstance *c) { (void)c; return fmi2OK; }
#endif

#ifdef MODEL_HELD_VRS
/* Inputs the model holds for one value only (MODEL_HELD_VRS, MODEL_HELD_VALUES: a surrogate
   whose data never varied them): another value fails whenever the model is evaluated. */
static fmi2Status check_held(ModelInstance *c)
{
    static const fmi2ValueReference vr[] = {MODEL_HELD_VRS};
    static const double value[] = {MODEL_HELD_VALUES};
    size_t k = first_change(c, vr, value, sizeof vr / sizeof vr[0]);
    if (k == sizeof vr / sizeof vr[0]) return fmi2OK;
    return model_fail(c, "input '%s' = %.17g at t = %.17g, but it kept the value %.17g in all the "
                      "data this model was identified from, so the model holds for that value "
                      "only; harvest with '%s' varied and identify it again", REAL_NAMES[vr[k]],
                      c->d.r[vr[k]], c->d.time, value[k], REAL_NAMES[vr[k]]);
}
#else
static fmi2Status check_held(ModelInstance *c) { (void)c; return fmi2OK; }
#endif

/* Bring every calculated variable up to date; on failure log the reason (via `fn`). */
static fmi2Status update(ModelInstance *c, const char *fn)
{
    fmi2Status s = fmi2OK;
    if (c->d.state & ST_INITIALIZATION) {
        s = check_fixed(c);
        if (s <= fmi2Warning) s = model_initialize(c);
    }
    if (s <= fmi2Warning) s = check_held(c);
    if (s <= fmi2Warning) s = model_evaluate(c, 1);
    if (s <= fmi2Warning) s = check_finite(c);
    if (s > fmi2Warning) return failed(c, fn);
    c->d.dirty = 0;
    return s;
}

/* ------------------------------------------------------------------------ common functions */
const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }

const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component comp, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    ModelInstance *c = (ModelInstance *)comp;
    size_t i;
    if (!c) return fmi2Error;
    if (nCategories == 0) {
        c->logging_on = loggingOn ? 1 : 0;
        c->log_categories = LOG_ALL;
        return fmi2OK;
    }
    if (!categories) return usage_error(c, "fmi2SetDebugLogging", "categories is NULL");
    for (i = 0; i < nCategories; i++) {
        unsigned bit = 0, k;
        for (k = 0; k < 3; k++)
            if (categories[i] && strcmp(categories[i], CATEGORY_NAMES[k]) == 0) bit = 1u << k;
        if (!bit)
            return usage_error(c, "fmi2SetDebugLogging",
                               "unknown log category '%s' (known: logStatusError, "
                               "logStatusWarning, logCalls)",
                               categories[i] ? categories[i] : "(null)");
        if (loggingOn) c->log_categories |= bit;
        else c->log_categories &= ~bit;
    }
    if (loggingOn) c->logging_on = 1;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation,
                              const fmi2CallbackFunctions *functions, fmi2Boolean visible,
                              fmi2Boolean loggingOn)
{
    ModelInstance *c;
    size_t len;
    (void)fmuResourceLocation;
    (void)visible;
    if (!functions) return NULL;
    if (!instanceName || !instanceName[0]) {
        if (functions->logger)
            functions->logger(functions->componentEnvironment, "?", fmi2Error, "logStatusError",
                              "fmi2Instantiate: instanceName must be a non-empty string");
        return NULL;
    }
    if (!functions->allocateMemory || !functions->freeMemory) {
        if (functions->logger)
            functions->logger(functions->componentEnvironment, instanceName, fmi2Error,
                              "logStatusError",
                              "fmi2Instantiate: the callbacks allocateMemory and freeMemory "
                              "are required");
        return NULL;
    }
    if (!fmuGUID || strcmp(fmuGUID, MODEL_GUID) != 0) {
        if (functions->logger)
            functions->logger(functions->componentEnvironment, instanceName, fmi2Error,
                              "logStatusError",
                              "fmi2Instantiate: GUID mismatch: modelDescription.xml and binary "
                              "of " MODEL_IDENTIFIER_STRING
                              " do not belong together (binary has " MODEL_GUID "); rebuild "
                              "the FMU");
        return NULL;
    }
    if (fmuType != fmi2ModelExchange && fmuType != fmi2CoSimulation) {
        if (functions->logger)
            functions->logger(functions->componentEnvironment, instanceName, fmi2Error,
                              "logStatusError", "fmi2Instantiate: unknown fmuType");
        return NULL;
    }
    c = (ModelInstance *)functions->allocateMemory(1, sizeof(ModelInstance));
    if (!c) return NULL;
    len = strlen(instanceName);
    c->instance_name = (char *)functions->allocateMemory(len + 1, 1);
    if (!c->instance_name) {
        functions->freeMemory(c);
        return NULL;
    }
    memcpy(c->instance_name, instanceName, len + 1);
    c->cb = *functions;
    c->type = fmuType;
    c->logging_on = loggingOn ? 1 : 0;
    c->log_categories = LOG_ALL;
    set_start_values(c);
    LOG_CALL(c, "fmi2Instantiate");
    return c;
}

void fmi2FreeInstance(fmi2Component comp)
{
    ModelInstance *c = (ModelInstance *)comp;
    fmi2CallbackFreeMemory free_memory;
    if (!c) return;
    LOG_CALL(c, "fmi2FreeInstance");
#ifdef MODEL_FREE_INSTANCE
    model_free_instance(c);
#endif
    free_memory = c->cb.freeMemory;
    free_memory(c->instance_name);
    free_memory(c);
}

fmi2Status fmi2SetupExperiment(fmi2Component comp, fmi2Boolean toleranceDefined,
                               fmi2Real tolerance, fmi2Real startTime,
                               fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2SetupExperiment", ST_INSTANTIATED);
    if (toleranceDefined && !(tolerance > 0 && tolerance < 1))
        return usage_error(c, "fmi2SetupExperiment", "tolerance %g must lie in (0, 1)", tolerance);
    if (!isfinite(startTime))
        return usage_error(c, "fmi2SetupExperiment", "startTime %g is not finite", startTime);
    if (stopTimeDefined && !(stopTime >= startTime))
        return usage_error(c, "fmi2SetupExperiment", "stopTime %g is before startTime %g",
                           stopTime, startTime);
    c->d.tolerance_defined = toleranceDefined ? 1 : 0;
    c->d.tolerance = tolerance;
    c->d.start_time = startTime;
    c->d.time = startTime;
    c->d.stop_time_defined = stopTimeDefined ? 1 : 0;
    c->d.stop_time = stopTime;
    c->d.dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component comp)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2EnterInitializationMode", ST_INSTANTIATED);
    c->d.state = ST_INITIALIZATION;
    c->d.dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component comp)
{
    ModelInstance *c = (ModelInstance *)comp;
    fmi2Status s;
    CHECK(c, "fmi2ExitInitializationMode", ST_INITIALIZATION);
    s = update(c, "fmi2ExitInitializationMode");
    if (s > fmi2Warning) return s;
    c->d.state = c->type == fmi2ModelExchange ? ST_EVENT : ST_STEP_COMPLETE;
    c->d.h_next = 0.0;
    return s;
}

fmi2Status fmi2Terminate(fmi2Component comp)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2Terminate", ST_RUNNING | ST_ERROR);
    c->d.state = ST_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component comp)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2Reset", ST_ANY);
    set_start_values(c);
    return fmi2OK;
}

/* -------------------------------------------------------------------------- get and set */
#define CHECK_ARRAYS(c, fn, vr, nvr, value)                                                     \
    do {                                                                                        \
        if ((nvr) > 0 && (!(vr) || !(value)))                                                   \
            return usage_error((c), (fn), "vr or value is NULL");                               \
    } while (0)

static fmi2Status refresh(ModelInstance *c, const char *fn)
{
    if (c->d.dirty && (c->d.state & ST_EVALUABLE)) return update(c, fn);
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                       fmi2Real value[])
{
    ModelInstance *c = (ModelInstance *)comp;
    size_t k;
    CHECK(c, "fmi2GetReal", ST_ANY);
    CHECK_ARRAYS(c, "fmi2GetReal", vr, nvr, value);
    if (nvr == 0) return fmi2OK;
    if (refresh(c, "fmi2GetReal") > fmi2Warning) return fmi2Error;
    for (k = 0; k < nvr; k++) {
        if (vr[k] >= N_REALS)
            return usage_error(c, "fmi2GetReal", "value reference %u is not a Real variable",
                               (unsigned)vr[k]);
        value[k] = c->d.r[vr[k]];
    }
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Integer value[])
{
    ModelInstance *c = (ModelInstance *)comp;
    size_t k;
    CHECK(c, "fmi2GetInteger", ST_ANY);
    CHECK_ARRAYS(c, "fmi2GetInteger", vr, nvr, value);
    for (k = 0; k < nvr; k++) {
        if (vr[k] < INT_VR0 || vr[k] >= INT_VR0 + N_INTEGERS)
            return usage_error(c, "fmi2GetInteger",
                               "value reference %u is not an Integer variable", (unsigned)vr[k]);
        value[k] = c->d.i[vr[k] - INT_VR0];
    }
    return fmi2OK;
}

fmi2Status fmi2GetBoolean(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Boolean value[])
{
    ModelInstance *c = (ModelInstance *)comp;
    size_t k;
    CHECK(c, "fmi2GetBoolean", ST_ANY);
    CHECK_ARRAYS(c, "fmi2GetBoolean", vr, nvr, value);
    for (k = 0; k < nvr; k++) {
        if (vr[k] < BOOL_VR0 || vr[k] >= BOOL_VR0 + N_BOOLEANS)
            return usage_error(c, "fmi2GetBoolean",
                               "value reference %u is not a Boolean variable", (unsigned)vr[k]);
        value[k] = c->d.b[vr[k] - BOOL_VR0];
    }
    return fmi2OK;
}

fmi2Status fmi2GetString(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                         fmi2String value[])
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2GetString", ST_ANY);
    (void)value;
    if (nvr > 0)
        return usage_error(c, "fmi2GetString", "value reference %u: this FMU has no String "
                           "variables", vr ? (unsigned)vr[0] : 0u);
    return fmi2OK;
}

/* Check that variable `name` with access code `access` may be set now. */
static int settable(ModelInstance *c, const char *fn, unsigned access, const char *name)
{
    if (access == ACCESS_NEVER) {
        usage_error(c, fn, "'%s' is calculated by the model (or constant) and cannot be set",
                    name);
        return 0;
    }
    if (access == ACCESS_BEFORE_INIT_DONE && !(c->d.state & (ST_INSTANTIATED | ST_INITIALIZATION))) {
        usage_error(c, fn, "'%s' can only be set before fmi2ExitInitializationMode", name);
        return 0;
    }
    return 1;
}

#define ST_SETTABLE (ST_INSTANTIATED | ST_INITIALIZATION | ST_RUNNING)

fmi2Status fmi2SetReal(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[])
{
    ModelInstance *c = (ModelInstance *)comp;
    size_t k;
    CHECK(c, "fmi2SetReal", ST_SETTABLE);
    CHECK_ARRAYS(c, "fmi2SetReal", vr, nvr, value);
    for (k = 0; k < nvr; k++) {
        if (vr[k] >= N_REALS)
            return usage_error(c, "fmi2SetReal", "value reference %u is not a Real variable",
                               (unsigned)vr[k]);
        if (!settable(c, "fmi2SetReal", REAL_ACCESS[vr[k]], REAL_NAMES[vr[k]])) return fmi2Error;
        if (!isfinite(value[k]))
            return usage_error(c, "fmi2SetReal", "value %g for '%s' is not finite", value[k],
                               REAL_NAMES[vr[k]]);
        c->d.r[vr[k]] = value[k];
    }
    if (nvr > 0) c->d.dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Integer value[])
{
    ModelInstance *c = (ModelInstance *)comp;
    size_t k;
    CHECK(c, "fmi2SetInteger", ST_SETTABLE);
    CHECK_ARRAYS(c, "fmi2SetInteger", vr, nvr, value);
    for (k = 0; k < nvr; k++) {
        if (vr[k] < INT_VR0 || vr[k] >= INT_VR0 + N_INTEGERS)
            return usage_error(c, "fmi2SetInteger",
                               "value reference %u is not an Integer variable", (unsigned)vr[k]);
        if (!settable(c, "fmi2SetInteger", INT_ACCESS[vr[k] - INT_VR0],
                      INT_NAMES[vr[k] - INT_VR0]))
            return fmi2Error;
        c->d.i[vr[k] - INT_VR0] = value[k];
    }
    if (nvr > 0) c->d.dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2SetBoolean(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Boolean value[])
{
    ModelInstance *c = (ModelInstance *)comp;
    size_t k;
    CHECK(c, "fmi2SetBoolean", ST_SETTABLE);
    CHECK_ARRAYS(c, "fmi2SetBoolean", vr, nvr, value);
    for (k = 0; k < nvr; k++) {
        if (vr[k] < BOOL_VR0 || vr[k] >= BOOL_VR0 + N_BOOLEANS)
            return usage_error(c, "fmi2SetBoolean",
                               "value reference %u is not a Boolean variable", (unsigned)vr[k]);
        if (!settable(c, "fmi2SetBoolean", BOOL_ACCESS[vr[k] - BOOL_VR0],
                      BOOL_NAMES[vr[k] - BOOL_VR0]))
            return fmi2Error;
        c->d.b[vr[k] - BOOL_VR0] = value[k] ? fmi2True : fmi2False;
    }
    if (nvr > 0) c->d.dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2SetString(fmi2Component comp, const fmi2ValueReference vr[], size_t nvr,
                         const fmi2String value[])
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2SetString", ST_SETTABLE);
    (void)value;
    if (nvr > 0)
        return usage_error(c, "fmi2SetString", "value reference %u: this FMU has no String "
                           "variables", vr ? (unsigned)vr[0] : 0u);
    return fmi2OK;
}

/* ----------------------------------------------------------------------------- FMU state */
typedef struct {
    char guid[64];
    ModelData d;
} SerializedState;

fmi2Status fmi2GetFMUstate(fmi2Component comp, fmi2FMUstate *FMUstate)
{
    ModelInstance *c = (ModelInstance *)comp;
    ModelData *s;
    CHECK(c, "fmi2GetFMUstate", ST_ANY);
    if (!FMUstate) return usage_error(c, "fmi2GetFMUstate", "FMUstate is NULL");
    s = (ModelData *)*FMUstate;
    if (!s) s = (ModelData *)c->cb.allocateMemory(1, sizeof(ModelData));
    if (!s) return usage_error(c, "fmi2GetFMUstate", "out of memory");
    *s = c->d;
    *FMUstate = s;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component comp, fmi2FMUstate FMUstate)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2SetFMUstate", ST_ANY);
    if (!FMUstate) return usage_error(c, "fmi2SetFMUstate", "FMUstate is NULL");
    c->d = *(const ModelData *)FMUstate;
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component comp, fmi2FMUstate *FMUstate)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2FreeFMUstate", ST_ANY);
    if (FMUstate && *FMUstate) {
        c->cb.freeMemory(*FMUstate);
        *FMUstate = NULL;
    }
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component comp, fmi2FMUstate FMUstate, size_t *size)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2SerializedFMUstateSize", ST_ANY);
    (void)FMUstate;
    if (!size) return usage_error(c, "fmi2SerializedFMUstateSize", "size is NULL");
    *size = sizeof(SerializedState);
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component comp, fmi2FMUstate FMUstate, fmi2Byte bytes[],
                                 size_t size)
{
    ModelInstance *c = (ModelInstance *)comp;
    SerializedState s;
    CHECK(c, "fmi2SerializeFMUstate", ST_ANY);
    if (!FMUstate || !bytes) return usage_error(c, "fmi2SerializeFMUstate", "NULL argument");
    if (size < sizeof s)
        return usage_error(c, "fmi2SerializeFMUstate", "buffer of %lu bytes is too small (%lu)",
                           (unsigned long)size, (unsigned long)sizeof s);
    memset(&s, 0, sizeof s);
    strncpy(s.guid, MODEL_GUID, sizeof s.guid - 1);
    s.d = *(const ModelData *)FMUstate;
    memcpy(bytes, &s, sizeof s);
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component comp, const fmi2Byte serializedState[],
                                   size_t size, fmi2FMUstate *FMUstate)
{
    ModelInstance *c = (ModelInstance *)comp;
    SerializedState s;
    ModelData *d;
    CHECK(c, "fmi2DeSerializeFMUstate", ST_ANY);
    if (!serializedState || !FMUstate)
        return usage_error(c, "fmi2DeSerializeFMUstate", "NULL argument");
    if (size != sizeof s)
        return usage_error(c, "fmi2DeSerializeFMUstate",
                           "serialized state has %lu bytes, expected %lu", (unsigned long)size,
                           (unsigned long)sizeof s);
    memcpy(&s, serializedState, sizeof s);
    if (strncmp(s.guid, MODEL_GUID, sizeof s.guid) != 0)
        return usage_error(c, "fmi2DeSerializeFMUstate",
                           "serialized state belongs to another model (GUID %.63s)", s.guid);
    d = (ModelData *)c->cb.allocateMemory(1, sizeof(ModelData));
    if (!d) return usage_error(c, "fmi2DeSerializeFMUstate", "out of memory");
    *d = s.d;
    *FMUstate = d;
    return fmi2OK;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component comp, const fmi2ValueReference vUnknown_ref[],
                                        size_t nUnknown, const fmi2ValueReference vKnown_ref[],
                                        size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[])
{
    ModelInstance *c = (ModelInstance *)comp;
#ifdef MODEL_DIRECTIONAL_DERIVATIVE
    fmi2Status s;
    CHECK(c, "fmi2GetDirectionalDerivative", ST_EVALUABLE | ST_TERMINATED | ST_ERROR);
    if ((nUnknown > 0 && (!vUnknown_ref || !dvUnknown)) || (nKnown > 0 && (!vKnown_ref || !dvKnown)))
        return usage_error(c, "fmi2GetDirectionalDerivative", "NULL argument");
    if (refresh(c, "fmi2GetDirectionalDerivative") > fmi2Warning) return fmi2Error;
    s = model_directional_derivative(c, vUnknown_ref, nUnknown, vKnown_ref, nKnown, dvKnown,
                                     dvUnknown);
    if (s > fmi2Warning)
        return usage_error(c, "fmi2GetDirectionalDerivative", "%s", c->message);
    return s;
#else
    (void)vUnknown_ref;
    (void)nUnknown;
    (void)vKnown_ref;
    (void)nKnown;
    (void)dvKnown;
    (void)dvUnknown;
    if (!c) return fmi2Error;
    return usage_error(c, "fmi2GetDirectionalDerivative",
                       "not provided (providesDirectionalDerivative=false)");
#endif
}

/* ------------------------------------------------------------------------- model exchange */
fmi2Status fmi2EnterEventMode(fmi2Component comp)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2EnterEventMode", ST_EVENT | ST_CONTINUOUS);
    c->d.state = ST_EVENT;
    return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component comp, fmi2EventInfo *eventInfo)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2NewDiscreteStates", ST_EVENT);
    if (!eventInfo) return usage_error(c, "fmi2NewDiscreteStates", "eventInfo is NULL");
    eventInfo->newDiscreteStatesNeeded = fmi2False;
    eventInfo->terminateSimulation = fmi2False;
    eventInfo->nominalsOfContinuousStatesChanged = fmi2False;
    eventInfo->valuesOfContinuousStatesChanged = fmi2False;
    eventInfo->nextEventTimeDefined = fmi2False;
    eventInfo->nextEventTime = 0.0;
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component comp)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2EnterContinuousTimeMode", ST_EVENT);
    c->d.state = ST_CONTINUOUS;
    return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component comp,
                                       fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode,
                                       fmi2Boolean *terminateSimulation)
{
    ModelInstance *c = (ModelInstance *)comp;
    (void)noSetFMUStatePriorToCurrentPoint;
    CHECK(c, "fmi2CompletedIntegratorStep", ST_CONTINUOUS);
    if (enterEventMode) *enterEventMode = fmi2False;
    if (terminateSimulation) *terminateSimulation = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component comp, fmi2Real time)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2SetTime", ST_INSTANTIATED | ST_INITIALIZATION | ST_EVENT | ST_CONTINUOUS);
    if (!isfinite(time)) return usage_error(c, "fmi2SetTime", "time %g is not finite", time);
    c->d.time = time;
    c->d.dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component comp, const fmi2Real x[], size_t nx)
{
    ModelInstance *c = (ModelInstance *)comp;
    size_t k;
    CHECK(c, "fmi2SetContinuousStates", ST_EVENT | ST_CONTINUOUS);
    if (nx != N_STATES)
        return usage_error(c, "fmi2SetContinuousStates", "nx = %lu, but the model has %d states",
                           (unsigned long)nx, N_STATES);
    if (nx > 0 && !x) return usage_error(c, "fmi2SetContinuousStates", "x is NULL");
    for (k = 0; k < nx; k++) c->d.r[STATE_VR[k]] = x[k];
    c->d.dirty = 1;
    return fmi2OK;
}

#define ST_DERIVATIVES (ST_INITIALIZATION | ST_EVENT | ST_CONTINUOUS | ST_TERMINATED | ST_ERROR)

fmi2Status fmi2GetDerivatives(fmi2Component comp, fmi2Real derivatives[], size_t nx)
{
    ModelInstance *c = (ModelInstance *)comp;
    size_t k;
    CHECK(c, "fmi2GetDerivatives", ST_DERIVATIVES);
    if (nx != N_STATES)
        return usage_error(c, "fmi2GetDerivatives", "nx = %lu, but the model has %d states",
                           (unsigned long)nx, N_STATES);
    if (nx > 0 && !derivatives) return usage_error(c, "fmi2GetDerivatives", "derivatives is NULL");
    if (refresh(c, "fmi2GetDerivatives") > fmi2Warning) return fmi2Error;
    for (k = 0; k < nx; k++) derivatives[k] = c->d.r[DER_VR[k]];
    return fmi2OK;
}

fmi2Status fmi2GetEventIndicators(fmi2Component comp, fmi2Real eventIndicators[], size_t ni)
{
    ModelInstance *c = (ModelInstance *)comp;
    (void)eventIndicators;
    CHECK(c, "fmi2GetEventIndicators", ST_DERIVATIVES);
    if (ni != 0)
        return usage_error(c, "fmi2GetEventIndicators", "ni = %lu, but the model has none",
                           (unsigned long)ni);
    return fmi2OK;
}

fmi2Status fmi2GetContinuousStates(fmi2Component comp, fmi2Real x[], size_t nx)
{
    ModelInstance *c = (ModelInstance *)comp;
    size_t k;
    CHECK(c, "fmi2GetContinuousStates", ST_DERIVATIVES);
    if (nx != N_STATES)
        return usage_error(c, "fmi2GetContinuousStates", "nx = %lu, but the model has %d states",
                           (unsigned long)nx, N_STATES);
    if (nx > 0 && !x) return usage_error(c, "fmi2GetContinuousStates", "x is NULL");
    if ((c->d.state & ST_INITIALIZATION) && refresh(c, "fmi2GetContinuousStates") > fmi2Warning)
        return fmi2Error;
    for (k = 0; k < nx; k++) x[k] = c->d.r[STATE_VR[k]];
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component comp, fmi2Real x_nominal[], size_t nx)
{
    ModelInstance *c = (ModelInstance *)comp;
    size_t k;
    CHECK(c, "fmi2GetNominalsOfContinuousStates", ST_ANY);
    if (nx != N_STATES)
        return usage_error(c, "fmi2GetNominalsOfContinuousStates",
                           "nx = %lu, but the model has %d states", (unsigned long)nx, N_STATES);
    if (nx > 0 && !x_nominal)
        return usage_error(c, "fmi2GetNominalsOfContinuousStates", "x_nominal is NULL");
    for (k = 0; k < nx; k++) x_nominal[k] = 1.0;
    return fmi2OK;
}

/* ---------------------------------------------------------------------------- co-simulation */
#ifndef MODEL_DO_STEP
#ifndef MODEL_RK4
/* Dormand-Prince 5(4) tableau. */
static const double DP_C[7] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0};
static const double DP_A[7][6] = {
    {0, 0, 0, 0, 0, 0},
    {1.0 / 5, 0, 0, 0, 0, 0},
    {3.0 / 40, 9.0 / 40, 0, 0, 0, 0},
    {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0},
    {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
/* difference between the 5th- and the embedded 4th-order weights */
static const double DP_E[7] = {71.0 / 57600,      0.0,         -71.0 / 16695, 71.0 / 1920,
                               -17253.0 / 339200, 22.0 / 525, -1.0 / 40};

#endif /* MODEL_RK4 */

/* Derivatives at (t, x) into dx; returns 0 on success, 1 on failure (reason in c->message). */
static int rhs(ModelInstance *c, double t, const double *x, double *dx)
{
    int k;
    for (k = 0; k < N_STATES; k++) c->d.r[STATE_VR[k]] = x[k];
    c->d.time = t;
    if (model_evaluate(c, 0) > fmi2Warning) return 1;
    for (k = 0; k < N_STATES; k++) {
        double v = c->d.r[DER_VR[k]];
        if (!isfinite(v)) {
            model_fail(c, "derivative '%s' is not finite (%g) at t = %.17g",
                       REAL_NAMES[DER_VR[k]], v, t);
            return 1;
        }
        dx[k] = v;
    }
    return 0;
}

#ifdef MODEL_RK4
/* Integrate the states from t0 over H with inputs held, by the classical Runge-Kutta scheme of
   order 4 in n_substeps equal substeps (a fixed-step solver of the FMU's own); on success the
   instance is at t0 + H. */
static fmi2Status integrate(ModelInstance *c, double t0, double H)
{
    double *x = c->x, *xs = c->xs, t = t0, h;
    int n = VI(n_substeps), s, i, j;
    static const double STAGE[3] = {0.5, 0.5, 1.0};

    if (n < 1) return model_fail(c, "parameter n_substeps = %d must be >= 1", n);
    h = H / n;
    for (i = 0; i < N_STATES; i++) x[i] = c->d.r[STATE_VR[i]];
    for (s = 0; s < n; s++) {
        t = t0 + s * h;
        if (rhs(c, t, x, c->k[0])) goto fail;
        for (j = 0; j < 3; j++) {
            for (i = 0; i < N_STATES; i++) xs[i] = x[i] + STAGE[j] * h * c->k[j][i];
            if (rhs(c, t + STAGE[j] * h, xs, c->k[j + 1])) goto fail;
        }
        for (i = 0; i < N_STATES; i++)
            x[i] += h / 6.0 * (c->k[0][i] + 2.0 * c->k[1][i] + 2.0 * c->k[2][i] + c->k[3][i]);
    }
    for (i = 0; i < N_STATES; i++) c->d.r[STATE_VR[i]] = x[i];
    c->d.time = t0 + H;
    c->d.dirty = 1;
    return fmi2OK;

fail:
    for (i = 0; i < N_STATES; i++) c->d.r[STATE_VR[i]] = x[i];
    c->d.time = t;
    return fmi2Error;
}
#else
/* Integrate the states from t0 over H with inputs held; on success the instance is at t0 + H. */
static fmi2Status integrate(ModelInstance *c, double t0, double H)
{
    double *x = c->x, *xs = c->xs;
    double rtol = c->d.tolerance_defined ? c->d.tolerance : V(cs_rtol);
    double atol = V(cs_atol);
    int max_steps = VI(cs_max_steps);
    double t = t0, tend = t0 + H, h, h_wanted, err;
    int steps = 0, i, s, j;

    for (i = 0; i < N_STATES; i++) x[i] = c->d.r[STATE_VR[i]];
    if (rhs(c, t, x, c->k[0])) goto fail;
    h = (c->d.h_next > 0.0 && c->d.h_next < H) ? c->d.h_next : H;
    h_wanted = h;
    while (t < tend) {
        double hmin = 1e-12 * fmax(1.0, fabs(t));
        int last = 0, bad = 0;
        if (1.05 * h >= tend - t) {
            h_wanted = h;
            h = tend - t;
            last = 1;
        }
        for (s = 1; s < 7 && !bad; s++) {
            for (i = 0; i < N_STATES; i++) {
                double acc = 0.0;
                for (j = 0; j < s; j++) acc += DP_A[s][j] * c->k[j][i];
                xs[i] = x[i] + h * acc;
            }
            bad = rhs(c, t + DP_C[s] * h, xs, c->k[s]);
        }
        if (bad) { /* a trial point left the model's domain: retry with a smaller step */
            h *= 0.25;
            if (h < hmin) goto fail;
            continue;
        }
        err = 0.0;
        for (i = 0; i < N_STATES; i++) {
            double e = 0.0, sc = atol + rtol * fmax(fabs(x[i]), fabs(xs[i]));
            for (j = 0; j < 7; j++) e += DP_E[j] * c->k[j][i];
            e *= h / sc;
            err += e * e;
        }
        err = sqrt(err / (N_STATES > 0 ? N_STATES : 1));
        if (!(err <= 1.0)) { /* rejected (or non-finite) */
            h *= isfinite(err) ? fmax(0.2, 0.9 * pow(err, -0.2)) : 0.25;
            if (h < hmin) {
                model_fail(c, "the integration step size fell below %g at t = %.17g (error "
                              "estimate %g): the solution is stiff, diverging or not finite",
                           hmin, t, err);
                goto fail;
            }
            continue;
        }
        for (i = 0; i < N_STATES; i++) {
            x[i] = xs[i];
            c->k[0][i] = c->k[6][i];
        }
        t = last ? tend : t + h;
        {
            double h_new = h * (err > 0.0 ? fmin(5.0, 0.9 * pow(err, -0.2)) : 5.0);
            if (last) c->d.h_next = fmax(h_new, fmin(h_wanted, 5.0 * h));
            h = h_new;
        }
        if (++steps >= max_steps && t < tend) {
            model_fail(c, "more than cs_max_steps = %d internal steps in one communication step "
                          "at t = %.17g: the solution is stiff or diverging",
                       max_steps, t);
            goto fail;
        }
    }
    for (i = 0; i < N_STATES; i++) c->d.r[STATE_VR[i]] = x[i];
    c->d.time = tend;
    c->d.dirty = 1;
    return fmi2OK;

fail:
    for (i = 0; i < N_STATES; i++) c->d.r[STATE_VR[i]] = x[i];
    c->d.time = t;
    return fmi2Error;
}

#endif /* MODEL_RK4 */
#endif /* MODEL_DO_STEP */

fmi2Status fmi2SetRealInputDerivatives(fmi2Component comp, const fmi2ValueReference vr[],
                                       size_t nvr, const fmi2Integer order[],
                                       const fmi2Real value[])
{
    ModelInstance *c = (ModelInstance *)comp;
    (void)vr;
    (void)nvr;
    (void)order;
    (void)value;
    if (!c) return fmi2Error;
    return usage_error(c, "fmi2SetRealInputDerivatives",
                       "not supported (canInterpolateInputs=false)");
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component comp, const fmi2ValueReference vr[],
                                        size_t nvr, const fmi2Integer order[], fmi2Real value[])
{
    ModelInstance *c = (ModelInstance *)comp;
    (void)vr;
    (void)nvr;
    (void)order;
    (void)value;
    if (!c) return fmi2Error;
    return usage_error(c, "fmi2GetRealOutputDerivatives",
                       "not supported (maxOutputDerivativeOrder=0)");
}

fmi2Status fmi2DoStep(fmi2Component comp, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    ModelInstance *c = (ModelInstance *)comp;
    double t0 = currentCommunicationPoint, H = communicationStepSize;
    (void)noSetFMUStatePriorToCurrentPoint;
    CHECK(c, "fmi2DoStep", ST_STEP_COMPLETE);
    if (!(H >= 0.0) || !isfinite(H))
        return usage_error(c, "fmi2DoStep", "communicationStepSize %g must be >= 0", H);
    /* (ternaries, not fmax: a call into libm on every step) */
    if (!(fabs(t0 - c->d.time) <= 1e-9 * (fabs(t0) > 1.0 ? fabs(t0) : 1.0)))
        return usage_error(c, "fmi2DoStep",
                           "currentCommunicationPoint %.17g differs from the FMU time %.17g", t0,
                           c->d.time);
    if (c->d.stop_time_defined &&
        t0 + H > c->d.stop_time + 1e-9 * (fabs(c->d.stop_time) > 1.0 ? fabs(c->d.stop_time) : 1.0))
        return usage_error(c, "fmi2DoStep", "step to %.17g goes beyond the stop time %.17g",
                           t0 + H, c->d.stop_time);
    if (H == 0.0) return refresh(c, "fmi2DoStep");
#ifdef MODEL_DO_STEP
    if (model_do_step(c, t0, H) > fmi2Warning) {
#else
    if (integrate(c, t0, H) > fmi2Warning) {
#endif
        char reason[sizeof c->message];
        memcpy(reason, c->message, sizeof reason);
        snprintf(c->message, sizeof c->message, "integration from t = %.17g failed: %s", t0,
                 reason);
        return failed(c, "fmi2DoStep");
    }
    /* the new state is checked here; the outputs are evaluated when they are read (a master
       that sets the next inputs first would discard an evaluation made now) */
    if (!all_finite(c, STATE_VR, N_STATES)) {
        int k;
        for (k = 0; k < N_STATES; k++)
            if (!isfinite(c->d.r[STATE_VR[k]])) {
                model_fail(c, "state '%s' is not finite (%g) at t = %.17g",
                           REAL_NAMES[STATE_VR[k]], c->d.r[STATE_VR[k]], t0 + H);
                return failed(c, "fmi2DoStep");
            }
    }
    c->d.dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component comp)
{
    ModelInstance *c = (ModelInstance *)comp;
    if (!c) return fmi2Error;
    return usage_error(c, "fmi2CancelStep", "fmi2DoStep never returns fmi2Pending");
}

fmi2Status fmi2GetStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Status *value)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2GetStatus", ST_ANY);
    if (s == fmi2DoStepStatus && value) {
        *value = c->d.state == ST_ERROR ? fmi2Error : fmi2OK;
        return fmi2OK;
    }
    return fmi2Discard;
}

fmi2Status fmi2GetRealStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Real *value)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2GetRealStatus", ST_ANY);
    if (s == fmi2LastSuccessfulTime && value) {
        *value = c->d.time;
        return fmi2OK;
    }
    return fmi2Discard;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Integer *value)
{
    ModelInstance *c = (ModelInstance *)comp;
    (void)s;
    (void)value;
    CHECK(c, "fmi2GetIntegerStatus", ST_ANY);
    return fmi2Discard;
}

fmi2Status fmi2GetBooleanStatus(fmi2Component comp, const fmi2StatusKind s, fmi2Boolean *value)
{
    ModelInstance *c = (ModelInstance *)comp;
    CHECK(c, "fmi2GetBooleanStatus", ST_ANY);
    if (s == fmi2Terminated && value) {
        *value = fmi2False;
        return fmi2OK;
    }
    return fmi2Discard;
}

fmi2Status fmi2GetStringStatus(fmi2Component comp, const fmi2StatusKind s, fmi2String *value)
{
    ModelInstance *c = (ModelInstance *)comp;
    (void)s;
    (void)value;
    CHECK(c, "fmi2GetStringStatus", ST_ANY);
    return fmi2Discard;
}

/* typed: an FMI 2.0 FMU (co-simulation and model exchange, no states) whose interface has
 * every FMI 2 type, as vendor FMUs do: a Real feedthrough beside Integer, Enumeration, Boolean
 * and String inputs and outputs.
 *
 *   y        = gain u                  Real output of the Real input u (gain: tunable)
 *   m        = 2 n + offset            Integer output of the Integer input n (offset: fixed)
 *   e_next   = e mod 3 + 1             Enumeration output (1 -> 2 -> 3 -> 1) of the input e
 *   not_b    = !b                      Boolean output of the Boolean input b
 *   s_out    = s                       String output of the String input s
 *   s_length = strlen(s)               Real output: the length of s
 *
 * Outputs are computed when they are read, so co-simulation and model exchange give the same
 * values; a step only advances the time.
 */
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

/* value references, per type */
enum { VR_U = 0, VR_Y = 1, VR_GAIN = 2, VR_S_LENGTH = 3 };           /* Real */
enum { VR_N = 0, VR_M = 1, VR_OFFSET = 2, VR_E = 3, VR_E_NEXT = 4 }; /* Integer, Enumeration */
enum { VR_B = 0, VR_NOT_B = 1 };                                     /* Boolean */
enum { VR_S = 0, VR_S_OUT = 1 };                                     /* String */

#define S_MAX 256

typedef struct {
    fmi2CallbackFunctions cb;
    double u, gain, time;
    int n, offset, e, b;
    char s[S_MAX];
} Instance;

static void set_defaults(Instance *m) {
    m->u = 0.0; m->gain = 1.0; m->time = 0.0;
    m->n = 0; m->offset = 1; m->e = 1; m->b = 0;
    strcpy(m->s, "hello");
}

#define FAIL(m, fn, vr)                                                                        \
    do {                                                                                       \
        if ((m)->cb.logger)                                                                    \
            (m)->cb.logger((m)->cb.componentEnvironment, "typed", fmi2Error, "logStatusError", \
                           fn ": value reference %u is not valid here", (vr));                 \
        return fmi2Error;                                                                      \
    } while (0)

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
    (void)c; (void)on; (void)n; (void)cat;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String guid,
                              fmi2String resourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn) {
    (void)instanceName; (void)fmuType; (void)guid; (void)resourceLocation; (void)visible;
    (void)loggingOn;
    Instance *m = (Instance *)calloc(1, sizeof(Instance));
    if (!m) return NULL;
    m->cb = *functions;
    set_defaults(m);
    return m;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDef, fmi2Real tol,
                               fmi2Real startTime, fmi2Boolean stopDef, fmi2Real stopTime) {
    (void)tolDef; (void)tol; (void)stopDef; (void)stopTime;
    ((Instance *)c)->time = startTime;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2ExitInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Reset(fmi2Component c) { set_defaults((Instance *)c); return fmi2OK; }

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       fmi2Real value[]) {
    Instance *m = (Instance *)c;
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case VR_U: value[i] = m->u; break;
        case VR_Y: value[i] = m->gain * m->u; break;
        case VR_GAIN: value[i] = m->gain; break;
        case VR_S_LENGTH: value[i] = (double)strlen(m->s); break;
        default: FAIL(m, "fmi2GetReal", vr[i]);
        }
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[]) {
    Instance *m = (Instance *)c;
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case VR_U: m->u = value[i]; break;
        case VR_GAIN: m->gain = value[i]; break;
        default: FAIL(m, "fmi2SetReal", vr[i]);
        }
    }
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Integer value[]) {
    Instance *m = (Instance *)c;
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case VR_N: value[i] = m->n; break;
        case VR_M: value[i] = 2 * m->n + m->offset; break;
        case VR_OFFSET: value[i] = m->offset; break;
        case VR_E: value[i] = m->e; break;
        case VR_E_NEXT: value[i] = m->e % 3 + 1; break;
        default: FAIL(m, "fmi2GetInteger", vr[i]);
        }
    }
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Integer value[]) {
    Instance *m = (Instance *)c;
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case VR_N: m->n = value[i]; break;
        case VR_OFFSET: m->offset = value[i]; break;
        case VR_E:
            if (value[i] < 1 || value[i] > 3) FAIL(m, "fmi2SetInteger (e out of 1..3)", vr[i]);
            m->e = value[i];
            break;
        default: FAIL(m, "fmi2SetInteger", vr[i]);
        }
    }
    return fmi2OK;
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Boolean value[]) {
    Instance *m = (Instance *)c;
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case VR_B: value[i] = m->b ? fmi2True : fmi2False; break;
        case VR_NOT_B: value[i] = m->b ? fmi2False : fmi2True; break;
        default: FAIL(m, "fmi2GetBoolean", vr[i]);
        }
    }
    return fmi2OK;
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Boolean value[]) {
    Instance *m = (Instance *)c;
    for (size_t i = 0; i < nvr; i++) {
        if (vr[i] != VR_B) FAIL(m, "fmi2SetBoolean", vr[i]);
        m->b = value[i] != fmi2False;
    }
    return fmi2OK;
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         fmi2String value[]) {
    Instance *m = (Instance *)c;
    for (size_t i = 0; i < nvr; i++) {
        if (vr[i] != VR_S && vr[i] != VR_S_OUT) FAIL(m, "fmi2GetString", vr[i]);
        value[i] = m->s;
    }
    return fmi2OK;
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         const fmi2String value[]) {
    Instance *m = (Instance *)c;
    for (size_t i = 0; i < nvr; i++) {
        if (vr[i] != VR_S || !value[i]) FAIL(m, "fmi2SetString", vr[i]);
        strncpy(m->s, value[i], S_MAX - 1);
        m->s[S_MAX - 1] = '\0';
    }
    return fmi2OK;
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *n) {
    (void)c; (void)s; (void)n; return fmi2Error;
}
fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n) {
    (void)c; (void)s; (void)b; (void)n; return fmi2Error;
}
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate *s) {
    (void)c; (void)b; (void)n; (void)s; return fmi2Error;
}
fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                        const fmi2ValueReference z[], size_t nz,
                                        const fmi2Real dv[], fmi2Real dz[]) {
    (void)c; (void)u; (void)nu; (void)z; (void)nz; (void)dv; (void)dz; return fmi2Error;
}
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[]) {
    (void)c; (void)vr; (void)nvr; (void)order; (void)value; return fmi2Error;
}
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[]) {
    (void)c; (void)vr; (void)nvr; (void)order; (void)value; return fmi2Error;
}

/* ------------------------------------------------------------------ co-simulation */
fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetPrior) {
    (void)noSetPrior;
    ((Instance *)c)->time = t + h;
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value) {
    (void)c; (void)s; *value = fmi2OK; return fmi2OK;
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value) {
    if (s != fmi2LastSuccessfulTime) return fmi2Discard;
    *value = ((Instance *)c)->time;
    return fmi2OK;
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value) {
    (void)c; (void)s; (void)value; return fmi2Discard;
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value) {
    (void)c;
    if (s != fmi2Terminated) return fmi2Discard;
    *value = fmi2False;
    return fmi2OK;
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value) {
    (void)c; (void)s; (void)value; return fmi2Discard;
}

/* ------------------------------------------------------------------ model exchange */
fmi2Status fmi2EnterEventMode(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
    (void)c;
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = fmi2False;
    info->nextEventTimeDefined = fmi2False;
    info->nextEventTime = 0.0;
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetPrior,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminate) {
    (void)c; (void)noSetPrior;
    *enterEventMode = fmi2False;
    *terminate = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) { ((Instance *)c)->time = t; return fmi2OK; }

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx) {
    (void)c; (void)x;
    return nx == 0 ? fmi2OK : fmi2Error;
}
fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx) {
    (void)c; (void)dx;
    return nx == 0 ? fmi2OK : fmi2Error;
}
fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t nz) {
    (void)c; (void)z;
    return nz == 0 ? fmi2OK : fmi2Error;
}
fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    (void)c; (void)x;
    return nx == 0 ? fmi2OK : fmi2Error;
}
fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    (void)c; (void)x;
    return nx == 0 ? fmi2OK : fmi2Error;
}

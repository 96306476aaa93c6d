/* relay: a small FMI 2.0 model-exchange-only FMU with state and time events — a body heated
 * by a heater under a thermostat (a relay with hysteresis), as tools export such parts.
 *
 *   x' = u - k x + p on            (x: temperature, u: a heat input, on: the heater, 0 or 1)
 *
 * State events: the heater switches off where x rises to `hi` and on where it falls to `lo`
 * (event indicator z = hi - x while on, x - lo while off).  Time event: at t = t_kick the
 * temperature jumps by `kick` (valuesOfContinuousStatesChanged).  Outputs x and on.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

enum { VR_X, VR_DER_X, VR_U, VR_K, VR_P, VR_LO, VR_HI, VR_X0, VR_T_KICK, VR_KICK, VR_ON, NVR };

typedef struct {
    double r[NVR];
    double time;
    int kicked;
} Instance;

static void defaults(Instance *m) {
    static const double start[NVR] = {0, 0, 0, 1.0, 2.0, 1.0, 1.5, 0.0, 1.0, 0.3, 1.0};
    memcpy(m->r, start, sizeof start);
    m->time = 0.0;
    m->kicked = 0;
}

static double derivative(const Instance *m) {
    return m->r[VR_U] - m->r[VR_K] * m->r[VR_X] + m->r[VR_P] * m->r[VR_ON];
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }
fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String s[]) {
    (void)c; (void)on; (void)n; (void)s; return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String res,
                              const fmi2CallbackFunctions *cb, fmi2Boolean vis, fmi2Boolean log) {
    (void)name; (void)guid; (void)res; (void)cb; (void)vis; (void)log;
    if (type != fmi2ModelExchange) return NULL;
    Instance *m = (Instance *)calloc(1, sizeof(Instance));
    if (m) defaults(m);
    return m;
}
void fmi2FreeInstance(fmi2Component c) { free(c); }
fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean td, fmi2Real tol, fmi2Real t0,
                               fmi2Boolean sd, fmi2Real t1) {
    (void)td; (void)tol; (void)sd; (void)t1;
    ((Instance *)c)->time = t0;
    return fmi2OK;
}
fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    Instance *m = (Instance *)c;
    m->r[VR_X] = m->r[VR_X0];
    m->r[VR_ON] = m->r[VR_X] < m->r[VR_HI] ? 1.0 : 0.0;
    return fmi2OK;
}
fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Reset(fmi2Component c) { defaults((Instance *)c); return fmi2OK; }

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    Instance *m = (Instance *)c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= NVR) return fmi2Error;
        v[i] = vr[i] == VR_DER_X ? derivative(m) : m->r[vr[i]];
    }
    return fmi2OK;
}
fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                       const fmi2Real v[]) {
    Instance *m = (Instance *)c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= NVR || vr[i] == VR_X || vr[i] == VR_DER_X || vr[i] == VR_ON) return fmi2Error;
        m->r[vr[i]] = v[i];
    }
    return fmi2OK;
}
fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Integer v[]) {
    (void)c; (void)vr; (void)v; return n == 0 ? fmi2OK : fmi2Error;
}
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Integer v[]) {
    (void)c; (void)vr; (void)v; return n == 0 ? fmi2OK : fmi2Error;
}
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Boolean v[]) {
    (void)c; (void)vr; (void)v; return n == 0 ? fmi2OK : fmi2Error;
}
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Boolean v[]) {
    (void)c; (void)vr; (void)v; return n == 0 ? fmi2OK : fmi2Error;
}
fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         fmi2String v[]) {
    (void)c; (void)vr; (void)v; return n == 0 ? fmi2OK : fmi2Error;
}
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         const fmi2String v[]) {
    (void)c; (void)vr; (void)v; return n == 0 ? fmi2OK : fmi2Error;
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
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n,
                                   fmi2FMUstate *s) {
    (void)c; (void)b; (void)n; (void)s; return fmi2Error;
}
fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                        const fmi2ValueReference z[], size_t nz,
                                        const fmi2Real dv[], fmi2Real dz[]) {
    (void)c; (void)u; (void)nu; (void)z; (void)nz; (void)dv; (void)dz; return fmi2Error;
}

/* ------------------------------------------------------------------ model exchange */
fmi2Status fmi2EnterEventMode(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
    Instance *m = (Instance *)c;
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = fmi2False;
    if (!m->kicked && m->time >= m->r[VR_T_KICK] - 1e-12) {
        m->r[VR_X] += m->r[VR_KICK];
        m->kicked = 1;
        info->valuesOfContinuousStatesChanged = fmi2True;
    }
    /* the relay: switch where the temperature has reached a threshold (the integrator locates
       the crossing to its tolerance, so a small band decides) */
    if (m->r[VR_ON] != 0.0 && m->r[VR_X] >= m->r[VR_HI] - 1e-9) {
        m->r[VR_ON] = 0.0;
    } else if (m->r[VR_ON] == 0.0 && m->r[VR_X] <= m->r[VR_LO] + 1e-9) {
        m->r[VR_ON] = 1.0;
    }
    info->nextEventTimeDefined = m->kicked ? fmi2False : fmi2True;
    info->nextEventTime = m->r[VR_T_KICK];
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
    if (nx != 1) return fmi2Error;
    ((Instance *)c)->r[VR_X] = x[0];
    return fmi2OK;
}
fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx) {
    if (nx != 1) return fmi2Error;
    dx[0] = derivative((Instance *)c);
    return fmi2OK;
}
fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t nz) {
    Instance *m = (Instance *)c;
    if (nz != 1) return fmi2Error;
    z[0] = m->r[VR_ON] != 0.0 ? m->r[VR_HI] - m->r[VR_X] : m->r[VR_X] - m->r[VR_LO];
    return fmi2OK;
}
fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    if (nx != 1) return fmi2Error;
    x[0] = ((Instance *)c)->r[VR_X];
    return fmi2OK;
}
fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    (void)c;
    if (nx != 1) return fmi2Error;
    x[0] = 1.0;
    return fmi2OK;
}

/* ------------------------------------------------------------------ co-simulation (none) */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer o[], const fmi2Real v[]) {
    (void)c; (void)vr; (void)n; (void)o; (void)v; return fmi2Error;
}
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer o[], fmi2Real v[]) {
    (void)c; (void)vr; (void)n; (void)o; (void)v; return fmi2Error;
}
fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean p) {
    (void)c; (void)t; (void)h; (void)p; return fmi2Error;
}
fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v) {
    (void)c; (void)s; (void)v; return fmi2Discard;
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v) {
    (void)c; (void)s; (void)v; return fmi2Discard;
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v) {
    (void)c; (void)s; (void)v; return fmi2Discard;
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v) {
    (void)c; (void)s; (void)v; return fmi2Discard;
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v) {
    (void)c; (void)s; (void)v; return fmi2Discard;
}

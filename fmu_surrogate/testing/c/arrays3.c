/* arrays3: an FMI 3.0 FMU (co-simulation and model exchange) with array variables, as vendor
 * FMUs have them: a linear state-space model
 *
 *     x' = A x + B u,   y = C x + D u,   x(t0) = x0
 *
 * with the input u[3], the output y[3], the state x[3] and its derivative der(x)[3], the
 * parameters A, B, C, D (3x3, row-major) and x0[3] (their size: the structural parameter n_x,
 * which stays 3); beside it an Int32 input n with the Int32
 * output m = 2 n + 1, a Boolean input b with the Boolean output not_b = !b and a String input s
 * with the String output s_out = s.
 *
 * Co-simulation holds u over each step and integrates with 50 classical Runge-Kutta substeps
 * per step (local error of order (|eigenvalue| h / 50)^5 / 120: about 1e-17 for
 * |eigenvalue| h = 0.05); model exchange gives the derivative to the importer's solver.
 */
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"

#define N 3
#define S_MAX 256
#define SUBSTEPS 50

enum { VR_TIME = 0, VR_U = 1, VR_Y = 2, VR_A = 3, VR_B = 4, VR_C = 5, VR_D = 6, VR_X0 = 7,
       VR_X = 8, VR_DER_X = 9, VR_N = 10, VR_M = 11, VR_BOOL = 12, VR_NOT_B = 13, VR_S = 14,
       VR_S_OUT = 15, VR_N_X = 16 };

typedef struct {
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
    double time, u[N], A[N * N], B[N * N], C[N * N], D[N * N], x0[N], x[N];
    int n, b;
    char s[S_MAX];
} Instance;

static void set_defaults(Instance *m) {
    static const double eye[N * N] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    m->time = 0.0;
    for (int i = 0; i < N; i++) { m->u[i] = i + 1.0; m->x0[i] = 0.0; m->x[i] = 0.0; }
    for (int i = 0; i < N * N; i++) { m->A[i] = -eye[i]; m->B[i] = eye[i]; m->C[i] = eye[i];
                                      m->D[i] = 0.0; }
    m->n = 0; m->b = 0;
    strcpy(m->s, "hello");
}

static void fail(Instance *m, const char *what) {
    if (m->log) m->log(m->env, fmi3Error, "logStatusError", what);
}

/* out = M v (+ out when add) */
static void matvec(const double *M, const double *v, double *out, int add) {
    for (int i = 0; i < N; i++) {
        double s = add ? out[i] : 0.0;
        for (int j = 0; j < N; j++) s += M[i * N + j] * v[j];
        out[i] = s;
    }
}

static void derivative(const Instance *m, const double *x, double *dx) {
    matvec(m->A, x, dx, 0);
    matvec(m->B, m->u, dx, 1);
}

static void output(const Instance *m, double *y) {
    matvec(m->C, m->x, y, 0);
    matvec(m->D, m->u, y, 1);
}

/* the array of value reference vr and its length, NULL for a scalar or an unknown one */
static double *array_of(Instance *m, fmi3ValueReference vr, size_t *len) {
    *len = N * N;
    switch (vr) {
    case VR_A: return m->A;
    case VR_B: return m->B;
    case VR_C: return m->C;
    case VR_D: return m->D;
    }
    *len = N;
    switch (vr) {
    case VR_U: return m->u;
    case VR_X0: return m->x0;
    case VR_X: return m->x;
    }
    return NULL;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[]) {
    (void)instance; (void)loggingOn; (void)nCategories; (void)categories;
    return fmi3OK;
}

static Instance *new_instance(fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {
    Instance *m = (Instance *)calloc(1, sizeof(Instance));
    if (!m) return NULL;
    m->env = env;
    m->log = log;
    set_defaults(m);
    return m;
}

fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
    fmi3Boolean earlyReturnAllowed, const fmi3ValueReference requiredIntermediateVariables[],
    size_t nRequiredIntermediateVariables, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3IntermediateUpdateCallback intermediateUpdate) {
    (void)instanceName; (void)instantiationToken; (void)resourcePath; (void)visible;
    (void)loggingOn; (void)eventModeUsed; (void)earlyReturnAllowed;
    (void)requiredIntermediateVariables; (void)nRequiredIntermediateVariables;
    (void)intermediateUpdate;
    return new_instance(instanceEnvironment, logMessage);
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible,
                                          fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage) {
    (void)instanceName; (void)instantiationToken; (void)resourcePath; (void)visible;
    (void)loggingOn;
    return new_instance(instanceEnvironment, logMessage);
}

void fmi3FreeInstance(fmi3Instance instance) { free(instance); }

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
    (void)toleranceDefined; (void)tolerance; (void)stopTimeDefined; (void)stopTime;
    ((Instance *)instance)->time = startTime;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance) {
    Instance *m = (Instance *)instance;
    memcpy(m->x, m->x0, sizeof m->x);
    return fmi3OK;
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance) { (void)instance; return fmi3OK; }
fmi3Status fmi3Terminate(fmi3Instance instance) { (void)instance; return fmi3OK; }
fmi3Status fmi3Reset(fmi3Instance instance) { set_defaults((Instance *)instance); return fmi3OK; }
fmi3Status fmi3EnterStepMode(fmi3Instance instance) { (void)instance; return fmi3OK; }

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined,
                                    fmi3Float64 *nextEventTime) {
    (void)instance;
    *discreteStatesNeedUpdate = fmi3False; *terminateSimulation = fmi3False;
    *nominalsOfContinuousStatesChanged = fmi3False; *valuesOfContinuousStatesChanged = fmi3False;
    *nextEventTimeDefined = fmi3False; *nextEventTime = 0.0;
    return fmi3OK;
}

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Float64 values[], size_t nValues) {
    Instance *m = (Instance *)instance;
    size_t k = 0, len;
    for (size_t i = 0; i < nvr; i++) {
        double *a = array_of(m, vr[i], &len);
        if (vr[i] == VR_Y || vr[i] == VR_DER_X) len = N;
        else if (!a) len = 1;
        if (k + len > nValues) { fail(m, "fmi3GetFloat64: nValues too small"); return fmi3Error; }
        if (a) { memcpy(values + k, a, len * sizeof(double)); k += len; continue; }
        switch (vr[i]) {
        case VR_TIME: values[k] = m->time; break;
        case VR_Y: output(m, values + k); break;
        case VR_DER_X: derivative(m, m->x, values + k); break;
        default: fail(m, "fmi3GetFloat64: unknown value reference"); return fmi3Error;
        }
        k += len;
    }
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Float64 values[], size_t nValues) {
    Instance *m = (Instance *)instance;
    size_t k = 0, len;
    for (size_t i = 0; i < nvr; i++) {
        double *a = array_of(m, vr[i], &len);
        if (!a || vr[i] == VR_X) { fail(m, "fmi3SetFloat64: not settable"); return fmi3Error; }
        if (k + len > nValues) { fail(m, "fmi3SetFloat64: nValues too small"); return fmi3Error; }
        memcpy(a, values + k, len * sizeof(double));
        k += len;
    }
    return fmi3OK;
}

fmi3Status fmi3GetInt32(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        fmi3Int32 values[], size_t nValues) {
    Instance *m = (Instance *)instance;
    for (size_t i = 0; i < nvr && i < nValues; i++) {
        if (vr[i] == VR_N) values[i] = m->n;
        else if (vr[i] == VR_M) values[i] = 2 * m->n + 1;
        else { fail(m, "fmi3GetInt32: unknown value reference"); return fmi3Error; }
    }
    return fmi3OK;
}

fmi3Status fmi3SetInt32(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        const fmi3Int32 values[], size_t nValues) {
    Instance *m = (Instance *)instance;
    for (size_t i = 0; i < nvr && i < nValues; i++) {
        if (vr[i] != VR_N) { fail(m, "fmi3SetInt32: not settable"); return fmi3Error; }
        m->n = values[i];
    }
    return fmi3OK;
}

fmi3Status fmi3GetBoolean(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Boolean values[], size_t nValues) {
    Instance *m = (Instance *)instance;
    for (size_t i = 0; i < nvr && i < nValues; i++) {
        if (vr[i] == VR_BOOL) values[i] = m->b ? fmi3True : fmi3False;
        else if (vr[i] == VR_NOT_B) values[i] = m->b ? fmi3False : fmi3True;
        else { fail(m, "fmi3GetBoolean: unknown value reference"); return fmi3Error; }
    }
    return fmi3OK;
}

fmi3Status fmi3SetBoolean(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Boolean values[], size_t nValues) {
    Instance *m = (Instance *)instance;
    for (size_t i = 0; i < nvr && i < nValues; i++) {
        if (vr[i] != VR_BOOL) { fail(m, "fmi3SetBoolean: not settable"); return fmi3Error; }
        m->b = values[i] != fmi3False;
    }
    return fmi3OK;
}

fmi3Status fmi3GetString(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         fmi3String values[], size_t nValues) {
    Instance *m = (Instance *)instance;
    for (size_t i = 0; i < nvr && i < nValues; i++) {
        if (vr[i] != VR_S && vr[i] != VR_S_OUT) {
            fail(m, "fmi3GetString: unknown value reference");
            return fmi3Error;
        }
        values[i] = m->s;
    }
    return fmi3OK;
}

fmi3Status fmi3SetString(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         const fmi3String values[], size_t nValues) {
    Instance *m = (Instance *)instance;
    for (size_t i = 0; i < nvr && i < nValues; i++) {
        if (vr[i] != VR_S || !values[i]) { fail(m, "fmi3SetString: not settable"); return fmi3Error; }
        strncpy(m->s, values[i], S_MAX - 1);
        m->s[S_MAX - 1] = '\0';
    }
    return fmi3OK;
}

fmi3Status fmi3GetUInt64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         fmi3UInt64 values[], size_t nValues) {
    for (size_t i = 0; i < nvr && i < nValues; i++) {
        if (vr[i] != VR_N_X) {
            fail((Instance *)instance, "fmi3GetUInt64: unknown value reference");
            return fmi3Error;
        }
        values[i] = N;
    }
    return fmi3OK;
}

fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 t, fmi3Float64 h,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    (void)noSetFMUStatePriorToCurrentPoint;
    Instance *m = (Instance *)instance;
    double dt = h / SUBSTEPS, k1[N], k2[N], k3[N], k4[N], xt[N];
    for (int s = 0; s < SUBSTEPS; s++) {
        derivative(m, m->x, k1);
        for (int i = 0; i < N; i++) xt[i] = m->x[i] + 0.5 * dt * k1[i];
        derivative(m, xt, k2);
        for (int i = 0; i < N; i++) xt[i] = m->x[i] + 0.5 * dt * k2[i];
        derivative(m, xt, k3);
        for (int i = 0; i < N; i++) xt[i] = m->x[i] + dt * k3[i];
        derivative(m, xt, k4);
        for (int i = 0; i < N; i++) m->x[i] += dt / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    }
    m->time = t + h;
    *eventHandlingNeeded = fmi3False;
    *terminateSimulation = fmi3False;
    *earlyReturn = fmi3False;
    *lastSuccessfulTime = m->time;
    return fmi3OK;
}

/* ------------------------------------------------------------------ model exchange */
fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance) { (void)instance; return fmi3OK; }

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance,
                                       fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode,
                                       fmi3Boolean *terminateSimulation) {
    (void)instance; (void)noSetFMUStatePriorToCurrentPoint;
    *enterEventMode = fmi3False;
    *terminateSimulation = fmi3False;
    return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) {
    ((Instance *)instance)->time = time;
    return fmi3OK;
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    if (nContinuousStates != N) return fmi3Error;
    memcpy(((Instance *)instance)->x, continuousStates, N * sizeof(double));
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    if (nContinuousStates != N) return fmi3Error;
    memcpy(continuousStates, ((Instance *)instance)->x, N * sizeof(double));
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[],
                                             size_t nContinuousStates) {
    Instance *m = (Instance *)instance;
    if (nContinuousStates != N) return fmi3Error;
    derivative(m, m->x, derivatives);
    return fmi3OK;
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                             size_t nContinuousStates) {
    (void)instance;
    for (size_t i = 0; i < nContinuousStates; i++) nominals[i] = 1.0;
    return fmi3OK;
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 eventIndicators[],
                                  size_t nEventIndicators) {
    (void)instance; (void)eventIndicators;
    return nEventIndicators == 0 ? fmi3OK : fmi3Error;
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators) {
    (void)instance;
    *nEventIndicators = 0;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates) {
    (void)instance;
    *nContinuousStates = N;
    return fmi3OK;
}

/* ---------------------------------------------------------------- unsupported: stubs */
fmi3Instance fmi3InstantiateScheduledExecution(fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment, fmi3LogMessageCallback logMessage, fmi3ClockUpdateCallback clockUpdate, fmi3LockPreemptionCallback lockPreemption, fmi3UnlockPreemptionCallback unlockPreemption) { return NULL; }
fmi3Status fmi3GetFloat32(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3Float32 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3GetInt8(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3Int8 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3GetUInt8(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3UInt8 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3GetInt16(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3Int16 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3GetUInt16(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3UInt16 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3GetUInt32(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3UInt32 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3GetInt64(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3Int64 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, size_t valueSizes[], fmi3Binary values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3Clock values[]) { return fmi3Error; }
fmi3Status fmi3SetFloat32(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3Float32 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3SetInt8(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3Int8 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3SetUInt8(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3UInt8 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3SetInt16(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3Int16 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3SetUInt16(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3UInt16 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3SetUInt32(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3UInt32 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3SetInt64(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3Int64 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3SetUInt64(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3UInt64 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const size_t valueSizes[], const fmi3Binary values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3Clock values[]) { return fmi3Error; }
fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance, fmi3ValueReference valueReference, size_t* nDependencies) { return fmi3Error; }
fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent, size_t elementIndicesOfDependent[], fmi3ValueReference independents[], size_t elementIndicesOfIndependents[], fmi3DependencyKind dependencyKinds[], size_t nDependencies) { return fmi3Error; }
fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState* FMUState) { return fmi3Error; }
fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState) { return fmi3Error; }
fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState* FMUState) { return fmi3Error; }
fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState, size_t* size) { return fmi3Error; }
fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState, fmi3Byte serializedState[], size_t size) { return fmi3Error; }
fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[], size_t size, fmi3FMUState* FMUState) { return fmi3Error; }
fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[], size_t nUnknowns, const fmi3ValueReference knowns[], size_t nKnowns, const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[], size_t nSensitivity) { return fmi3Error; }
fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[], size_t nUnknowns, const fmi3ValueReference knowns[], size_t nKnowns, const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[], size_t nSensitivity) { return fmi3Error; }
fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance) { return fmi3Error; }
fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance) { return fmi3Error; }
fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3Float64 intervals[], fmi3IntervalQualifier qualifiers[]) { return fmi3Error; }
fmi3Status fmi3GetIntervalFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3UInt64 counters[], fmi3UInt64 resolutions[], fmi3IntervalQualifier qualifiers[]) { return fmi3Error; }
fmi3Status fmi3GetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3Float64 shifts[]) { return fmi3Error; }
fmi3Status fmi3GetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, fmi3UInt64 counters[], fmi3UInt64 resolutions[]) { return fmi3Error; }
fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3Float64 intervals[]) { return fmi3Error; }
fmi3Status fmi3SetIntervalFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]) { return fmi3Error; }
fmi3Status fmi3SetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3Float64 shifts[]) { return fmi3Error; }
fmi3Status fmi3SetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]) { return fmi3Error; }
fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance) { return fmi3Error; }
fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, const fmi3Int32 orders[], fmi3Float64 values[], size_t nValues) { return fmi3Error; }
fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference, fmi3Float64 activationTime) { return fmi3Error; }

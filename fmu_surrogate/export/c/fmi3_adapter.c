/*
 * FMI 3.0 interface over the FMI 2.0 framework (fmi2_framework.c):
 * co-simulation and model exchange, scalar Float64 variables, get/set/serialize FMU state and
 * directional derivatives, all forwarded to the fmi2 functions of the same binary (compiled with
 * FMI2_FUNCTION_PREFIX so that only the fmi3 names are the FMU's interface).
 *
 * The independent variable `time` has the value reference VR_TIME3 (after every fmi2 variable).
 * Clocks, scheduled execution, arrays and the other integer/float types are not used by the
 * exported surrogates: those functions report fmi3Error with a logged reason.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2_framework.h"
#include "fmi3Functions.h"

#define VR_TIME3 (N_REALS + N_INTEGERS + N_BOOLEANS)

typedef struct {
    fmi2Component inner;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
    int is_me;
} Adapter;

#define INNER(inst) (((Adapter *)(inst))->inner)

static fmi3Status st3(fmi2Status s)
{
    switch (s) {
    case fmi2OK: return fmi3OK;
    case fmi2Warning: return fmi3Warning;
    case fmi2Discard: return fmi3Discard;
    case fmi2Error: return fmi3Error;
    default: return fmi3Fatal;
    }
}

static void logger2(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status,
                    fmi2String category, fmi2String message, ...)
{
    Adapter *a = (Adapter *)env;
    char text[1400];
    va_list ap;
    (void)name;
    if (!a || !a->log) return;
    va_start(ap, message);
    vsnprintf(text, sizeof text, message, ap);
    va_end(ap);
    a->log(a->env, st3(status), category, text);
}

static void *alloc2(size_t n, size_t size) { return calloc(n, size); }

static fmi3Status unsupported(fmi3Instance inst, const char *fn)
{
    Adapter *a = (Adapter *)inst;
    if (a && a->log) {
        char text[256];
        snprintf(text, sizeof text, "%s is not supported by this FMU", fn);
        a->log(a->env, fmi3Error, "logStatusError", text);
    }
    return fmi3Error;
}

static Adapter *instantiate(fmi3String name, fmi3String token, fmi3Boolean loggingOn,
                            fmi3InstanceEnvironment env, fmi3LogMessageCallback log, int me)
{
    Adapter *a = (Adapter *)calloc(1, sizeof(Adapter));
    fmi2CallbackFunctions cb;
    if (!a) return NULL;
    a->env = env;
    a->log = log;
    a->is_me = me;
    cb.logger = logger2;
    cb.allocateMemory = alloc2;
    cb.freeMemory = free;
    cb.stepFinished = NULL;
    cb.componentEnvironment = a;
    a->inner = fmi2Instantiate(name, me ? fmi2ModelExchange : fmi2CoSimulation, token, "", &cb,
                               fmi2False, loggingOn);
    if (!a->inner) {
        free(a);
        return NULL;
    }
    return a;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[])
{
    return st3(fmi2SetDebugLogging(INNER(instance), loggingOn, nCategories, categories));
}

fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
    fmi3Boolean earlyReturnAllowed, const fmi3ValueReference requiredIntermediateVariables[],
    size_t nRequiredIntermediateVariables, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3IntermediateUpdateCallback intermediateUpdate)
{
    (void)resourcePath; (void)visible; (void)eventModeUsed; (void)earlyReturnAllowed;
    (void)requiredIntermediateVariables; (void)nRequiredIntermediateVariables;
    (void)intermediateUpdate;
    return instantiate(instanceName, instantiationToken, loggingOn, instanceEnvironment,
                       logMessage, 0);
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible,
                                          fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage)
{
    (void)resourcePath; (void)visible;
    return instantiate(instanceName, instantiationToken, loggingOn, instanceEnvironment,
                       logMessage, 1);
}

fmi3Instance fmi3InstantiateScheduledExecution(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3ClockUpdateCallback clockUpdate,
    fmi3LockPreemptionCallback lockPreemption, fmi3UnlockPreemptionCallback unlockPreemption)
{
    (void)instanceName; (void)instantiationToken; (void)resourcePath; (void)visible;
    (void)loggingOn; (void)clockUpdate; (void)lockPreemption; (void)unlockPreemption;
    if (logMessage)
        logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                   "scheduled execution is not supported by this FMU");
    return NULL;
}

void fmi3FreeInstance(fmi3Instance instance)
{
    if (!instance) return;
    fmi2FreeInstance(INNER(instance));
    free(instance);
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime)
{
    fmi2Status s = fmi2SetupExperiment(INNER(instance), toleranceDefined, tolerance, startTime,
                                       stopTimeDefined, stopTime);
    if (s > fmi2Warning) return st3(s);
    return st3(fmi2EnterInitializationMode(INNER(instance)));
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance)
{
    return st3(fmi2ExitInitializationMode(INNER(instance)));
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance)
{
    if (!((Adapter *)instance)->is_me) return fmi3OK;
    return st3(fmi2EnterEventMode(INNER(instance)));
}

fmi3Status fmi3Terminate(fmi3Instance instance) { return st3(fmi2Terminate(INNER(instance))); }
fmi3Status fmi3Reset(fmi3Instance instance) { return st3(fmi2Reset(INNER(instance))); }
fmi3Status fmi3EnterStepMode(fmi3Instance instance) { (void)instance; return fmi3OK; }

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined,
                                    fmi3Float64 *nextEventTime)
{
    fmi2EventInfo info;
    fmi2Status s = fmi2OK;
    memset(&info, 0, sizeof info);
    if (((Adapter *)instance)->is_me) s = fmi2NewDiscreteStates(INNER(instance), &info);
    if (discreteStatesNeedUpdate) *discreteStatesNeedUpdate = info.newDiscreteStatesNeeded;
    if (terminateSimulation) *terminateSimulation = info.terminateSimulation;
    if (nominalsOfContinuousStatesChanged)
        *nominalsOfContinuousStatesChanged = info.nominalsOfContinuousStatesChanged;
    if (valuesOfContinuousStatesChanged)
        *valuesOfContinuousStatesChanged = info.valuesOfContinuousStatesChanged;
    if (nextEventTimeDefined) *nextEventTimeDefined = info.nextEventTimeDefined;
    if (nextEventTime) *nextEventTime = info.nextEventTime;
    return st3(s);
}

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Float64 values[], size_t nValues)
{
    size_t k;
    if (nValues != nvr) return unsupported(instance, "fmi3GetFloat64 of array variables");
    for (k = 0; k < nvr; k++) {
        fmi2Status s;
        if (vr[k] == VR_TIME3) s = fmi2GetRealStatus(INNER(instance), fmi2LastSuccessfulTime,
                                                     &values[k]);
        else s = fmi2GetReal(INNER(instance), &vr[k], 1, &values[k]);
        if (s > fmi2Warning) return st3(s);
    }
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Float64 values[], size_t nValues)
{
    if (nValues != nvr) return unsupported(instance, "fmi3SetFloat64 of array variables");
    return st3(fmi2SetReal(INNER(instance), vr, nvr, values));
}

fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *FMUState)
{
    return st3(fmi2GetFMUstate(INNER(instance), FMUState));
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState)
{
    return st3(fmi2SetFMUstate(INNER(instance), FMUState));
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *FMUState)
{
    return st3(fmi2FreeFMUstate(INNER(instance), FMUState));
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState, size_t *size)
{
    return st3(fmi2SerializedFMUstateSize(INNER(instance), FMUState, size));
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState,
                                 fmi3Byte serializedState[], size_t size)
{
    return st3(fmi2SerializeFMUstate(INNER(instance), FMUState, (fmi2Byte *)serializedState,
                                     size));
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[],
                                   size_t size, fmi3FMUState *FMUState)
{
    return st3(fmi2DeSerializeFMUstate(INNER(instance), (const fmi2Byte *)serializedState, size,
                                       FMUState));
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[],
                                        size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                        fmi3Float64 sensitivity[], size_t nSensitivity)
{
    if (nSeed != nKnowns || nSensitivity != nUnknowns)
        return unsupported(instance, "fmi3GetDirectionalDerivative of array variables");
    return st3(fmi2GetDirectionalDerivative(INNER(instance), unknowns, nUnknowns, knowns, nKnowns,
                                            seed, sensitivity));
}

fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 t, fmi3Float64 h,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime)
{
    fmi2Status s = fmi2DoStep(INNER(instance), t, h, noSetFMUStatePriorToCurrentPoint);
    if (eventHandlingNeeded) *eventHandlingNeeded = fmi3False;
    if (terminateSimulation) *terminateSimulation = fmi3False;
    if (earlyReturn) *earlyReturn = fmi3False;
    if (lastSuccessfulTime)
        fmi2GetRealStatus(INNER(instance), fmi2LastSuccessfulTime, lastSuccessfulTime);
    return st3(s);
}

/* ------------------------------------------------------------------------- model exchange */
fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance)
{
    return st3(fmi2EnterContinuousTimeMode(INNER(instance)));
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance,
                                       fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode,
                                       fmi3Boolean *terminateSimulation)
{
    fmi2Boolean e = fmi2False, t = fmi2False;
    fmi2Status s = fmi2CompletedIntegratorStep(INNER(instance), noSetFMUStatePriorToCurrentPoint,
                                               &e, &t);
    if (enterEventMode) *enterEventMode = e ? fmi3True : fmi3False;
    if (terminateSimulation) *terminateSimulation = t ? fmi3True : fmi3False;
    return st3(s);
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time)
{
    return st3(fmi2SetTime(INNER(instance), time));
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates)
{
    return st3(fmi2SetContinuousStates(INNER(instance), continuousStates, nContinuousStates));
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[],
                                             size_t nContinuousStates)
{
    return st3(fmi2GetDerivatives(INNER(instance), derivatives, nContinuousStates));
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 eventIndicators[],
                                  size_t nEventIndicators)
{
    return st3(fmi2GetEventIndicators(INNER(instance), eventIndicators, nEventIndicators));
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 continuousStates[],
                                   size_t nContinuousStates)
{
    return st3(fmi2GetContinuousStates(INNER(instance), continuousStates, nContinuousStates));
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                             size_t nContinuousStates)
{
    return st3(fmi2GetNominalsOfContinuousStates(INNER(instance), nominals, nContinuousStates));
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators)
{
    (void)instance;
    if (nEventIndicators) *nEventIndicators = 0;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates)
{
    (void)instance;
    if (nContinuousStates) *nContinuousStates = N_STATES;
    return fmi3OK;
}

/* ------------------------------------------------------------------ not used: fmi3Error */
#define UNSUPPORTED_GET(NAME, T)                                                                \
    fmi3Status NAME(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, T values[], \
                    size_t nValues)                                                             \
    {                                                                                           \
        (void)vr; (void)nvr; (void)values; (void)nValues;                                       \
        return unsupported(instance, #NAME);                                                    \
    }
#define UNSUPPORTED_SET(NAME, T)                                                                \
    fmi3Status NAME(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,           \
                    const T values[], size_t nValues)                                           \
    {                                                                                           \
        (void)vr; (void)nvr; (void)values; (void)nValues;                                       \
        return unsupported(instance, #NAME);                                                    \
    }
UNSUPPORTED_GET(fmi3GetFloat32, fmi3Float32)
UNSUPPORTED_GET(fmi3GetInt8, fmi3Int8)
UNSUPPORTED_GET(fmi3GetUInt8, fmi3UInt8)
UNSUPPORTED_GET(fmi3GetInt16, fmi3Int16)
UNSUPPORTED_GET(fmi3GetUInt16, fmi3UInt16)
UNSUPPORTED_GET(fmi3GetInt32, fmi3Int32)
UNSUPPORTED_GET(fmi3GetUInt32, fmi3UInt32)
UNSUPPORTED_GET(fmi3GetInt64, fmi3Int64)
UNSUPPORTED_GET(fmi3GetUInt64, fmi3UInt64)
UNSUPPORTED_GET(fmi3GetBoolean, fmi3Boolean)
UNSUPPORTED_GET(fmi3GetString, fmi3String)
UNSUPPORTED_SET(fmi3SetFloat32, fmi3Float32)
UNSUPPORTED_SET(fmi3SetInt8, fmi3Int8)
UNSUPPORTED_SET(fmi3SetUInt8, fmi3UInt8)
UNSUPPORTED_SET(fmi3SetInt16, fmi3Int16)
UNSUPPORTED_SET(fmi3SetUInt16, fmi3UInt16)
UNSUPPORTED_SET(fmi3SetInt32, fmi3Int32)
UNSUPPORTED_SET(fmi3SetUInt32, fmi3UInt32)
UNSUPPORTED_SET(fmi3SetInt64, fmi3Int64)
UNSUPPORTED_SET(fmi3SetUInt64, fmi3UInt64)
UNSUPPORTED_SET(fmi3SetBoolean, fmi3Boolean)
UNSUPPORTED_SET(fmi3SetString, fmi3String)

fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         size_t valueSizes[], fmi3Binary values[], size_t nValues)
{
    (void)vr; (void)nvr; (void)valueSizes; (void)values; (void)nValues;
    return unsupported(instance, "fmi3GetBinary");
}

fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         const size_t valueSizes[], const fmi3Binary values[], size_t nValues)
{
    (void)vr; (void)nvr; (void)valueSizes; (void)values; (void)nValues;
    return unsupported(instance, "fmi3SetBinary");
}

fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        fmi3Clock values[])
{
    (void)vr; (void)nvr; (void)values;
    return unsupported(instance, "fmi3GetClock");
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        const fmi3Clock values[])
{
    (void)vr; (void)nvr; (void)values;
    return unsupported(instance, "fmi3SetClock");
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance,
                                               fmi3ValueReference valueReference,
                                               size_t *nDependencies)
{
    (void)valueReference; (void)nDependencies;
    return unsupported(instance, "fmi3GetNumberOfVariableDependencies");
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[],
                                       fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[],
                                       fmi3DependencyKind dependencyKinds[],
                                       size_t nDependencies)
{
    (void)dependent; (void)elementIndicesOfDependent; (void)independents;
    (void)elementIndicesOfIndependents; (void)dependencyKinds; (void)nDependencies;
    return unsupported(instance, "fmi3GetVariableDependencies");
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                    size_t nUnknowns, const fmi3ValueReference knowns[],
                                    size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                    fmi3Float64 sensitivity[], size_t nSensitivity)
{
    (void)unknowns; (void)nUnknowns; (void)knowns; (void)nKnowns; (void)seed; (void)nSeed;
    (void)sensitivity; (void)nSensitivity;
    return unsupported(instance, "fmi3GetAdjointDerivative");
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance)
{
    return unsupported(instance, "fmi3EnterConfigurationMode");
}

fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance)
{
    return unsupported(instance, "fmi3ExitConfigurationMode");
}

fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference vr[],
                                  size_t nvr, fmi3Float64 intervals[],
                                  fmi3IntervalQualifier qualifiers[])
{
    (void)vr; (void)nvr; (void)intervals; (void)qualifiers;
    return unsupported(instance, "fmi3GetIntervalDecimal");
}

fmi3Status fmi3GetIntervalFraction(fmi3Instance instance, const fmi3ValueReference vr[],
                                   size_t nvr, fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                   fmi3IntervalQualifier qualifiers[])
{
    (void)vr; (void)nvr; (void)counters; (void)resolutions; (void)qualifiers;
    return unsupported(instance, "fmi3GetIntervalFraction");
}

fmi3Status fmi3GetShiftDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                               fmi3Float64 shifts[])
{
    (void)vr; (void)nvr; (void)shifts;
    return unsupported(instance, "fmi3GetShiftDecimal");
}

fmi3Status fmi3GetShiftFraction(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                fmi3UInt64 counters[], fmi3UInt64 resolutions[])
{
    (void)vr; (void)nvr; (void)counters; (void)resolutions;
    return unsupported(instance, "fmi3GetShiftFraction");
}

fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference vr[],
                                  size_t nvr, const fmi3Float64 intervals[])
{
    (void)vr; (void)nvr; (void)intervals;
    return unsupported(instance, "fmi3SetIntervalDecimal");
}

fmi3Status fmi3SetIntervalFraction(fmi3Instance instance, const fmi3ValueReference vr[],
                                   size_t nvr, const fmi3UInt64 counters[],
                                   const fmi3UInt64 resolutions[])
{
    (void)vr; (void)nvr; (void)counters; (void)resolutions;
    return unsupported(instance, "fmi3SetIntervalFraction");
}

fmi3Status fmi3SetShiftDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                               const fmi3Float64 shifts[])
{
    (void)vr; (void)nvr; (void)shifts;
    return unsupported(instance, "fmi3SetShiftDecimal");
}

fmi3Status fmi3SetShiftFraction(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
{
    (void)vr; (void)nvr; (void)counters; (void)resolutions;
    return unsupported(instance, "fmi3SetShiftFraction");
}

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance) { (void)instance; return fmi3OK; }

fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance, const fmi3ValueReference vr[],
                                    size_t nvr, const fmi3Int32 orders[], fmi3Float64 values[],
                                    size_t nValues)
{
    (void)vr; (void)nvr; (void)orders; (void)values; (void)nValues;
    return unsupported(instance, "fmi3GetOutputDerivatives");
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime)
{
    (void)clockReference; (void)activationTime;
    return unsupported(instance, "fmi3ActivateModelPartition");
}

/*
 * The few SUNDIALS 7 functions the CVODE runtime of the benchmark FMUs (cvode_runtime.c) calls,
 * declared from their documented C signatures for the build that fmpy ships (double precision,
 * 64-bit indices, no MPI: SUNComm is an int).  The FMU links with those shared libraries and
 * carries them in its binaries folder (fmu_surrogate/benchmarks/cvode.py).
 */
#ifndef SUNDIALS_API_H
#define SUNDIALS_API_H

#include <stdint.h>

typedef double sunrealtype;
typedef int64_t sunindextype;
typedef int SUNErrCode;
typedef int SUNComm;
#define SUN_COMM_NULL 0

/* opaque handles */
typedef struct SUNContext_ *SUNContext;
typedef struct SunNVector_ *N_Vector;
typedef struct SunMatrix_ *SUNMatrix;
typedef struct SunLinearSolver_ *SUNLinearSolver;

typedef int (*CVRhsFn)(sunrealtype t, N_Vector y, N_Vector ydot, void *user_data);
typedef void (*SUNErrHandlerFn)(int line, const char *func, const char *file, const char *msg,
                                SUNErrCode err_code, void *err_user_data, SUNContext sunctx);

#define CV_BDF 2
#define CV_NORMAL 1
#define CV_SUCCESS 0

SUNErrCode SUNContext_Create(SUNComm comm, SUNContext *sunctx_out);
SUNErrCode SUNContext_Free(SUNContext *sunctx);
SUNErrCode SUNContext_ClearErrHandlers(SUNContext sunctx);
SUNErrCode SUNContext_PushErrHandler(SUNContext sunctx, SUNErrHandlerFn err_fn,
                                     void *err_user_data);

N_Vector N_VNew_Serial(sunindextype vec_length, SUNContext sunctx);
void N_VDestroy(N_Vector v);
sunrealtype *N_VGetArrayPointer(N_Vector v);
SUNMatrix SUNDenseMatrix(sunindextype M, sunindextype N, SUNContext sunctx);
void SUNMatDestroy(SUNMatrix A);
SUNLinearSolver SUNLinSol_Dense(N_Vector y, SUNMatrix A, SUNContext sunctx);
SUNErrCode SUNLinSolFree(SUNLinearSolver S);

void *CVodeCreate(int lmm, SUNContext sunctx);
int CVodeInit(void *cvode_mem, CVRhsFn f, sunrealtype t0, N_Vector y0);
int CVodeReInit(void *cvode_mem, sunrealtype t0, N_Vector y0);
int CVodeSVtolerances(void *cvode_mem, sunrealtype reltol, N_Vector abstol);
int CVodeSetUserData(void *cvode_mem, void *user_data);
int CVodeSetLinearSolver(void *cvode_mem, SUNLinearSolver LS, SUNMatrix A);
int CVodeSetMaxNumSteps(void *cvode_mem, long int mxsteps);
int CVodeSetStopTime(void *cvode_mem, sunrealtype tstop);
int CVode(void *cvode_mem, sunrealtype tout, N_Vector yout, sunrealtype *tret, int itask);
char *CVodeGetReturnFlagName(long int flag); /* allocated with malloc: the caller frees it */
void CVodeFree(void **cvode_mem);

#endif /* SUNDIALS_API_H */

/* The co-simulation stepping loop of the fmpy backend, compiled: one call per run.
 *
 * It makes exactly the FMU calls of the Python loop in fmpy_cs.py, in the same order and with
 * the same arguments (set the inputs of row i, read the recorded values into row i, step from
 * t[i] by h[i]), so the data it produces are bit-identical.  The FMU's functions are passed in as
 * the addresses that fmpy resolved from the FMU's shared library; the instance is fmpy's.
 *
 * Return value: LOOP_DONE, LOOP_STOPPED (the FMU ended the run itself), or the call that failed
 * (LOOP_SET, LOOP_GET, LOOP_STEP) with the FMU's status in *status and the row in *row.
 * progress[0] is the number of rows written, updated after every row (a crash in the FMU leaves
 * it where the parent can read it).
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { LOOP_DONE = 0, LOOP_SET = 1, LOOP_GET = 2, LOOP_STEP = 3, LOOP_STOPPED = 4 };

typedef int (*fmi2_array_fn)(void *, const unsigned int *, size_t, double *);
typedef int (*fmi2_step_fn)(void *, double, double, int);
typedef int (*fmi2_bool_status_fn)(void *, int, int *);

typedef int (*fmi3_array_fn)(void *, const unsigned int *, size_t, double *, size_t);
typedef int (*fmi3_step_fn)(void *, double, double, bool, bool *, bool *, bool *, double *);

int fmi2_cs_loop(void *comp, void *set_real, void *get_real, void *do_step, void *get_bool_status,
                 int64_t n, const double *t, const double *h,
                 const unsigned int *in_vr, int64_t nin, const char *in_base, int64_t in_stride,
                 const unsigned int *vr, int64_t nvr, char *out_base, int64_t out_stride,
                 int64_t *progress, int *status, int64_t *row)
{
    fmi2_array_fn set = (fmi2_array_fn)set_real, get = (fmi2_array_fn)get_real;
    fmi2_step_fn step = (fmi2_step_fn)do_step;
    fmi2_bool_status_fn bool_status = (fmi2_bool_status_fn)get_bool_status;
    for (int64_t i = 0; i < n; ++i) {
        int st;
        *row = i;
        if (nin) {
            st = set(comp, in_vr, (size_t)nin, (double *)(in_base + i * in_stride));
            if (st > 1) { *status = st; return LOOP_SET; }
        }
        if (nvr) {
            st = get(comp, vr, (size_t)nvr, (double *)(out_base + i * out_stride));
            if (st > 1) { *status = st; return LOOP_GET; }
        }
        progress[0] = i + 1;
        if (i == n - 1) break;
        st = step(comp, t[i], h[i], 1);
        if (st > 1) {
            *status = st;
            if (st == 2) { /* fmi2Discard: terminated by the FMU, or a step it cannot do */
                int terminated = 0;
                bool_status(comp, 3 /* fmi2Terminated */, &terminated);
                if (terminated) return LOOP_STOPPED;
            }
            return LOOP_STEP;
        }
    }
    *status = 0;
    return LOOP_DONE;
}

int fmi3_cs_loop(void *inst, void *set_float64, void *get_float64, void *do_step,
                 int64_t n, const double *t, const double *h,
                 const unsigned int *in_vr, int64_t nin, const char *in_base, int64_t in_stride,
                 const unsigned int *vr, int64_t nvr, int64_t nvalues, char *out_base,
                 int64_t out_stride, int64_t *progress, int *status, int64_t *row)
{
    fmi3_array_fn set = (fmi3_array_fn)set_float64, get = (fmi3_array_fn)get_float64;
    fmi3_step_fn step = (fmi3_step_fn)do_step;
    for (int64_t i = 0; i < n; ++i) {
        int st;
        *row = i;
        if (nin) {
            st = set(inst, in_vr, (size_t)nin, (double *)(in_base + i * in_stride), (size_t)nin);
            if (st > 1) { *status = st; return LOOP_SET; }
        }
        if (nvr) {
            st = get(inst, vr, (size_t)nvr, (double *)(out_base + i * out_stride),
                     (size_t)nvalues);
            if (st > 1) { *status = st; return LOOP_GET; }
        }
        progress[0] = i + 1;
        if (i == n - 1) break;
        bool event = false, terminate = false, early = false; /* fmi3Boolean is C99 bool */
        double last = 0.0;
        st = step(inst, t[i], h[i], true, &event, &terminate, &early, &last);
        if (st > 1) { *status = st; return LOOP_STEP; }
        if (terminate) {
            /* the step up to lastSuccessfulTime was completed: record it if it is ours */
            double next = t[i + 1];
            if (fabs(last - next) <= 1e-9 * fmax(1.0, fabs(next))) {
                int64_t j = i + 1;
                if (nvr) get(inst, vr, (size_t)nvr, (double *)(out_base + j * out_stride),
                             (size_t)nvalues);
                progress[0] = j + 1;
            }
            *status = 0;
            return LOOP_STOPPED;
        }
    }
    *status = 0;
    return LOOP_DONE;
}

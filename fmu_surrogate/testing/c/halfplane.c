/*
 * halfplane: a tiny FMU whose parameters (a, b) are feasible on a known half-plane, for tests of
 * constraint discovery (docs/design.md §6).
 *
 *   y' = a + 2 b t,  y(0) = 0      (so y(t) = a t + b t^2: the output error is quadratic in a, b)
 *
 *   a + b < 0   the evaluation fails with a logged reason (a linear feasibility boundary)
 *   a > 10      segmentation fault (write through a NULL pointer)
 *   b > 10      hang: infinite loop
 */
#include <stdio.h>

#include "fmi2_framework.h"

fmi2Status model_initialize(ModelInstance *c)
{
    V(y) = 0.0;
    return fmi2OK;
}

fmi2Status model_evaluate(ModelInstance *c, int outputs)
{
    (void)outputs;
    if (V(a) > 10.0) {
        volatile int *p = NULL;
        *p = 1;
    }
    if (V(b) > 10.0) {
        volatile int spin = 1;
        while (spin) {
        }
    }
    if (V(a) + V(b) < 0.0)
        return model_fail(c, "infeasible parameters: a + b = %g < 0 (the law has no solution)",
                          V(a) + V(b));
    V(der_y) = V(a) + 2.0 * V(b) * TIME;
    return fmi2OK;
}

"""The held-out errors of candidate orders, fitted in worker processes, one per core.

Choosing the order of a pH model fits one refined model per candidate order
(:func:`~fmu_surrogate.identify.linear.init.order.select_order` with ``fit``): a dozen
Levenberg–Marquardt fits that do not depend on each other.  When the first of them shows that
the rest would take long (:data:`PARALLEL_SECONDS`), they run in a process pool instead of one
after the other.  The numbers are those of the serial loop: the same code on the same arrays,
with the caller's number of BLAS threads in each process.  Where the fit cannot be sent to a
worker the pool is given up and the loop runs in this process.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["PARALLEL_SECONDS", "heldout_in_processes", "heldout_of"]

#: The remaining candidates go to worker processes when they would take longer than this in a
#: row, estimated from the first one's time with the cost growing as the square of the order
#: (measured on the saturating motor: order 1 0.04 s, 6 1.2 s, 12 7.5 s; the pool's first start
#: costs about a second, later scans reuse its workers).
PARALLEL_SECONDS = 8.0


def heldout_of(error: Callable[..., float], fit: Callable[[list[Any], int], tuple],
               train: list[Any], held: list[tuple], r: int,
               blas_threads: int | None = None) -> float:
    """Held-out error of the model ``fit(train, r)`` on ``held`` (``inf`` when it fails).

    Parameters
    ----------
    error : callable
        ``error(A, B, C, D, held) -> float`` (a module-level function: it goes to the workers
        by name).
    fit : callable
        ``fit(training experiments, r) -> (A, B, C, D)``.
    train : list of Experiment
    held : list of (t, u, y, hold)
    r : int
        Candidate order.
    blas_threads : int, optional
        BLAS threads to fit with (a worker takes its caller's; None: as they are).

    Returns
    -------
    float
        Relative RMS output error, or ``inf``.
    """
    from threadpoolctl import threadpool_limits

    try:
        with threadpool_limits(limits=blas_threads, user_api="blas"):
            err = error(*fit(train, r), held)
    except (ValueError, np.linalg.LinAlgError):
        return float("inf")
    return err if np.isfinite(err) else float("inf")


def heldout_in_processes(error: Callable[..., float], fit: Callable[[list[Any], int], tuple],
                         train: list[Any], held: list[tuple],
                         orders: Sequence[int]) -> dict[int, float] | None:
    """:func:`heldout_of` for each order, in a pool of worker processes (module doc).

    The pool is joblib's ``loky`` (scikit-learn's): its workers do not run the caller's main
    script again (a script without ``if __name__ == "__main__"`` stays safe), they outlive one
    call so that the next scan does not start them again, and inside a process that may not
    have children joblib runs the loop serially itself.

    Parameters
    ----------
    error, fit, train, held
        As :func:`heldout_of`.
    orders : sequence of int

    Returns
    -------
    dict or None
        Order → held-out error; None when no pool could run them (the caller fits them here).
    """
    from joblib import Parallel, cpu_count, delayed
    from threadpoolctl import threadpool_info

    workers = min(len(orders), cpu_count())  # the cores this process may use
    if workers < 2:
        return None
    # the workers fit with the BLAS threads of this caller (the same numbers)
    blas = min((p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"),
               default=None)
    todo = sorted(orders, reverse=True)  # the largest, slowest first: the workers end together
    try:
        errs = Parallel(n_jobs=workers, backend="loky")(
            delayed(heldout_of)(error, fit, train, held, r, blas) for r in todo)
    except Exception:  # noqa: BLE001 - no pool here (pickling, resources): fit serially
        return None
    return dict(zip(todo, errs))

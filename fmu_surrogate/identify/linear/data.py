"""Validation of identification data and the paper's initial guess for linear pH identification."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError, InvalidTypeError
from fmu_surrogate.identify.linear.model.experiments import check_signal, check_time

Array = NDArray[np.float64]


def _validate_triplet(
    t: ArrayLike, u: ArrayLike, y: ArrayLike, where: str
) -> tuple[Array, Array, Array]:
    tt = check_time(t, where=where)
    uu = check_signal(u, tt.size, "u", where=where)
    yy = check_signal(y, tt.size, "y", where=where)
    if uu.shape[1] != yy.shape[1]:
        raise InvalidInputError(
            f"{where}: a pH system has as many outputs as inputs (y = Bᵀ Q x), but u has "
            f"{uu.shape[1]} columns and y has {yy.shape[1]}. Pass collocated input/output pairs."
        )
    return tt, uu, yy


def _to_experiments(experiments: Any, hold: str = "linear") -> list[Any]:
    """Normalise Experiment objects / (t, u, y) tuples / lists thereof to validated Experiments.

    Tuples become experiments with input ``hold``; Experiment objects keep their own.
    """
    from fmu_surrogate.identify.linear.model.experiments import Experiment

    if isinstance(experiments, Experiment):
        items: list[Any] = [experiments]
    elif (
        isinstance(experiments, tuple)
        and len(experiments) == 3
        and not any(isinstance(e, (tuple, list, Experiment)) for e in experiments)
    ):
        items = [experiments]
    else:
        try:
            items = list(experiments)
        except TypeError:
            raise InvalidTypeError(
                "experiments must be an Experiment, a (t, u, y) tuple or a list of those, got "
                f"{type(experiments).__name__}."
            ) from None
    if not items:
        raise InvalidInputError("experiments is empty; pass at least one (t, u, y) experiment.")
    out = []
    for i, e in enumerate(items):
        where = f"experiment {i}"
        if isinstance(e, Experiment):
            t, u, y = e.t, e.u, e.y
        else:
            try:
                t, u, y = e
            except (TypeError, ValueError):
                raise InvalidTypeError(
                    f"{where}: expected an Experiment or a (t, u, y) tuple, got {type(e).__name__}."
                ) from None
        t, u, y = _validate_triplet(t, u, y, where)
        out.append(e if isinstance(e, Experiment) else Experiment.from_arrays(t, u, y, hold))
    m = {np.shape(e.u)[1] for e in out}
    if len(m) != 1:
        raise InvalidInputError(
            f"all experiments must have the same number of inputs, got {sorted(m)}.")
    return out


# --------------------------------------------------------------------------- initial guess
def paper_initial_guess(
    n: int, m: int, seed: int | np.random.Generator | None = 0
) -> dict[str, Array]:
    """The paper's initial guess (docs/design.md §4).

    ``B`` zero except the leading ``min(n, m)`` diagonal, which is ``(1, 3, 1, 3, …)`` (the
    paper's ``diag(1, 3)`` for m = 2), ``Q = I``, ``R = diag(1, 1, 0, …)``, ``J`` skew with the
    strictly upper triangle drawn from ``uniform[−1, 1]`` (``J = U − Uᵀ``), ``x0 = 0``.

    Parameters
    ----------
    n, m : int
        State and port dimensions.
    seed : int or numpy Generator
        Randomness of J.
    """
    rng = np.random.default_rng(seed)
    B = np.zeros((n, m))
    k = min(n, m)
    B[np.arange(k), np.arange(k)] = np.where(np.arange(k) % 2 == 0, 1.0, 3.0)
    R = np.zeros((n, n))
    r = min(2, n)
    R[np.arange(r), np.arange(r)] = 1.0
    U = np.triu(rng.uniform(-1.0, 1.0, size=(n, n)), 1)
    return {"J": U - U.T, "R": R, "Q": np.eye(n), "B": B, "x0": np.zeros(n)}

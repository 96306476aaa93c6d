"""Parameter sets of the benchmark models: defaults, overrides and their check at the boundary."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["BenchmarkError", "parameters"]


class BenchmarkError(FmuSurrogateError, ValueError):
    """An invalid benchmark parameter or input (the message names it and the allowed range)."""


def parameters(
    model: str,
    defaults: Mapping[str, float],
    overrides: Mapping[str, float] | None = None,
    positive: Iterable[str] = (),
    nonnegative: Iterable[str] = (),
) -> dict[str, float]:
    """The defaults of ``model`` updated by ``overrides``, checked.

    Parameters
    ----------
    model : str
        Name of the benchmark (for messages).
    defaults : mapping of str to float
        Every parameter with its default value.
    overrides : mapping of str to float, optional
        New values of some of them.
    positive, nonnegative : iterable of str
        Names that must be > 0, >= 0.

    Returns
    -------
    dict of str to float

    Raises
    ------
    BenchmarkError
        An unknown name or a value out of range.
    """
    p = {k: float(v) for k, v in defaults.items()}
    if overrides:
        unknown = set(overrides) - set(defaults)
        if unknown:
            raise BenchmarkError(f"unknown {model} parameter(s) {sorted(unknown)}; "
                                 f"known: {sorted(defaults)}.")
        p.update({k: float(v) for k, v in overrides.items()})
    for k in positive:
        if not p[k] > 0:
            raise BenchmarkError(f"{model} parameter {k} = {p[k]} must be > 0.")
    for k in nonnegative:
        if not p[k] >= 0:
            raise BenchmarkError(f"{model} parameter {k} = {p[k]} must be >= 0.")
    return p

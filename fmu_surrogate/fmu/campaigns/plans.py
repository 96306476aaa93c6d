"""Parameter plans: which parameter values each run of a campaign uses.

Every plan is a plain ``list[dict[str, float]]`` — one dict per run, ``{parameter name: value}``;
parameters not in a run's dict keep the FMU's start value.  Plans combine with ordinary list
operations (``plan_a + plan_b``).

* :func:`explicit` — a user-given list of dicts (validated);
* :func:`grid` — full factorial, stable order (last name varies fastest);
* :func:`one_at_a_time` — one run per value of a single parameter (CLI ``--param NAME=V1,V2``);
* :func:`latin_hypercube`, :func:`sobol` — space-filling designs in a box (scipy.stats.qmc);
* :func:`parse_param_option` — parse the CLI text ``NAME=V1,V2,...`` or ``NAME=START:STOP:N``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from fmu_surrogate.fmu.errors import ExperimentError

__all__ = [
    "Plan",
    "explicit",
    "grid",
    "latin_hypercube",
    "one_at_a_time",
    "parse_param_option",
    "plan_parameter_names",
    "sobol",
]

Plan = list[dict[str, float]]


def _value(name: str, v: object) -> float | tuple[float, ...]:
    """``v`` as a float, or a whole array value (a sequence or array) as a tuple of floats."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(float(_value(name, x)) for x in np.ravel(np.asarray(v, dtype=object)))
    try:
        x = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ExperimentError(f"parameter {name!r}: value {v!r} is not a number; give a float.") \
            from None
    if not math.isfinite(x):
        raise ExperimentError(f"parameter {name!r}: value {v!r} is not finite; give a finite "
                              f"number.")
    return x


def _name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise ExperimentError(f"parameter names must be non-empty strings, got {name!r}.")
    return name


def explicit(runs: Iterable[Mapping[str, float]]) -> Plan:
    """A plan from a list of ``{name: value}`` dicts (one per run; ``{}`` = all defaults).

    Raises
    ------
    ExperimentError
        A run that is not a mapping, a non-string name or a non-finite value.
    """
    out: Plan = []
    for i, run in enumerate(runs):
        if not isinstance(run, Mapping):
            raise ExperimentError(f"plan entry {i} is {type(run).__name__}, not a dict of "
                                  f"{{parameter name: value}}; wrap it, e.g. {{'k': 1.0}}.")
        out.append({_name(k): _value(k, v) for k, v in run.items()})
    return out


def grid(values: Mapping[str, Sequence[float]] | None = None, /, **more: Sequence[float]) -> Plan:
    """Full-factorial plan over the given values.

    Parameters
    ----------
    values : mapping of str to sequence of float, optional
        ``{name: values}``; use this form for names that are not Python identifiers
        (``grid({"a.b": [1, 2]})``).
    **more : sequence of float
        More ``name=values`` pairs.

    Returns
    -------
    list of dict
        ``prod(len(values))`` runs; order: like nested loops with the first name outermost and
        the last name varying fastest (``itertools.product``).
    """
    spec: dict[str, list[float]] = {}
    for src in (values or {}), more:
        for k, vs in src.items():
            if k in spec:
                raise ExperimentError(f"grid: parameter {k!r} given twice; give it once.")
            vs = list(np.atleast_1d(vs)) if not isinstance(vs, (list, tuple)) else list(vs)
            if not vs:
                raise ExperimentError(f"grid: parameter {_name(k)!r} has no values; give at "
                                      f"least one.")
            spec[_name(k)] = [_value(k, v) for v in vs]
    if not spec:
        return [{}]
    names = list(spec)
    return [dict(zip(names, combo)) for combo in itertools.product(*spec.values())]


def one_at_a_time(name: str, values: Iterable[float]) -> Plan:
    """One run per value of the parameter ``name``: ``[{name: v} for v in values]``."""
    _name(name)
    vs = [_value(name, v) for v in values]
    if not vs:
        raise ExperimentError(f"parameter {name!r} has no values; give at least one.")
    return [{name: v} for v in vs]


def _bounds(bounds: Mapping[str, tuple[float, float]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    if not bounds:
        raise ExperimentError("no parameter bounds given; pass {name: (low, high)}.")
    names, lo, hi = [], [], []
    for k, b in bounds.items():
        try:
            a, c = b
        except (TypeError, ValueError):
            raise ExperimentError(f"bounds of {k!r} must be a pair (low, high), got {b!r}.") \
                from None
        a, c = _value(k, a), _value(k, c)
        if not a < c:
            raise ExperimentError(f"bounds of {k!r}: low = {a} must be below high = {c}; swap "
                                  f"them (a fixed value belongs in an explicit plan).")
        names.append(_name(k))
        lo.append(a)
        hi.append(c)
    return names, np.array(lo), np.array(hi)


def _n(n: int) -> int:
    if int(n) != n or n < 1:
        raise ExperimentError(f"number of runs n = {n!r} must be a positive integer.")
    return int(n)


def _engine(cls, d: int, seed: int | None, **kw):
    """A scipy.stats.qmc engine seeded with ``numpy.random.default_rng(seed)``.

    scipy >= 1.15 calls the argument ``rng``, older versions ``seed``.
    """
    gen = np.random.default_rng(seed)
    try:
        return cls(d=d, rng=gen, **kw)
    except TypeError:  # scipy < 1.15
        return cls(d=d, seed=gen, **kw)


def latin_hypercube(
    bounds: Mapping[str, tuple[float, float]], n: int, seed: int | None = 0
) -> Plan:
    """Latin hypercube sample of ``n`` runs in the box ``bounds``.

    Every parameter's range is cut into ``n`` equal strata and each stratum holds exactly one run
    (``scipy.stats.qmc.LatinHypercube``, points randomised inside their strata).

    Parameters
    ----------
    bounds : mapping of str to (float, float)
        ``{name: (low, high)}``, ``low < high``.
    n : int
    seed : int or None
        Same seed → same plan.
    """
    from scipy.stats import qmc

    names, lo, hi = _bounds(bounds)
    n = _n(n)
    u = _engine(qmc.LatinHypercube, d=len(names), seed=seed).random(n)
    x = qmc.scale(u, lo, hi)
    return [dict(zip(names, map(float, row))) for row in x]


def sobol(
    bounds: Mapping[str, tuple[float, float]], n: int, seed: int | None = 0,
    scramble: bool = True,
) -> Plan:
    """Sobol' low-discrepancy sample of ``n`` runs in the box ``bounds``.

    Balance properties hold for ``n`` a power of two (every dyadic interval of width
    ``1/n`` in each coordinate holds exactly one point); scipy warns otherwise.

    Parameters
    ----------
    bounds : mapping of str to (float, float)
    n : int
    seed : int or None
        Seed of the scrambling (ignored when ``scramble=False``).
    scramble : bool
        Owen scrambling (randomised QMC); without it the first point is the lower corner.
    """
    from scipy.stats import qmc

    names, lo, hi = _bounds(bounds)
    n = _n(n)
    eng = _engine(qmc.Sobol, d=len(names), seed=seed, scramble=scramble)
    m = round(math.log2(n))
    u = eng.random_base2(m) if 2**m == n else eng.random(n)
    x = qmc.scale(u, lo, hi)
    return [dict(zip(names, map(float, row))) for row in x]


def parse_param_option(text: str) -> tuple[str, list[float | tuple[float, ...]]]:
    """Parse ``NAME=V1,V2,...`` or ``NAME=START:STOP:N`` (``N`` equally spaced values).

    A value of several numbers separated by spaces is a whole array (an FMI 3 array parameter,
    its values row-major): ``A=1 0 0 1,2 0 0 2`` gives two values of a 2x2 ``A``.  One element
    of an array is named as the dataset names its column: ``A[1,2]=0.5``.

    Returns
    -------
    (str, list of float or tuple of float)

    Raises
    ------
    ExperimentError
        With the expected syntax in the message.
    """
    syntax = ("expected NAME=V1,V2,... (e.g. --param k=1,2,3), NAME=START:STOP:N "
              "(e.g. --param k=0:1:5), or for an array parameter its values row-major with "
              "spaces between them (e.g. --param 'A=1 0 0 1')")
    if not isinstance(text, str) or "=" not in text:
        raise ExperimentError(f"--param {text!r}: missing '='; {syntax}.")
    name, _, rhs = text.partition("=")
    name = name.strip()
    if not name:
        raise ExperimentError(f"--param {text!r}: empty parameter name; {syntax}.")
    rhs = rhs.strip()
    if not rhs:
        raise ExperimentError(f"--param {text!r}: no values after '='; {syntax}.")
    if ":" in rhs:
        parts = rhs.split(":")
        if len(parts) != 3:
            raise ExperimentError(f"--param {text!r}: a range needs START:STOP:N; {syntax}.")
        a, b = _value(name, parts[0]), _value(name, parts[1])
        try:
            k = int(parts[2])
        except ValueError:
            raise ExperimentError(f"--param {text!r}: N = {parts[2]!r} must be an integer; "
                                  f"{syntax}.") from None
        if k < 1:
            raise ExperimentError(f"--param {text!r}: N must be >= 1; {syntax}.")
        return name, [float(x) for x in np.linspace(a, b, k)]
    vals = []
    for tok in rhs.split(","):
        tok = tok.strip()
        if not tok:
            raise ExperimentError(f"--param {text!r}: empty value (double comma?); {syntax}.")
        items = []
        for item in tok.split():  # several: the values of an array, row-major
            try:
                v = float(item)
            except ValueError:
                raise ExperimentError(f"--param {text!r}: {item!r} is not a number; "
                                      f"{syntax}.") from None
            if not math.isfinite(v):
                raise ExperimentError(f"--param {text!r}: {item!r} is not finite; {syntax}.")
            items.append(v)
        vals.append(items[0] if len(items) == 1 else tuple(items))
    return name, vals


def plan_parameter_names(plan: Iterable[Mapping[str, float]]) -> list[str]:
    """Names set by any run of ``plan``, in order of first appearance."""
    seen: dict[str, None] = {}
    for run in plan:
        for k in run:
            seen.setdefault(k, None)
    return list(seen)

"""Elements of FMI 3 array variables and the values a variable accepts.

An element of an array variable is named as the dataset names its column: the variable's name
and the 1-based indices, row-major, e.g. ``u[2]`` of an input of shape ``(3,)`` or ``A[1,3]`` of
a ``3x3`` parameter.  A campaign may design a signal for one element of an array input or set
one element of an array parameter; the FMU is always set a whole array, the other elements at
their start values (:func:`gather_elements`).  A whole array parameter is given as all its values,
row-major (:func:`split_array`).

Values are set through the FMI API of the variable's type: an integer type (``Integer``,
``Int8`` ... ``UInt64``, ``Enumeration``) takes whole numbers in its range, a ``Boolean`` takes
0 or 1; :func:`check_values` refuses others before any run, naming the variable.  It also
refuses values outside a variable's declared ``min``/``max``: the exporting tool declares there
the region the FMU is designed to operate in, and an FMU may answer a value outside it with an
error (FMI 3 allows it, Dymola's FMUs check it) — or worse, take it, so that a surrogate learns a
behaviour of the FMU outside its validity.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.fmu.errors import ExperimentError, UnknownVariableError
from fmu_surrogate.fmu.model.info import INTEGER_RANGES

if TYPE_CHECKING:  # pragma: no cover
    from fmu_surrogate.fmu.model.info import FMUInfo, Variable

__all__ = ["check_values", "element_name", "excitation_level", "find_element", "gather_elements",
           "split_array"]

#: the causalities of the variables :func:`find_element` accepts for ``what``
_CAUSALITIES = {"input": ("input",), "output": ("output",),
                "parameter": ("parameter", "structuralParameter")}
_ELEMENT = re.compile(r"^(?P<base>.+)\[(?P<idx>\s*\d+\s*(?:,\s*\d+\s*)*)\]$")


def element_name(name: str, index: tuple[int, ...]) -> str:
    """``name[i,j]`` of the element at the 0-based ``index`` (1-based in the text).

    Parameters
    ----------
    name : str
        The array variable.
    index : tuple of int
        0-based position, one entry per dimension.

    Returns
    -------
    str
    """
    return f"{name}[{','.join(str(i + 1) for i in index)}]"


def find_element(info: FMUInfo, name: str, what: str = "variable") -> tuple[Variable, int | None]:
    """The variable called ``name``, or the array variable and flat (row-major) position of the
    element ``name`` names (``u[2]`` -> ``(u, 1)``).

    Parameters
    ----------
    info : FMUInfo
    name : str
        A variable name or an element name ``NAME[i]``, ``NAME[i,j]``, ... (1-based).
    what : {"variable", "input", "parameter"}
        The causality the variable must have (``"variable"``: any); for the messages.

    Returns
    -------
    (Variable, int or None)
        ``None`` when ``name`` is a variable's own name.

    Raises
    ------
    UnknownVariableError
        No such variable, an index out of the array's shape, a variable of another causality.
    """
    by_name = info.variables_by_name
    v = by_name.get(name)
    m = None if v is not None else _ELEMENT.match(name)
    base = name if m is None else m.group("base")
    v = by_name.get(base)
    if v is None or (what != "variable" and v.causality not in _CAUSALITIES.get(what, ())):
        info.check_names([base if v is not None else name], what)  # raises, with suggestions
    if m is None:
        return v, None
    idx = tuple(int(i) for i in m.group("idx").split(","))
    shape = tuple(int(s) for s in v.shape)
    if not shape or len(idx) != len(shape) or any(not 1 <= i <= s for i, s in zip(idx, shape)):
        hint = (f"{base!r} is a scalar; give its name without an index" if not shape else
                f"{base!r} has shape {'x'.join(map(str, shape))}: its elements are "
                f"{element_name(base, (0,) * len(shape))} to "
                f"{element_name(base, tuple(s - 1 for s in shape))} (1-based)")
        pool = {"input": info.inputs, "parameter": info.parameters}.get(what, info.variable_names)
        raise UnknownVariableError(name, pool, what=what, model=info.name, hint=hint)
    flat = 0
    for i, s in zip(idx, shape):  # row-major
        flat = flat * s + i - 1
    return v, flat


def split_array(v: Variable, value: Any) -> dict[str, float]:
    """The element entries ``{"A[1,1]": ..., ...}`` of a whole value of the array variable ``v``
    (its ``size`` values, row-major, or an array of its shape).

    Parameters
    ----------
    v : Variable
        An array variable.
    value : array_like
        Its values.

    Returns
    -------
    dict of str to float

    Raises
    ------
    ExperimentError
        Not ``size`` numbers.
    """
    try:
        flat = np.asarray(value, dtype=float).ravel()
    except (TypeError, ValueError):
        flat = None
    shape = tuple(int(s) for s in v.shape)
    if flat is None or flat.size != v.size:
        raise ExperimentError(
            f"{v.name!r} is an array of shape {'x'.join(map(str, shape))}: give its {v.size} "
            f"values, row-major (e.g. --param '{v.name}={' '.join(['0'] * min(v.size, 4))}"
            f"{' ...' if v.size > 4 else ''}'), or one element as "
            f"{element_name(v.name, (0,) * len(shape))}; got {value!r}.")
    return {element_name(v.name, idx): float(flat[k])
            for k, idx in enumerate(np.ndindex(*shape))}


def gather_elements(info: FMUInfo, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with the entries of array elements replaced by whole arrays.

    The other elements of such an array take their start values (0 without one).  An element
    value of shape ``lead`` (a number, or samples of shape ``(T,)``) gives the array's value of
    shape ``lead + (size,)``, row-major; other entries are kept as they are.

    Parameters
    ----------
    info : FMUInfo
    values : mapping of str to value
        Names and element names (checked by :func:`find_element` before).

    Returns
    -------
    dict
        In the order of ``values`` (an array at the place of its first element).
    """
    by_name = info.variables_by_name
    if not any(k.endswith("]") and k not in by_name for k in values):
        return dict(values)
    out: dict[str, Any] = {}
    for name, value in values.items():
        v, k = find_element(info, name)
        if k is None:
            out[name] = value
            continue
        arr = out.get(v.name)
        if arr is None:
            start = v.start_values
            if start is None or len(start) != v.size:
                start = np.zeros(v.size)
            arr = out[v.name] = np.array(np.broadcast_to(start, np.shape(value) + (v.size,)))
        arr[..., k] = value
    return out


def excitation_level(v: Variable) -> tuple[float, float]:
    """An offset and a standard deviation for noise on the input ``v``.

    Inside its declared ``min``/``max`` (about 4σ from each bound); without one, about its
    start value (a supply voltage, a temperature in K: σ a tenth of it), else ``(0, 1)``.

    Parameters
    ----------
    v : Variable

    Returns
    -------
    (float, float)
        The offset and the standard deviation, in the variable's unit.
    """
    lo, hi = v.minimum, v.maximum
    start = v.start_value
    if lo is None and hi is None:
        return (start, abs(start) / 10.0) if start else (0.0, 1.0)
    if lo is not None and hi is not None:
        return 0.5 * (lo + hi), (hi - lo) / 8.0
    bound = lo if lo is not None else hi
    side = 1.0 if lo is not None else -1.0  # the side of the bound that is allowed
    if start is not None and side * (start - bound) > 0:
        return start, side * (start - bound) / 4.0
    width = max(abs(bound), 1.0)
    return bound + side * width, width / 4.0


def _check_range(v: Variable, values: Any, where: str) -> None:
    lo, hi = v.minimum, v.maximum
    if lo is None and hi is None:
        return
    a = np.asarray(values, dtype=float)
    if not a.size:
        return
    low = float(np.min(a)) if lo is not None else None
    high = float(np.max(a)) if hi is not None else None
    if (low is None or low >= lo) and (high is None or high <= hi):
        return
    bounds = (f"[{lo:g}, {hi:g}]" if lo is not None and hi is not None
              else f">= {lo:g}" if lo is not None else f"<= {hi:g}")
    unit = f" {v.unit}" if v.unit else ""
    got = float(np.min(a)) if low is not None and low < lo else float(np.max(a))
    hint = excitation_level(v)
    raise ExperimentError(
        f"{where} is declared {bounds}{unit} (min/max of the model description: the region "
        f"the FMU is designed for; it may refuse other values), got {got:g}; keep the values "
        f"inside, e.g. a signal with offset={hint[0]:g} and std (or amplitude) {hint[1]:g}, "
        f"or values within the range.")


def check_values(v: Variable, values: Any, where: str, fmi3: bool) -> None:
    """Refuse values an integer-typed or Boolean variable cannot take, and values outside a
    variable's declared ``min``/``max`` (module doc).

    Parameters
    ----------
    v : Variable
    values : array_like
        The values to set (samples of a signal, a parameter value).
    where : str
        What set them (``"input 'n'"``, ``"parameter 'k'"``), for the message.
    fmi3 : bool
        The FMU's FMI version is 3 (an ``Enumeration`` is an ``fmi3Int64`` there, else an
        ``fmi2Integer``).

    Raises
    ------
    ExperimentError
        A value that is not 0/1 for a ``Boolean``, not a whole number in range for an integer
        type, or outside the declared ``min``/``max``; the message names the variable, the value
        and the fix.
    """
    _check_range(v, values, where)
    if v.type == "Boolean":
        a = np.asarray(values, dtype=float)
        bad = a[(a != 0) & (a != 1)]
        if bad.size:
            raise ExperimentError(
                f"{where} is a Boolean: its values must be 0 or 1, got {bad.flat[0]:g}; give "
                f"levels 0 and 1 (e.g. prbs levels=0:1, a step from 0 to 1, a constant 0 or 1).")
        return
    rng = INTEGER_RANGES.get("Integer" if v.type == "Enumeration" and not fmi3 else v.type)
    if rng is None:
        return
    a = np.asarray(values, dtype=float)
    bad = a[(a != np.round(a)) | (a < rng[0]) | (a > rng[1])]
    if bad.size:
        raise ExperimentError(
            f"{where} has type {v.type}: its values must be whole numbers from {rng[0]} to "
            f"{rng[1]}, got {bad.flat[0]:g}; give integer levels (e.g. prbs levels=-2:3, a "
            f"step or a constant with whole values; a chirp or noise takes values in between).")

"""Units as FMUs declare them: a unit string read into its SI factor, offset and dimension.

Vendors write units in the Modelica/FMI syntax (``"N.m"``, ``"m/s2"``, ``"kg.m2"``, ``"rad/s"``),
with SI prefixes (``"kPa"``, ``"mm"``, ``"mA"``), in customary units of their field (``"bar"``,
``"l/min"``, ``"rpm"``, ``"degC"``) and now and then with other separators (``"N·m"``,
``"N*m"``, ``"m/s^2"``, ``"m/s**2"``).  :func:`parse_unit` reads all of these into a
:class:`Unit`: ``value_SI = factor · value + offset`` and the exponents of the SI base units
(kg, m, s, A, K, mol, cd).  Plane angles (rad, deg, rev) are dimensionless, as in SI, so a
torque in N·m times an angular velocity in rad/s is a power.

What it serves: pairing an FMU's inputs and outputs into power ports (an effort and a flow whose
units multiply to a power, :func:`power_factor`), and turning the product of a port's effort and
flow into watts (a hydraulic port in bar and l/min carries ``1e5 / 60000 = 1.667`` W per unit
product).  A unit it cannot read gives ``None``, never a guess.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["DIMENSIONLESS", "ENERGY", "POWER", "Unit", "parse_unit", "power_factor"]

# exponents of (kg, m, s, A, K, mol, cd)
_D = tuple[int, int, int, int, int, int, int]
DIMENSIONLESS: _D = (0, 0, 0, 0, 0, 0, 0)
#: Dimension of a power (W = kg·m²·s⁻³).
POWER: _D = (1, 2, -3, 0, 0, 0, 0)
#: Dimension of an energy (J = kg·m²·s⁻²).
ENERGY: _D = (1, 2, -2, 0, 0, 0, 0)


@dataclass(frozen=True)
class Unit:
    """A unit read from its text.

    Attributes
    ----------
    text : str
        As declared.
    factor : float
        SI value per unit value (``value_SI = factor · value + offset``).
    dims : tuple of int, length 7
        Exponents of kg, m, s, A, K, mol, cd.
    offset : float
        Non-zero only for a temperature scale alone (``degC``, ``degF``).
    """

    text: str
    factor: float
    dims: _D
    offset: float = 0.0

    def to_si(self, value: float) -> float:
        """``factor · value + offset``."""
        return self.factor * value + self.offset


def _dims(**kw: int) -> _D:
    order = ("kg", "m", "s", "A", "K", "mol", "cd")
    return tuple(kw.get(k, 0) for k in order)  # type: ignore[return-value]


_PI = math.pi
# name -> (factor, dims); the SI base and derived units, then customary ones of the fields
# whose FMUs this tool meets (mechanics, electrics, hydraulics, thermal).
_BASE: dict[str, tuple[float, _D]] = {
    "1": (1.0, DIMENSIONLESS),
    "m": (1.0, _dims(m=1)), "g": (1e-3, _dims(kg=1)), "s": (1.0, _dims(s=1)),
    "A": (1.0, _dims(A=1)), "K": (1.0, _dims(K=1)), "mol": (1.0, _dims(mol=1)),
    "cd": (1.0, _dims(cd=1)),
    "rad": (1.0, DIMENSIONLESS), "sr": (1.0, DIMENSIONLESS), "deg": (_PI / 180, DIMENSIONLESS),
    "rev": (2 * _PI, DIMENSIONLESS), "%": (0.01, DIMENSIONLESS),
    "Hz": (1.0, _dims(s=-1)), "N": (1.0, _dims(kg=1, m=1, s=-2)),
    "Pa": (1.0, _dims(kg=1, m=-1, s=-2)), "J": (1.0, ENERGY), "W": (1.0, POWER),
    "C": (1.0, _dims(s=1, A=1)), "V": (1.0, _dims(kg=1, m=2, s=-3, A=-1)),
    "F": (1.0, _dims(kg=-1, m=-2, s=4, A=2)), "Ohm": (1.0, _dims(kg=1, m=2, s=-3, A=-2)),
    "S": (1.0, _dims(kg=-1, m=-2, s=3, A=2)), "Wb": (1.0, _dims(kg=1, m=2, s=-2, A=-1)),
    "T": (1.0, _dims(kg=1, s=-2, A=-1)), "H": (1.0, _dims(kg=1, m=2, s=-2, A=-2)),
    "l": (1e-3, _dims(m=3)), "L": (1e-3, _dims(m=3)),
    "min": (60.0, _dims(s=1)), "h": (3600.0, _dims(s=1)), "d": (86400.0, _dims(s=1)),
    "bar": (1e5, _dims(kg=1, m=-1, s=-2)), "atm": (101325.0, _dims(kg=1, m=-1, s=-2)),
    "psi": (6894.757293168361, _dims(kg=1, m=-1, s=-2)),
    "rpm": (2 * _PI / 60, _dims(s=-1)), "Wh": (3600.0, ENERGY), "eV": (1.602176634e-19, ENERGY),
    "Nm": (1.0, ENERGY), "t": (1000.0, _dims(kg=1)), "in": (0.0254, _dims(m=1)), "ft": (0.3048, _dims(m=1)),
    "lbf": (4.4482216152605, _dims(kg=1, m=1, s=-2)), "lb": (0.45359237, _dims(kg=1)),
    "gal": (3.785411784e-3, _dims(m=3)), "cc": (1e-6, _dims(m=3)),
}
_ALIASES = {"Ω": "Ohm", "ohm": "Ohm", "°": "deg", "sec": "s", "hr": "h", "RPM": "rpm",
            "lit": "l", "µ": "u"}
_PREFIXES = {"Y": 1e24, "Z": 1e21, "E": 1e18, "P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6,
             "k": 1e3, "h": 1e2, "da": 1e1, "d": 1e-1, "c": 1e-2, "m": 1e-3, "u": 1e-6,
             "µ": 1e-6, "μ": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15, "a": 1e-18}
# units that carry an offset: only valid alone
_SCALES = {"degC": (1.0, 273.15), "°C": (1.0, 273.15), "degF": (5 / 9, 459.67 * 5 / 9),
           "°F": (5 / 9, 459.67 * 5 / 9), "degK": (1.0, 0.0)}
_OPERAND = re.compile(r"^([^\d^*+\-]+?)(?:\^|\*\*)?([+-]?\d+)?$")


def _operand(token: str) -> tuple[float, _D] | None:
    if token == "1":
        return 1.0, DIMENSIONLESS
    m = _OPERAND.match(token)
    if not m:
        return None
    name, exp = m.group(1), int(m.group(2) or 1)
    name = _ALIASES.get(name, name)
    base = _BASE.get(name)
    if base is None:
        for p in sorted(_PREFIXES, key=len, reverse=True):
            rest = _ALIASES.get(name[len(p):], name[len(p):])
            if name.startswith(p) and rest in _BASE and rest not in ("1", "%"):
                f, d = _BASE[rest]
                base = (_PREFIXES[p] * f, d)
                break
    if base is None:
        return None
    f, d = base
    return f ** exp, tuple(exp * k for k in d)  # type: ignore[return-value]


def _product(text: str) -> tuple[float, _D] | None:
    factor, dims = 1.0, [0] * 7
    tokens = [t for t in re.split(r"[.·*⋅ ]+", text) if t]
    if not tokens:
        return None
    for tok in tokens:
        got = _operand(tok)
        if got is None:
            return None
        factor *= got[0]
        dims = [a + b for a, b in zip(dims, got[1])]
    return factor, tuple(dims)  # type: ignore[return-value]


def parse_unit(text: str | None) -> Unit | None:
    """Read a declared unit (Modelica/FMI syntax and common variants).

    Parameters
    ----------
    text : str or None
        ``"N"``, ``"m/s2"``, ``"N.m"``, ``"kg.m2"``, ``"bar"``, ``"l/min"``, ``"1/s"``, ...

    Returns
    -------
    Unit or None
        ``None`` when the text is empty or cannot be read (unknown symbol, parentheses).

    Examples
    --------
    >>> parse_unit("l/min").factor
    1.6666666666666667e-05
    >>> parse_unit("N.m").dims == parse_unit("J").dims
    True
    """
    if text is None:
        return None
    s = str(text).strip()
    if not s or "(" in s or ")" in s:
        return None
    if s in _SCALES:
        f, off = _SCALES[s]
        return Unit(s, f, _dims(K=1), off)
    s2 = s.replace("**", "^")
    parts = s2.split("/")
    num = _product(parts[0])
    if num is None:
        return None
    factor, dims = num[0], list(num[1])
    for den in parts[1:]:
        got = _product(den)
        if got is None:
            return None
        factor /= got[0]
        dims = [a - b for a, b in zip(dims, got[1])]
    return Unit(s, factor, tuple(dims))  # type: ignore[arg-type]


def power_factor(effort_unit: str | None, flow_unit: str | None) -> float | None:
    """Watts per unit product of an effort and a flow, when the two units make a power.

    Parameters
    ----------
    effort_unit, flow_unit : str or None
        Declared units of the two variables.

    Returns
    -------
    float or None
        ``factor_e · factor_f`` when the dimensions multiply to W (``1.0`` for SI units;
        ``1e5 / 6e4`` for bar and l/min); ``None`` when a unit is unknown, carries an offset, or
        the product is not a power.
    """
    a, b = parse_unit(effort_unit), parse_unit(flow_unit)
    if a is None or b is None or a.offset or b.offset:
        return None
    if tuple(x + y for x, y in zip(a.dims, b.dims)) != POWER:
        return None
    return a.factor * b.factor

"""Identifiers for exported surrogates: names that are valid in C and in Modelica.

:func:`identifier` makes one name valid: characters other than letters, digits and ``_``
become ``_`` (runs collapsed, leading/trailing ones dropped), a name that does not start with a
letter gets a ``p`` prefix, an empty one becomes ``port``, and a C or Modelica keyword gets a
trailing ``_``.  :func:`sanitize` does this for a list and numbers duplicates (``_2``, ``_3`` …),
avoiding names already taken and the variables the FMU exporter adds (:data:`RESERVED`).
:func:`exported_names` returns the mapping of a surrogate's ports and states; the exporters
record it in what they write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["C_KEYWORDS", "MODELICA_KEYWORDS", "RESERVED", "exported_names", "identifier",
           "sanitize"]

#: reserved words of C99
C_KEYWORDS = frozenset([
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Imaginary",
])
#: reserved words of Modelica 3.5 (§2.3.3)
MODELICA_KEYWORDS = frozenset([
    "algorithm", "and", "annotation", "block", "break", "class", "connect", "connector",
    "constant", "constrainedby", "der", "discrete", "each", "else", "elseif", "elsewhen",
    "encapsulated", "end", "enumeration", "equation", "expandable", "extends", "external",
    "false", "final", "flow", "for", "function", "if", "import", "impure", "in", "initial",
    "inner", "input", "loop", "model", "not", "operator", "or", "outer", "output", "package",
    "parameter", "partial", "protected", "public", "pure", "record", "redeclare", "replaceable",
    "return", "stream", "then", "true", "type", "when", "while", "within",
])
#: Names of the variables an exported surrogate FMU adds to its ports and states.
RESERVED = frozenset({"H", "energy_residual", "energy_dissipated", "energy_supplied", "time"})


def identifier(name: str) -> str:
    """``name`` as a valid C and Modelica identifier (unchanged when it already is one).

    Parameters
    ----------
    name : str
        Any name, e.g. ``"s1.F"``, ``"2nd"``, ``"F in"``.

    Returns
    -------
    str
        ``"s1_F"``, ``"p2nd"``, ``"F_in"``; a keyword gets a trailing ``_`` (``"end_"``).
    """
    s = re.sub(r"[^A-Za-z0-9_]", "_", str(name)).strip("_") or "port"
    s = re.sub(r"__+", "_", s)
    if not s[0].isalpha():
        s = "p" + s
    return s + "_" if s in C_KEYWORDS or s in MODELICA_KEYWORDS else s


def sanitize(names: Iterable[str], *, taken: Iterable[str] = ()) -> list[str]:
    """Distinct identifiers for ``names`` (:func:`identifier`, duplicates numbered).

    Parameters
    ----------
    names : iterable of str
        The names, in order.
    taken : iterable of str
        Identifiers already in use; they and :data:`RESERVED` are avoided.

    Returns
    -------
    list of str
        One identifier per name.
    """
    used = set(taken) | RESERVED
    out = []
    for name in names:
        s = identifier(name)
        if s.startswith("der_"):  # the C symbols of derivatives are der_<state>
            s += "_"
        base, k = s, 2
        while s in used:
            s = f"{base}_{k}"
            k += 1
        used.add(s)
        out.append(s)
    return out


def exported_names(system: object) -> dict[str, dict[str, str]]:
    """Identifiers of a surrogate's ports and states as the FMU exporter writes them.

    Parameters
    ----------
    system : LinearPH or PHDAE
        The surrogate (its ``input_names``, ``output_names``, ``state_names``).

    Returns
    -------
    dict
        ``{"inputs": {original: identifier}, "outputs": {...}, "states": {...}}`` for every name
        (unchanged names map to themselves).
    """
    taken: list[str] = []
    out: dict[str, dict[str, str]] = {}
    for group in ("inputs", "outputs", "states"):
        names = list(getattr(system, f"{group[:-1]}_names"))
        ids = sanitize(names, taken=taken)
        taken += ids
        out[group] = dict(zip(names, ids))
    return out

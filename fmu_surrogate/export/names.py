"""Identifiers for exported surrogates: port and state names that are valid in C and Modelica.

A name that is not an identifier (``[A-Za-z_][A-Za-z0-9_]*``), or is a C or Modelica keyword, or
collides with a variable the exporter adds (``H``, ``energy_residual`` …), is sanitised: runs of
other characters become ``_``, a leading digit gets a ``v_`` prefix, a keyword or reserved name
gets a trailing ``_``, and duplicates get ``_2``, ``_3`` ….  :func:`exported_names` returns the
mapping for every name that changed; the exporters record it in what they write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["RESERVED", "exported_names", "sanitize"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

_C_KEYWORDS = frozenset([
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Imaginary",
])
_MODELICA_KEYWORDS = frozenset([
    "algorithm", "and", "annotation", "block", "break", "class", "connect", "connector",
    "constant", "constrainedby", "der", "discrete", "each", "else", "elseif", "elsewhen",
    "encapsulated", "end", "enumeration", "equation", "expandable", "extends", "external",
    "false", "final", "flow", "for", "function", "if", "import", "impure", "in", "initial",
    "inner", "input", "loop", "model", "not", "operator", "or", "outer", "output", "package",
    "parameter", "partial", "protected", "public", "pure", "record", "redeclare", "replaceable",
    "return", "stream", "then", "true", "type", "when", "while", "within", "time",
])

#: Names of the variables an exported surrogate adds to its ports and states.
RESERVED = frozenset({"H", "energy_residual", "energy_dissipated", "energy_supplied"})


def _clean(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_]+", "_", str(name)).strip("_") or "v"
    if s[0].isdigit():
        s = "v_" + s
    return s


def sanitize(names: Iterable[str], *, taken: Iterable[str] = ()) -> list[str]:
    """Valid, distinct C/Modelica identifiers for ``names`` (unchanged where they already are).

    Parameters
    ----------
    names : iterable of str
        The names, in order.
    taken : iterable of str
        Identifiers already in use (they are avoided as well as :data:`RESERVED` and keywords).

    Returns
    -------
    list of str
        One identifier per name.
    """
    used = set(taken)
    out = []
    for name in names:
        s = name if _IDENT.match(str(name)) else _clean(name)
        if s in _C_KEYWORDS or s in _MODELICA_KEYWORDS or s in RESERVED or s.startswith("der_"):
            s += "_"
        base, k = s, 2
        while s in used:
            s = f"{base}_{k}"
            k += 1
        used.add(s)
        out.append(s)
    return out


def exported_names(system: object) -> dict[str, dict[str, str]]:
    """Identifiers of a surrogate's ports and states as the exporters write them.

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
    groups: Sequence[tuple[str, Sequence[str]]] = (
        ("inputs", system.input_names), ("outputs", system.output_names),  # type: ignore[attr-defined]
        ("states", system.state_names),  # type: ignore[attr-defined]
    )
    taken: list[str] = []
    out: dict[str, dict[str, str]] = {}
    for group, names in groups:
        ids = sanitize(names, taken=taken)
        taken += ids
        out[group] = dict(zip(names, ids))
    return out

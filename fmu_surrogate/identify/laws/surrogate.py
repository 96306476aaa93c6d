"""A discovered mechanical law as a port-Hamiltonian surrogate.

A sparse fit of the acceleration ``q̈ = θ_u u + θ_v q̇ + Σⱼ θⱼ φⱼ(q) (+ δ(q))`` (``RVM`` or
``GPRVM``, term names as :func:`~fmu_surrogate.identify.laws.library.polynomial_library` writes them)
is the law ``m q̈ + c q̇ + k(q) = u`` with ``m = 1/θ_u``, ``c = −m θ_v`` and
``k(q) = −m (Σⱼ θⱼ φⱼ(q) + δ(q))``.  As a pH system, ``x = (q, p)``, ``p = m q̇``::

    ẋ = ([[0, 1], [−1, 0]] − diag(0, c)) z(x) + [0, 1]ᵀ u,   z = ∇H = (k(q), p/m),
    H = p²/2m + ∫₀^q k,   y = q̇

with the effort a :class:`~fmu_surrogate.ph.TermEffort` (exact antiderivatives of the polynomial
and trigonometric terms; the GP discrepancy, if kept, as a Gaussian kernel expansion with its
closed-form integral), so the surrogate saves, loads, simulates and couples like any other.
"""

from __future__ import annotations

import re

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError
from fmu_surrogate.ph.efforts.term import TermEffort
from fmu_surrogate.ph.system import PHDAE

__all__ = ["LawError", "mechanical_surrogate"]


class LawError(FmuSurrogateError, ValueError):
    """A discovered law is not of the mechanical form ``m q̈ + c q̇ + k(q) = u``."""


def _position_term(name: str, q: str, coef: float) -> dict | None:
    """The restoring-force term ``−m θ φ(q)`` of a term name, or ``None`` if not a function of q."""
    if name == "1":
        return {"kind": "power", "exponent": 0, "coef": coef, "name": "1"}
    if name == q:
        return {"kind": "power", "exponent": 1, "coef": coef, "name": q}
    m = re.fullmatch(re.escape(q) + r"\^(\d+)", name)
    if m:
        return {"kind": "power", "exponent": int(m.group(1)), "coef": coef, "name": name}
    for kind in ("sin", "cos"):
        if name == f"{kind}({q})":
            return {"kind": kind, "coef": coef, "name": name}
    return None


def mechanical_surrogate(estimator, *, force: str, velocity: str, position: str,
                         discrepancy: bool = True) -> PHDAE:
    """The pH surrogate ``m q̈ + c q̇ + k(q) = u`` of a fitted acceleration law.

    Parameters
    ----------
    estimator : RVM or GPRVM
        Fitted on the acceleration of ``position`` as target, with term names
        (``fit(..., library=)``, ``fit_dataset`` or ``names=``).
    force, velocity, position : str
        Term names of the input force ``u``, of ``q̇`` and of ``q``.
    discrepancy : bool
        Keep a GPRVM's discrepancy ``δ(q)`` in ``k`` (it must have been fitted on ``position``
        alone).

    Returns
    -------
    PHDAE
        ``E = I``, ``J = [[0, 1], [−1, 0]]``, ``R = diag(0, c)``, ``B = [0, 1]ᵀ``; states
        ``(position, "p")``, input ``force``, output ``velocity``; ``hamiltonian`` exact.

    Raises
    ------
    LawError
        The force or velocity term was pruned, ``m`` or ``c`` is negative, a selected term is not
        a function of ``position`` alone, or the discrepancy sees other inputs.
    """
    estimator._check_fitted()
    names = list(estimator.feature_names_)
    coef = np.asarray(estimator.coef_, dtype=float)
    idx = {n: i for i, n in enumerate(names)}
    for role, n in (("force", force), ("velocity", velocity)):
        if n not in idx or coef[idx[n]] == 0.0:
            raise LawError(f"the {role} term {n!r} is not in the discovered law ({names}); "
                           f"it must be selected to read off m and c.")
    m = 1.0 / coef[idx[force]]
    c = -m * coef[idx[velocity]]
    if m <= 0 or c < 0:
        raise LawError(f"the discovered law gives m = {m:.6g}, c = {c:.6g}; a pH surrogate needs "
                       f"m > 0 and c >= 0 (check the target is the acceleration of {position!r}).")
    k_terms = []
    for i, n in enumerate(names):
        if i in (idx[force], idx[velocity]) or coef[i] == 0.0:
            continue
        term = _position_term(n, position, -m * coef[i])
        if term is None:
            raise LawError(f"selected term {n!r} is not a function of {position!r} alone; the "
                           f"law is not m q'' + c q' + k(q) = u.")
        k_terms.append(term)
    gp = getattr(estimator, "gp_", None)
    if discrepancy and gp is not None and gp["n_inducing"] > 0 and gp["signal_variance"] > 0:
        seen = getattr(estimator, "gp_input_names_", None)
        Z = np.asarray(gp["inducing_inputs"])
        if Z.shape[1] != 1 or (seen is not None and list(seen) != [position]):
            raise LawError(f"the discrepancy GP sees {seen or Z.shape[1]} inputs, not "
                           f"{position!r} alone; pass discrepancy=False to leave it out.")
        k_terms.append({"kind": "gaussian", "name": "delta", "centers": Z[:, 0],
                        "weights": -m * np.asarray(gp["weights"]),
                        "length_scale": gp["length_scale"]})
    effort = TermEffort([k_terms, [{"kind": "power", "exponent": 1, "coef": 1.0 / m,
                                    "name": "p"}]])
    return PHDAE(np.eye(2), [[0.0, 1.0], [-1.0, 0.0]], np.diag([0.0, c]), [[0.0], [1.0]],
                 effort=effort, hamiltonian=effort.hamiltonian, input_names=[force],
                 output_names=[velocity], state_names=[position, "p"])

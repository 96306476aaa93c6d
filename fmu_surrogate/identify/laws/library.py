"""Candidate libraries for sparse equation discovery (docs/design.md §5).

A :class:`CandidateLibrary` holds named terms built from named columns (``y^3``, ``sin(y)``,
``y*u``) and returns the design matrix ``Phi`` with the term names. :func:`unit_scales` gives
the column scales used inside the sparse estimators so that pruning does not depend on the
units of the columns; coefficients are reported back in the original units exactly
(``coef = coef_scaled / scale``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations_with_replacement

import numpy as np

from fmu_surrogate.errors import FmuSurrogateError

__all__ = ["CandidateLibrary", "LibraryError", "polynomial_library", "unit_scales"]


class LibraryError(FmuSurrogateError, ValueError):
    """A candidate library or its input columns are malformed."""


class CandidateLibrary:
    """Named candidate terms of named columns.

    Parameters
    ----------
    columns : sequence of str
        Names of the input columns, in the order of ``X``'s columns.
    terms : sequence of (str, callable)
        Term name and a function of a dict ``{column name: ndarray (N,)}`` returning ``(N,)``.
    """

    def __init__(self, columns: Sequence[str],
                 terms: Sequence[tuple[str, Callable[[dict], np.ndarray]]]) -> None:
        self.columns = list(columns)
        self.terms = list(terms)
        names = [n for n, _ in self.terms]
        if len(set(names)) != len(names):
            raise LibraryError(f"duplicate term names in the library: {names}; rename them.")

    @property
    def names(self) -> list[str]:
        """Term names, in the order of ``Phi``'s columns."""
        return [n for n, _ in self.terms]

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Design matrix.

        Parameters
        ----------
        X : ndarray, shape (N, len(columns))

        Returns
        -------
        ndarray, shape (N, K)

        Raises
        ------
        LibraryError
            If ``X`` has the wrong number of columns or non-finite values.
        """
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != len(self.columns):
            raise LibraryError(
                f"X must have shape (N, {len(self.columns)}) for columns {self.columns}; "
                f"got {X.shape}."
            )
        if not np.all(np.isfinite(X)):
            raise LibraryError("X contains NaN or inf; drop or fill those samples first.")
        env = {c: X[:, i] for i, c in enumerate(self.columns)}
        return np.column_stack([np.broadcast_to(f(env), (X.shape[0],)) for _, f in self.terms])


def _monomial(cols: tuple[str, ...]) -> tuple[str, Callable[[dict], np.ndarray]]:
    parts = []
    for c in dict.fromkeys(cols):
        k = cols.count(c)
        parts.append(c if k == 1 else f"{c}^{k}")

    def f(env: dict, cols: tuple[str, ...] = cols) -> np.ndarray:
        out = np.ones_like(env[cols[0]])
        for c in cols:
            out = out * env[c]
        return out

    return "*".join(parts), f


def polynomial_library(columns: Sequence[str], degree: int, *, bias: bool = False,
                       trig: Sequence[str] = ()) -> CandidateLibrary:
    """All monomials of ``columns`` up to ``degree`` (plus ``sin``/``cos`` of the ``trig`` columns).

    Parameters
    ----------
    columns : sequence of str
    degree : int
    bias : bool
        Include the constant term ``1``.
    trig : sequence of str
        Columns whose ``sin`` and ``cos`` are added.

    Returns
    -------
    CandidateLibrary
    """
    terms: list = []
    if bias:
        terms.append(("1", lambda env: np.ones_like(next(iter(env.values())))))
    for d in range(1, int(degree) + 1):
        for cols in combinations_with_replacement(list(columns), d):
            terms.append(_monomial(cols))
    for c in trig:
        terms.append((f"sin({c})", lambda env, c=c: np.sin(env[c])))
        terms.append((f"cos({c})", lambda env, c=c: np.cos(env[c])))
    return CandidateLibrary(columns, terms)


def unit_scales(Phi: np.ndarray) -> np.ndarray:
    """Root-mean-square of each column (1 for an all-zero column).

    Parameters
    ----------
    Phi : ndarray, shape (N, K)

    Returns
    -------
    ndarray, shape (K,)
        Dividing ``Phi`` by these makes the sparse fit independent of the columns' units.
    """
    s = np.sqrt(np.mean(np.asarray(Phi, dtype=float) ** 2, axis=0))
    return np.where(s > 0, s, 1.0)

"""What each unknown of an exported surrogate depends on: the ``<ModelStructure>`` of its model
description, read off the matrices the C code evaluates.

An unknown depends on a state or an input exactly where the matrix that maps one to the other in
the C code has a nonzero entry, so the declared dependencies are the code's own.  For today's
surrogates ``y = Bᵀz(x)`` depends on the states only (no direct feedthrough), and an importer that
connects two exported surrogates back to back sees no algebraic loop.  Nonlinear efforts are
taken as dense in the differential states; an index-1 algebraic state depends on the inputs that
enter the algebraic equations, and so does everything computed from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Sparsity", "linear_sparsity", "nonlinear_sparsity"]


@dataclass(frozen=True)
class Sparsity:
    """Boolean dependency patterns of an exported surrogate (``x``: states, ``u``: inputs).

    Attributes
    ----------
    y_x, y_u : ndarray of bool, shape (k_out, n), (k_out, k_in)
        Output ports.
    dx_x, dx_u : ndarray of bool, shape (n_d, n), (n_d, k_in)
        Derivatives of the differential states, in their order.
    h_x, h_u : ndarray of bool, shape (n,), (k_in,)
        The Hamiltonian.
    diss_x, diss_u, supp_x, supp_u : ndarray of bool
        Dissipated and supplied power (the derivatives of the two energy integrals).
    """

    y_x: np.ndarray
    y_u: np.ndarray
    dx_x: np.ndarray
    dx_u: np.ndarray
    h_x: np.ndarray
    h_u: np.ndarray
    diss_x: np.ndarray
    diss_u: np.ndarray
    supp_x: np.ndarray
    supp_u: np.ndarray


def _quad_mask(P: np.ndarray) -> np.ndarray:
    """Variables ``w_k`` the quadratic form ``wᵀPw`` depends on: ``(P + Pᵀ)[k] ≠ 0``."""
    return np.any((P + P.T) != 0, axis=1)


def linear_sparsity(mats: dict[str, np.ndarray]) -> Sparsity:
    """Dependencies of an exact linear surrogate from the matrices its C code uses.

    Parameters
    ----------
    mats : dict of str to ndarray
        ``A`` (n, n), ``B`` (n, k_in), ``C`` (k_out, n), ``D`` (k_out, k_in), ``HM`` (n, n), and
        ``PR``, ``PS`` ((n + k_in) square): ``x' = A x + B u``, ``y = C x + D u``,
        ``H = ½ xᵀ HM x``, powers ``wᵀ PR w``, ``wᵀ PS w`` with ``w = (x, u)``.

    Returns
    -------
    Sparsity
    """
    n = mats["A"].shape[0]
    diss, supp = _quad_mask(mats["PR"]), _quad_mask(mats["PS"])
    h = _quad_mask(mats["HM"])
    k_in = mats["B"].shape[1]
    return Sparsity(mats["C"] != 0, mats["D"] != 0, mats["A"] != 0, mats["B"] != 0, h,
                    np.zeros(k_in, bool), diss[:n], diss[n:], supp[:n], supp[n:])


def nonlinear_sparsity(system: Any, rows_a: np.ndarray, cols_a: np.ndarray) -> Sparsity:
    """Dependencies of a nonlinear surrogate ``E x' = (J − R) z(x) + B u``, ``y = Bᵀ z(x)``.

    Parameters
    ----------
    system : PHDAE
        The surrogate (its effort is taken as dense in the differential states).
    rows_a, cols_a : ndarray of int
        The algebraic equations (zero rows of ``E``) and states (zero columns).

    Returns
    -------
    Sparsity
    """
    n, m = system.n_states, system.n_inputs
    B = np.asarray(system.B, dtype=float).reshape(n, m)
    x_d = np.ones(n, bool)
    x_d[cols_a] = False
    # the algebraic states solve (J - R)_a z(x) + B_a u = 0: they follow these inputs
    u_alg = np.any(B[rows_a] != 0, axis=0)
    rows_d = np.setdiff1d(np.arange(n), rows_a)
    cols_d = np.flatnonzero(x_d)
    E = np.asarray(system.E, dtype=float)
    einv = np.linalg.inv(E[np.ix_(rows_d, cols_d)]) != 0
    # x_d' = E_dd⁻¹ [(J - R) z(x) + B u]_d
    dx_u = (einv.astype(int) @ (B[rows_d] != 0).astype(int) > 0) | u_alg
    n_d = rows_d.size
    return Sparsity(np.tile(x_d, (m, 1)), np.tile(u_alg, (m, 1)), np.tile(x_d, (n_d, 1)), dx_u,
                    x_d, u_alg, x_d, u_alg, x_d, u_alg | np.any(B != 0, axis=0))

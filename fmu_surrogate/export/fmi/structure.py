"""What each unknown of an exported surrogate depends on: the ``<ModelStructure>`` of its model
description, read off the matrices the C code evaluates.

An unknown depends on a state or an input exactly where the matrix that maps one to the other in
the C code has a nonzero entry, so the declared dependencies are the code's own.  For today's
surrogates ``y = Bᵀz(x)`` depends on the states only (no direct feedthrough), and an importer that
connects two exported surrogates back to back sees no algebraic loop.  Nonlinear efforts are
taken as dense in the differential states; an index-1 algebraic state depends on the inputs that
enter the algebraic equations, and so does everything computed from it.  A static law of the
external inputs in the outputs (``PortMap.law``) adds its own output→input pairs
(:func:`with_static_law`).  An output that reads the state's rate (``PortMap.Cdx``) depends on
what that rate depends on: the states through the flow, the inputs through ``Cdx (G − P) Tu``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

__all__ = ["Sparsity", "linear_sparsity", "nonlinear_sparsity", "with_static_law"]


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
    y_s, dx_s, diss_s, supp_s : ndarray of bool, optional
        Dependencies on the constant sources (parameters: they matter at initialisation),
        columns in the order of the sources (rows as ``y_x``, ``dx_x``); none by default.
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
    y_s: np.ndarray | None = None
    dx_s: np.ndarray | None = None
    diss_s: np.ndarray | None = None
    supp_s: np.ndarray | None = None


def _quad_mask(P: np.ndarray) -> np.ndarray:
    """Variables ``w_k`` the quadratic form ``wᵀPw`` depends on: ``(P + Pᵀ)[k] ≠ 0``."""
    return np.any((P + P.T) != 0, axis=1)


def linear_sparsity(mats: dict[str, np.ndarray], Tu: np.ndarray, sources: np.ndarray
                    ) -> Sparsity:
    """Dependencies of an exact linear surrogate from the matrices its C code uses.

    Parameters
    ----------
    mats : dict of str to ndarray
        :func:`~fmu_surrogate.export.fmi.c_data.linear_matrices`: ``A`` (n, n), ``BE`` (n, k_in),
        ``CE`` (k_out, n), ``DE`` (k_out, k_in) on the external inputs and outputs, ``DY``
        (k_out, m) the outputs on the pH port inputs, ``HM`` (n, n), and the powers' ``PR``,
        ``PS`` ((n + m) square) on ``w = (x, u_ph)``.
    Tu : ndarray, shape (m, k_in)
        How the external inputs drive the pH ports.
    sources : ndarray of int
        The pH ports driven by constant sources.

    Returns
    -------
    Sparsity
        An output depends on an external input exactly where ``DE = DY Tu + Du ≠ 0`` (``DY =
        Ty D + Cdx B`` with outputs that read the rate), on a state where ``CE ≠ 0``.
    """
    n = mats["A"].shape[0]
    tu = (Tu != 0).astype(int)

    def on_inputs(mask_ph: np.ndarray) -> np.ndarray:
        return (mask_ph.astype(int) @ tu) > 0

    diss, supp = _quad_mask(mats["PR"]), _quad_mask(mats["PS"])
    return Sparsity(mats["CE"] != 0, mats["DE"] != 0, mats["A"] != 0, mats["BE"] != 0,
                    _quad_mask(mats["HM"]), np.zeros(Tu.shape[1], bool), diss[:n],
                    on_inputs(diss[n:]), supp[:n], on_inputs(supp[n:]),
                    mats["DY"][:, sources] != 0, mats["B"][:, sources] != 0,
                    diss[n + sources], supp[n + sources])


def _bool_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(int) @ b.astype(int)) > 0


def nonlinear_sparsity(w: Any, rows_a: np.ndarray, cols_a: np.ndarray) -> Sparsity:
    """Dependencies of a nonlinear surrogate ``E x' = (J − R) z(x) + (G − P) u``,
    ``y = (G + P)ᵀ z(x) + D u`` (``+ S_nl(u) u`` for a nonlinear feedthrough), on its external
    variables (``w``: its :class:`~fmu_surrogate.export.wiring.Wiring`; outputs that read
    ``x'``, its ``Cdx``, depend on what ``x'`` depends on).

    Parameters
    ----------
    w : Wiring
        The surrogate (its effort is taken as dense in the differential states) and its wiring.
    rows_a, cols_a : ndarray of int
        The algebraic equations (zero rows of ``E``) and states (zero columns).

    Returns
    -------
    Sparsity
    """
    system = w.system
    n, m = system.n_states, system.n_inputs
    Bin = np.asarray(system.input_matrix, dtype=float).reshape(n, m)
    Bout = np.asarray(system.output_matrix, dtype=float).reshape(n, m)
    x_d = np.ones(n, bool)
    x_d[cols_a] = False
    # the algebraic states solve (J - R)_a z(x) + B_a u = 0: they follow these ports
    u_alg = np.any(Bin[rows_a] != 0, axis=0)
    rows_d = np.setdiff1d(np.arange(n), rows_a)
    cols_d = np.flatnonzero(x_d)
    E = np.asarray(system.E, dtype=float)
    einv = np.linalg.inv(E[np.ix_(rows_d, cols_d)]) != 0
    # on the pH ports: x_d' = E_dd⁻¹ [(J - R) z(x) + B u]_d, y = Boutᵀ z + D u, powers
    dx_u = _bool_product(einv, Bin[rows_d] != 0) | u_alg
    # a nonlinear feedthrough S_nl(u) u: output i reads the inputs of every term whose direction
    # m_k has a component i; its power uᵀS_nl(u)u reads the inputs of all terms
    law = getattr(system, "nonlinear_feedthrough", None)
    M = np.zeros((0, m), bool) if law is None else law.directions != 0
    y_u = (system.D != 0) | u_alg | _bool_product(M.T, M)
    u_law = np.any(M, axis=0)
    diss_u = u_alg | np.any(system.P != 0, axis=0) | np.any(system.S != 0, axis=1) | u_law
    supp_u = u_alg | np.any(Bout != 0, axis=0) | np.any((system.D + system.D.T) != 0, axis=1) \
        | u_law
    tu, ty = w.Tu != 0, w.Ty != 0
    src = w.sources
    n_d, k_out = rows_d.size, ty.shape[0]
    ye_x = _bool_product(ty, np.tile(x_d, (m, 1))) | (w.Cx != 0)
    ye_ph = _bool_product(ty, y_u)  # the outputs on the pH port inputs
    if w.Cdx is not None:  # outputs that read x' (E = I): the flow's states and port inputs
        cdx = w.Cdx[:, cols_d] != 0
        ye_x = ye_x | _bool_product(cdx, np.tile(x_d, (n_d, 1)))
        ye_ph = ye_ph | _bool_product(cdx, dx_u)
    return Sparsity(ye_x, _bool_product(ye_ph, tu) | (w.Du != 0),
                    np.tile(x_d, (n_d, 1)), _bool_product(dx_u, tu), x_d,
                    _bool_product(u_alg, tu), x_d, _bool_product(diss_u, tu), x_d,
                    _bool_product(supp_u, tu), ye_ph[:, src].reshape(k_out, -1),
                    dx_u[:, src], diss_u[src], supp_u[src])


def with_static_law(sp: Sparsity, law: Any) -> Sparsity:
    """``sp`` with the output→input dependencies of a static law of the external inputs.

    Parameters
    ----------
    sp : Sparsity
        The dependencies of the core and the affine wiring.
    law : StaticLaw or None
        The wiring's static law (``PortMap.law``): output ``i`` depends on input ``j`` where a
        term with a gain on ``i`` has a direction with a component ``j``.

    Returns
    -------
    Sparsity
        ``y_u`` joined with ``law.dependencies`` (``sp`` itself without a law).
    """
    return sp if law is None else replace(sp, y_u=sp.y_u | law.dependencies)

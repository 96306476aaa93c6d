"""Standardised units of the GP effort fit, and the exact map of its result back.

Internally the states are scaled to unit standard deviation per dimension (``x̂ = (x − μ)/σ``;
with a shared length scale all states share one factor, so the kernel stays isotropic in ``x``)
and the targets by their overall RMS ``s_y`` (one factor for all components: per-component
scaling would change the structure ``y = T z``, and some components are identically zero).
The effort expansion is mapped back exactly: ``ℓ = ℓ̂ σ``, ``W = s_y Ŵ``; for the Hamiltonian part
``H(x) = s_y Ĥ(x̂)``, i.e. ``V = s_y σ_d ⊙ V̂``, ``a = s_y â / σ_d`` (the standardised effort map
is ``E_dd^{-T} diag(1/σ_d)``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.ph.efforts.kernel import KernelEffort

Array = NDArray[np.float64]

__all__ = ["Scales", "initial_lengthscale", "kernel_effort", "learned_attributes", "scales_of"]


class Scales(NamedTuple):
    """State means ``mu`` (n,), state scales ``sd`` (n,) and the target scale ``ys``."""

    mu: Array
    sd: Array
    ys: float


def scales_of(X: Array, Y: Array, ard: bool) -> Scales:
    """The standardisation of states ``X`` (N, n) and targets ``Y`` (N, n) (module doc).

    Parameters
    ----------
    X, Y : ndarray, shape (N, n)
        States and (residual) targets.
    ard : bool
        One scale per state; otherwise one common scale (RMS of the per-state deviations).

    Returns
    -------
    Scales
        Zero deviations are replaced by 1.
    """
    n = X.shape[1]
    mu = X.mean(0)
    sd = X.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    if not ard:  # one common scale, so a shared length scale stays isotropic in x
        sd = np.full(n, float(np.sqrt(np.mean(sd**2))))
    ys = float(np.sqrt(np.mean(Y**2)))
    return Scales(mu, sd, ys if ys > 0 else 1.0)


def initial_lengthscale(init: float | ArrayLike | None, scales: Scales, ard: bool) -> Array:
    """Initial length scale(s) in standardised units: (n,), or (1,) (geometric mean) without ARD.

    Parameters
    ----------
    init : float or array_like (n,), optional
        In state units; default one standard deviation per state.
    scales : Scales
    ard : bool

    Returns
    -------
    ndarray, shape (n,) or (1,)
    """
    n = scales.sd.size
    if init is None:
        ls0 = np.ones(n)
    else:
        ls0 = np.broadcast_to(np.asarray(init, float), (n,)) / scales.sd
        if not np.all(ls0 > 0):
            raise InvalidInputError("init_lengthscale must be positive.")
    if not ard:
        ls0 = np.array([float(np.exp(np.mean(np.log(ls0))))])
    return ls0


def kernel_effort(
    post: Any, X: Array, scales: Scales, differential: NDArray[np.bool_] | None, E: Array
) -> KernelEffort:
    """The posterior-mean effort of a fitted GP as a :class:`KernelEffort` in original units.

    Parameters
    ----------
    post : KroneckerPosterior or HamiltonianPosterior
        The posterior in standardised units.
    X : ndarray, shape (N, n)
        Training states (original units).
    scales : Scales
    differential : ndarray of bool, shape (n,), or None
        The differential states of the Hamiltonian variant; ``None`` for the plain variant.
    E : ndarray, shape (n, n)
        Descriptor matrix (Hamiltonian variant: gives the effort map ``E_dd^{-T}``).

    Returns
    -------
    KernelEffort
    """
    mu, sd, ys = scales
    n = X.shape[1]
    if differential is None:
        return KernelEffort(
            X,
            post.effort_weights * ys,
            np.broadcast_to(post.lengthscale, (n,)) * sd,
            post.mean_z * ys,
        )
    kw = post.kernel_effort_kwargs()
    d = np.nonzero(differential)[0]
    a = np.nonzero(~differential)[0]
    sdd = sd[d]
    a_hat = kw["h_linear"]
    out = {
        "X": X,
        "weights": kw["weights"] * ys,
        "lengthscale": kw["lengthscale"] * sd,
        "offset": kw["offset"] * ys,
        "differential": d,
        "h_weights": kw["h_weights"] * ys * sdd,
        "h_lengthscale": kw["h_lengthscale"] * sdd,
        "effort_map": np.linalg.inv(E[np.ix_(d, d)]).T,
        "h_linear": ys * a_hat / sdd,
        "h_offset": -ys * float(a_hat @ (mu[d] / sdd)),
    }
    if "c_weights" in kw:
        out.update(
            c_weights=kw["c_weights"] * ys / sdd[None, :],
            c_lengthscale=kw["c_lengthscale"] * sdd,
            c_anchor=kw["c_anchor"] / sd[a][None, :],  # (x̂_a + μ_a/σ_a)/σ_a = x_a/σ_a²
            c_shift=np.zeros(a.size),
        )
    return KernelEffort(**out)


def learned_attributes(
    post: Any, model: Any, scales: Scales, learned: NDArray[np.bool_],
    differential: NDArray[np.bool_] | None,
) -> dict[str, Array]:
    """The fitted estimator's learned attributes (``lengthscale_``, ``noise_``, …) in original units.

    Parameters
    ----------
    post : KroneckerPosterior or HamiltonianPosterior
        The posterior in standardised units.
    model : TransformedMultitaskGP or HamiltonianEffortGP
        The trained model (the plain variant's task factor and diagonal).
    scales : Scales
    learned : ndarray of bool, shape (n,)
        The components the GP models.
    differential : ndarray of bool, shape (n,), or None
        The differential states of the Hamiltonian variant; ``None`` for the plain variant.

    Returns
    -------
    dict
        Attribute name -> value.
    """
    _mu, sd, ys = scales
    n = sd.size
    out = {
        "lengthscale_": np.broadcast_to(post.lengthscale, (n,)) * sd,
        "noise_": post.noise * ys**2,
        "mean_": post.mean_z * ys,
        "task_covariance_": post.K_T * ys**2,
        "weights_": post.effort_weights * ys,
    }
    if differential is None:
        F = model.task_factor.detach().numpy() * learned[:, None]
        out["task_factor_"] = F * ys
        out["task_diag_"] = np.exp(model.raw_task_diag.detach().numpy()) * ys**2 * learned
    else:
        out["hamiltonian_lengthscale_"] = post.h_lengthscale * sd[differential]
    return out

"""Noisy data: order completion of the linear pH identification (``complete``), chosen by
generalised cross-validation (fmu_surrogate.identify.linear.estimator)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as scs

from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
from fmu_surrogate.identify.linear.init.subspace import noise_limited, subspace_identify
from fmu_surrogate.identify.linear.model.discretisation import simulate


def paper_system() -> dict[str, np.ndarray]:
    """The n = 5, m = 2 system of Günther, Jacob & Totzeck (the authors' recipe, R PSD)."""
    rs = np.random.RandomState(10)
    B = np.zeros((5, 2))
    B[:2, :2] = np.diag([4.0, 2.0])
    B = B - 0.1 + 0.2 * rs.rand(5, 2)
    U = np.triu(-0.1 + 0.1 * rs.rand(5, 5), 1)
    A = -0.1 + 0.2 * rs.rand(5, 5)
    A[:2, :] = 0.0
    return {"J": U - U.T, "R": A @ A.T, "Q": np.diag(np.arange(1.0, 6.0)), "B": B,
            "x0": np.zeros(5)}


@pytest.fixture(scope="module")
def data():
    t = np.linspace(0.0, 1.0, 1001)
    u = np.stack([scs.chirp(t, 3.0, 1.0, 20.0), np.sin(6 * np.pi * t)], axis=-1)
    return t, u, simulate(paper_system(), t, u, hold="linear")[1]


def test_noise_limited_tells_noise_from_round_off(data):
    t, u, y = data
    noisy = y + 0.01 * np.random.default_rng(0).standard_normal(y.shape)
    s_exact = subspace_identify([(t, u, y, "linear")], 5).singular_values
    s_noisy = subspace_identify([(t, u, noisy, "linear")], 5).singular_values
    assert not noise_limited(s_exact) and noise_limited(s_noisy)


def test_gcv_completion_halves_the_error_at_low_noise(data):
    # σ = 0.01: the noise floor leaves 2 states; refining all 5 toward the padded model (λ by
    # GCV) halves the max error against the noise-free output (measured medians over 20
    # realisations 3.3e-3 → 1.5e-3; here 2 realisations: 2.7e-3, 3.1e-3 → 6.9e-4, 1.7e-3)
    t, u, y = data
    err = {"pad": [], "auto": []}
    for k in range(2):
        yn = y + 0.01 * np.random.default_rng(1000 + k).standard_normal(y.shape)
        for c, errs in err.items():
            est = LinearPHIdentifier(5, Q=np.eye(5), complete=c).fit(t, u, yn)
            errs.append(float(np.max(np.abs(est.predict(t, u) - y))))
            s = est.system_
            assert np.array_equal(s.J, -s.J.T) and np.linalg.eigvalsh(s.R).min() >= -1e-12
            if c == "auto":
                assert "GCV" in est.result_.stopping_reason
                assert est.result_.cost_history[-1] <= est.result_.cost_history[0]
    assert np.median(err["auto"]) < 0.7 * np.median(err["pad"])


def test_complete_is_validated(data):
    t, u, y = data
    with pytest.raises(ValueError, match="complete must be one of"):
        LinearPHIdentifier(5, complete="grow").fit(t, u, y)


def test_noisy_fit_stops_at_the_noise_level_without_losing_accuracy(data, monkeypatch):
    # σ = 0.05, one Levenberg–Marquardt run from the paper's guess: once the residual is noise,
    # the fit stops after NOISE_WINDOW steps that move the parameters by far less than their
    # standard error; without the rule it runs on until the stall window (20 iterations) ends
    # it, at the same model
    from fmu_surrogate.identify.linear.optim import lm

    t, u, y = data
    yn = y + 0.05 * np.random.default_rng(1000).standard_normal(y.shape)
    fits = []
    for tol in (lm.NOISE_TOL, 0.0):
        monkeypatch.setattr(lm, "NOISE_TOL", tol)
        est = LinearPHIdentifier(5, Q=np.eye(5), init="paper").fit(t, u, yn)  # one LM run
        fits.append((est.result_, float(np.max(np.abs(est.predict(t, u) - y)))))
    (res, err), (res0, err0) = fits
    assert res.stopping_reason.startswith("converged to the noise level")
    assert res.n_iter < res0.n_iter and res0.n_iter >= lm.STALL_WINDOW
    # measured: 37 against 43 iterations (1.1 s against 2.0 s), max error 4.8e-3 against 4.9e-3,
    # costs equal to 1e-5 relative: the noise level is 1e-2 relative per residual, so a cost
    # within 1e-4 relative is statistically the same fit
    assert abs(err - err0) <= 0.05 * err0
    assert res.final_cost <= res0.final_cost * (1 + 1e-4)


def test_authors_sampling_meets_the_papers_noise_table():
    # The published noise table comes from the authors' code, which samples every 1e-4 s
    # (10⁴ noisy samples per output; the paper's text says 1e-3).  At that sampling the default
    # estimator's max training error against the noise-free output, σ = 0.05, realisations
    # 1000 and 1001: measured 3.5e-3 and 1.8e-3 (20 realisations: median in the reproduction
    # JSON); the paper's single realisation 3.66e-3.
    t = np.arange(10001) * 1e-4
    u = np.stack([scs.chirp(t, 3.0, 1.0, 20.0), np.sin(6 * np.pi * t)], axis=-1)
    y = simulate(paper_system(), t, u, hold="linear")[1]
    err = []
    for k in range(2):
        yn = y + 0.05 * np.random.default_rng(1000 + k).standard_normal(y.shape)
        est = LinearPHIdentifier(5, Q=np.eye(5)).fit(t, u, yn)
        err.append(float(np.max(np.abs(est.predict(t, u) - y))))
        s = est.system_
        assert np.array_equal(s.J, -s.J.T) and np.linalg.eigvalsh(s.R).min() >= -1e-12
    assert np.median(err) <= 3.66e-3

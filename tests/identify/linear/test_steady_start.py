"""Runs that start at the equilibrium of their first inputs (a model initialised in steady
state): the linear drop-in fit starts each run there, and the surrogate does too."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from fmu_surrogate.identify.linear.estimator import LinearPHIdentifier
from fmu_surrogate.identify.linear.steady_start import training_miss
from fmu_surrogate.ph import simulate

UNITS = {"F": "N", "v": "m/s", "a": "m/s2", "q": "m"}


def _mass_runs(starts, preload, outputs):
    """A 1 kg mass on 40 N/m with 2 Ns/m pushed by F + a preload, each run started at rest
    where the spring holds its first force, ``q(0) = (F(0) + preload)/k``: scipy's exact
    zero-order-hold response (``cont2discrete``/``dlsim``) of a multisine about F(0) (0.2–3
    Hz), sampled at 10 ms for 10 s."""
    rng = np.random.default_rng(0)
    t = np.arange(0.0, 10.0 + 5e-3, 0.01)
    A, B = np.array([[0.0, 1.0], [-40.0, -2.0]]), np.array([[0.0], [1.0]])
    rows = {"q": ([1.0, 0.0], 0.0), "v": ([0.0, 1.0], 0.0), "a": ([-40.0, -2.0], 1.0)}
    C = np.array([rows[o][0] for o in outputs])
    D = np.array([[rows[o][1]] for o in outputs])
    disc = signal.cont2discrete((A, B, C, D), 0.01, method="zoh")
    runs = []
    for F0 in starts:
        f, ph, a = rng.uniform(0.2, 3.0, 6), rng.uniform(0, 2 * np.pi, 6), rng.uniform(0.5, 1, 6)
        wave = (np.sin(2 * np.pi * np.multiply.outer(t, f) + ph) - np.sin(ph)) @ a / a.sum()
        F = F0 + 4.0 * wave
        _, y, _ = signal.dlsim(disc[:4] + (0.01,), (F + preload)[:, None], t=t,
                               x0=[(F0 + preload) / 40.0, 0.0])
        runs.append((t, F, np.asarray(y).reshape(t.size, len(outputs))))
    return runs


def _dataset(runs, outputs):
    from fmu_surrogate.fmu.dataset import RunRecord, records_to_dataset

    records = [RunRecord(index=i, values={"F": F, **{o: y[:, j] for j, o in enumerate(outputs)}})
               for i, (_t, F, y) in enumerate(runs)]
    ds = records_to_dataset(records, runs[0][0], None, ["F", *outputs],
                            attrs={"input_interpolation": "zero-order hold over each step"})
    for name in ("F", *outputs):
        ds[name].attrs.update(units=UNITS[name], causality="input" if name == "F" else "output")
    return ds


def _held_out_error(est, run):
    t, F, y = run
    y_hat = simulate(est.to_surrogate(), t, F[:, None]).y
    return np.linalg.norm(y_hat - y, axis=0) / np.linalg.norm(y, axis=0)


@pytest.mark.parametrize("outputs", [("v",), ("v", "a"), ("v", "a", "q")])
def test_runs_started_at_the_equilibria_of_their_first_forces_are_fitted_to_round_off(outputs):
    """The runs start at F(0) = 3, −5, 8, 1 N under a 20 N preload: from a state (shared by
    the runs) the fit misses the held-out run by 23–36 %; from each run's equilibrium it is
    exact (zero-order-hold data, the exact discretisation)."""
    runs = _mass_runs((3.0, -5.0, 8.0, 1.0), 20.0, outputs)
    ds = _dataset(runs, outputs)
    est = LinearPHIdentifier().fit_dataset(ds, runs=[0, 1, 2])
    sur = est.to_surrogate()
    assert est.initial_ == "equilibrium" and sur.initial == "equilibrium"
    assert est.system_.n_states == 2 and "equilibrium start" in est.result_.fitted
    # measured 3e-15 – 3e-13: round-off through the fit's conditioning
    assert _held_out_error(est, runs[3]).max() < 1e-9
    # the surrogate starts at rest where the spring holds 1 + 20 N: v = 0 (and a = 0)
    x = sur.initial_state([1.0])
    assert np.abs(sur.outputs(x, [1.0])[:2]).max() < 1e-9
    state = LinearPHIdentifier(initial="state").fit_dataset(ds, runs=[0, 1, 2])
    assert state.initial_ == "state" and _held_out_error(state, runs[3]).max() > 0.1


def test_runs_from_rest_keep_the_state():
    """Runs from rest with no preload: the first inputs are zero, their equilibrium is the rest
    state, nothing is tried — and the report says the data could not have told."""
    from fmu_surrogate.identify.fit_report import describe_fit

    runs = _mass_runs((0.0, 0.0, 0.0, 0.0), 0.0, ("v", "a"))
    est = LinearPHIdentifier().fit_dataset(_dataset(runs, ("v", "a")), runs=[0, 1, 2])
    assert est.initial_ == "state" and est.to_surrogate().initial == "state"
    assert _held_out_error(est, runs[3]).max() < 1e-9  # exact data, as above
    assert est.start_rule_open_
    assert "every run starts from the same inputs" in describe_fit(est, [0, 1, 2], [3])
    # runs from other first inputs tell it: no such line
    other = LinearPHIdentifier().fit_dataset(
        _dataset(_mass_runs((3.0, -5.0, 8.0, 1.0), 20.0, ("v", "a")), ("v", "a")),
        runs=[0, 1, 2])
    assert not other.start_rule_open_
    assert "every run starts from the same inputs" not in describe_fit(other, [0, 1, 2], [3])


def test_the_rule_can_be_asked_for_and_is_checked():
    runs = _mass_runs((3.0, -5.0, 8.0, 1.0), 20.0, ("v", "a"))
    raw = [(t, F[:, None], y, "zoh") for t, F, y in runs[:3]]
    est = LinearPHIdentifier(initial="equilibrium").fit_dataset(_dataset(runs, ("v", "a")),
                                                                 runs=[0, 1, 2])
    assert est.initial_ == "equilibrium"
    assert training_miss(est, raw) < 1e-9  # exact data, as above
    # on arrays too (power pairs in order: the velocity), the order chosen from the data
    runs_v = _mass_runs((3.0, -5.0, 8.0, 1.0), 20.0, ("v",))
    arrays = LinearPHIdentifier(initial="equilibrium", input_hold="zoh").fit(
        [(t, F[:, None], y) for t, F, y in runs_v[:3]])
    t, F, y = runs_v[3]
    assert arrays.initial_ == "equilibrium" and arrays.system_.n_states == 2
    # measured 3.2e-13, exact data as above
    assert arrays.errors(t, F[:, None], y, hold="zoh").relative_rms < 1e-9
    with pytest.raises(ValueError, match="initial must be 'auto', 'state' or 'equilibrium'"):
        LinearPHIdentifier(initial="steady").fit_dataset(_dataset(runs, ("v", "a")))

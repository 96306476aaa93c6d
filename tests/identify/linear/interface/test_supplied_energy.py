"""Power pairs by the energy the data supply (identify/linear/interface/supplied_energy.py), and
the pairing's fallback to them when the linear model cannot tell the pairs apart
(identify/linear/interface/pairing.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fmu_surrogate.identify.linear.interface.pairing import detect_pairs, passivity_pairs
from fmu_surrogate.identify.linear.interface.passivity_score import passivity_scores
from fmu_surrogate.identify.linear.interface.supplied_energy import (
    ENERGY_FLOOR,
    ENERGY_MARGIN,
    energy_matching,
    energy_score,
)

INS, OUTS = ["F1", "F2"], ["v1", "v2", "Fs"]


def _noise(seed: int, t: np.ndarray, std: float) -> np.ndarray:
    """Band-limited noise (below 2 Hz) with the standard deviation ``std``."""
    rng = np.random.default_rng(seed)
    f = np.fft.rfftfreq(t.size, t[1] - t[0])
    X = rng.normal(size=f.size) + 1j * rng.normal(size=f.size)
    X[f > 2.0] = 0.0
    x = np.fft.irfft(X, t.size)
    return std * x / x.std()


def two_masses(seed: int, x0=(0.0, 0.0, 0.0, 0.0), std: float = 1.0, k3: float = 200.0):
    """Two masses (1 and 0.5) on a progressive spring ``x + k3 x³`` with a damper between them
    and dampers to ground, a force on each (zero-order hold), from ``x0`` = (x1, v1, x2, v2):
    a record (t, (F1, F2), (v1, v2, spring force), "zoh") without units."""
    t = np.arange(0.0, 20.0 + 1e-9, 0.02)
    F = np.column_stack([_noise(seed, t, std), _noise(seed + 100, t, std)])

    def rhs(s, x):
        f = F[min(int(s / 0.02 + 1e-9), t.size - 1)]
        fs = (x[0] - x[2]) + k3 * (x[0] - x[2]) ** 3 + 0.3 * (x[1] - x[3])
        return [x[1], f[0] - fs - 0.2 * x[1], x[3], (f[1] + fs - 0.2 * x[3]) / 0.5]

    y = np.empty((t.size, 4))
    y[0] = x0
    for k in range(t.size - 1):  # one solve per hold interval: the force is constant in it
        y[k + 1] = solve_ivp(rhs, (t[k], t[k + 1]), y[k], rtol=1e-10, atol=1e-12).y[:, -1]
    e = y[:, 0] - y[:, 2]
    return t, F, np.column_stack([y[:, 1], y[:, 3], e + k3 * e**3]), "zoh"


@pytest.fixture(scope="module")
def stiff():
    return [two_masses(s) for s in (1, 2, 3)]


def test_the_energy_pairs_each_force_with_its_own_velocity(stiff):
    pairs, score, other = energy_matching(INS, OUTS, stiff)
    assert pairs == (("F1", "v1"), ("F2", "v2"))
    # from rest the supplied energy starts at 0 and never drops below (measured exactly 0); the
    # best other pairing drops (measured -0.018; the margin is 5e-3)
    assert score >= -ENERGY_FLOOR and other < -ENERGY_MARGIN


def test_the_pairing_falls_back_to_the_energy_where_the_linear_model_fails(stiff):
    # the linear model of the stiff spring scores no channel as passive (measured -0.75 to
    # -0.998 for all six): nothing singled out by it
    scores = passivity_scores(stiff, INS, OUTS, [(u, y) for u in INS for y in OUTS])
    assert max(scores.values()) < -0.02
    p = passivity_pairs(INS, OUTS, stiff)
    assert [(q.u, q.y) for q in p.pairs] == [("F1", "v1"), ("F2", "v2")]
    assert p.measured == ("Fs",) and p.modulating == ()
    assert "energy supplied" in p.pairs[0].reason
    # what identify runs on a dataset without units (no order to pair in: 2 inputs, 3 outputs)
    d = detect_pairs(INS, OUTS, [None, None], [None, None, None], stiff)
    assert d.pairs == p.pairs


def test_energy_stored_at_the_start_singles_out_nothing():
    # a moving mass gives out its kinetic energy: the true pairing's supplied energy drops
    # below its start, and a wrong one stayed above it by chance in these runs (-4.7e-4 at
    # worst, alone within the floor of the first trials): data that do not start at rest are
    # not judged by their energy, no pairing is named (the user names them: --port)
    recs = [two_masses(s, x0=(0.0, 1.0, 0.0, 0.0), std=0.1) for s in (1, 2)]
    assert energy_matching(INS, OUTS, recs) is None
    assert passivity_pairs(INS, OUTS, recs) is None


def test_inputs_that_cannot_all_pair_give_nothing(stiff):
    assert energy_matching(INS, OUTS, stiff, discrete=["F2"]) is None
    two_outputs = [(t, u, y[:, :1], h) for t, u, y, h in stiff]
    assert energy_matching(INS, OUTS[:1], two_outputs) is None


def test_a_pair_known_already_is_completed_where_the_others_supply_energy(stiff):
    # the force on mass 1 with its velocity alone gives out what the force on mass 2 supplied
    # (measured -0.19): the other force is a power input as well, and pairs with v2
    assert energy_score(INS, OUTS, stiff, [("F1", "v1")]) < -ENERGY_MARGIN
    pairs, score, _ = energy_matching(INS, OUTS, stiff, given=[("F1", "v1")])
    assert pairs == (("F1", "v1"), ("F2", "v2")) and score >= -ENERGY_FLOOR


def test_a_position_input_supplies_no_energy_and_is_not_paired():
    # 20-sim's coupled mass: the driven end's position x1 and velocity v1 in, the coupling
    # force fk and the mass's position and velocity out; only v1 fk is a power
    from fmu_surrogate.benchmarks.vendor.stepping.coupled_mass_clock import PARAMS, simulate

    h = PARAMS["solver_step"]
    t = np.arange(0.0, 10.0 + h / 2, h)
    recs = []
    for seed in (1, 2, 3):
        v1 = _noise(seed, t, 0.5)
        v1[0] = 0.0  # from rest
        x1 = np.concatenate([[0.0], np.cumsum(v1[:-1] * h)])
        recs.append((t, np.column_stack([x1, v1]), simulate(t, x1, v1), "zoh"))
    ins, outs = ["x1", "v1"], ["fk", "x2", "v2"]
    # v1 fk alone never gives out more than it took (measured 0): x1 needs no pair, and no
    # pairing of both inputs is singled out
    assert energy_score(ins, outs, recs, [("v1", "fk")]) >= -ENERGY_FLOOR
    assert energy_matching(ins, outs, recs) is None


def test_an_acceleration_output_that_starts_with_the_force_is_still_from_rest(
        duffing_experiment):
    # the Duffing benchmark shows its displacement, velocity and acceleration; the acceleration
    # starts at u(0), not 0, though the mass starts at rest: the same feedthrough of the first
    # input in every run says so, and the energy pairs the force with the velocity (measured:
    # the velocity 0, the displacement -0.046, the acceleration -0.36, as on the FMU harvested
    # with these signals; the margin is 5e-3)
    recs = [(*duffing_experiment(seed, std), "zoh")
            for seed, std in ((1, 10.0), (2, 2.0), (3, 5.0))]
    assert all(abs(r[2][0, 2]) > 1e-6 * np.abs(r[2][:, 2]).max() for r in recs)  # not at rest
    pairs, score, other = energy_matching(["u"], ["y", "v", "a"], recs)
    assert pairs == (("u", "v"),)
    assert score >= -ENERGY_FLOOR and other < -ENERGY_MARGIN
    # one run cannot tell a feedthrough from a state's value, nor can runs whose inputs start
    # alike (a mass held at a speed that grows with the force it starts under): not judged
    assert energy_matching(["u"], ["y", "v", "a"], recs[:1]) is None
    assert energy_matching(["u"], ["y", "v", "a"], [recs[0]] * 3) is None
    # nor can a start whose outputs no single feedthrough explains (the mass moving at 0.1)
    moving = [(*duffing_experiment(seed, std, v0=0.1), "zoh")
              for seed, std in ((1, 10.0), (2, 2.0), (3, 5.0))]
    assert energy_matching(["u"], ["y", "v", "a"], moving) is None

"""Power pairs from declared units, the data deciding between candidates
(identify/linear/interface/pairing.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import lsim

from fmu_surrogate.fmu.dataset.build import assemble_dataset
from fmu_surrogate.identify.linear.errors import LinearIdentificationError
from fmu_surrogate.identify.linear.interface.pairing import detect_pairs, unit_candidates
from fmu_surrogate.identify.linear.interface.passivity_score import passivity_scores
from fmu_surrogate.identify.linear.interface.variables import dataset_interface

T = np.linspace(0.0, 20.0, 2001)
F = np.sin(1.3 * T) + 0.5 * np.sin(3.1 * T + 0.4) + 0.3 * np.sin(7.7 * T + 1.0)
# two masses on a spring-damper, the force on mass 1: state (x1, v1, x2, v2)
M1, M2, K, C = 1.0, 0.5, 20.0, 0.4
A = [[0, 1, 0, 0], [-K / M1, -C / M1, K / M1, C / M1], [0, 0, 0, 1],
     [K / M2, C / M2, -K / M2, -C / M2]]


def two_masses(F: np.ndarray, spring: bool = False) -> np.ndarray:
    """Outputs (v1, v2) from rest, zero-order hold (scipy); with ``spring`` the spring's force
    ``K (x1 − x2)`` too."""
    C_out = [[0, 1, 0, 0], [0, 0, 0, 1]] + ([[K, 0, -K, 0]] if spring else [])
    _, y, _ = lsim((A, [[0], [1 / M1], [0], [0]], C_out, np.zeros((len(C_out), 1))),
                   F, T, interp=False)
    return y


def test_candidates_are_the_outputs_whose_units_make_a_power():
    c = unit_candidates(["F", "V", "n"], ["v", "w", "i", "x"], ["N", "V", "1"],
                        ["m/s", "rad/s", "mA", "m"], discrete=["n"])
    # N · rad/s is not a power (N.m · rad/s is); mA carries its factor
    assert c == {"F": {"v": 1.0}, "V": {"i": pytest.approx(1e-3)}}


def test_declared_order_is_kept_when_the_units_agree():
    p = detect_pairs(["F1", "F2"], ["v1", "v2"], ["N", "N"], ["m/s", "m/s"])
    assert [(q.u, q.y) for q in p.pairs] == [("F1", "v1"), ("F2", "v2")]
    assert "declared order" in p.pairs[0].reason and not p.scores


def test_units_win_over_the_declared_order():
    # a force in, a position and a velocity out: only F·v is a power
    p = detect_pairs(["F"], ["x", "v"], ["N"], ["m", "m/s"])
    assert [(q.u, q.y) for q in p.pairs] == [("F", "v")] and p.measured == ("x",)
    assert "only pairing" in p.pairs[0].reason
    # a discrete input never pairs (a direction), an input without a power partner modulates
    p = detect_pairs(["V", "dir", "phi"], ["i", "on"], ["V", None, "1"], ["A", None],
                     discrete=["dir"])
    assert [(q.u, q.y) for q in p.pairs] == [("V", "i")]
    assert p.modulating == ("dir", "phi") and p.measured == ("on",)


def test_without_units_nothing_is_detected():
    assert detect_pairs(["F"], ["x", "v"], [None], [None, None]) is None
    # declared units that make no power: no pair, all modulating / measured
    p = detect_pairs(["F"], ["x"], ["N"], ["m"])
    assert p.pairs == () and p.modulating == ("F",) and p.measured == ("x",)


def test_without_units_bond_graph_names_pair_effort_and_flow():
    # a 20-sim FMU (the knuckle-boom crane of libcosim's test data): p.e[i] in, p.f[i] out, no
    # units; the index must agree, a p.f input pairs with a p.e output, a Boolean never pairs
    ins = ["p_Crane.e[1]", "p_Crane.e[2]", "brake.f", "mode.e"]
    outs = ["Act_Limits[1]", "p_Crane.f[2]", "p_Crane.f[1]", "brake.e", "mode.f"]
    p = detect_pairs(ins, outs, [None] * 4, [None] * 5, discrete=["mode.e"])
    assert [(q.u, q.y) for q in p.pairs] == [("p_Crane.e[1]", "p_Crane.f[1]"),
                                            ("p_Crane.e[2]", "p_Crane.f[2]"),
                                            ("brake.f", "brake.e")]
    assert p.modulating == ("mode.e",) and p.measured == ("Act_Limits[1]", "mode.f")
    assert all(q.watts == 1.0 and "bond-graph" in q.reason for q in p.pairs)
    assert detect_pairs(["p.e[1]"], ["p.f[2]"], [None], [None]) is None  # other bond


def test_the_collocated_velocity_wins_by_passivity():
    y = two_masses(F)
    rec = [(T, F[:, None], y, "zoh")]
    s = passivity_scores(rec, ["F"], ["v1", "v2"], [("F", "v1"), ("F", "v2")])
    # the driving-point mobility F → v1 is positive real: min Re G ≈ 0 (its high-frequency
    # limit 1/(jωm) is imaginary; measured +5e-6 from the identified model); the transfer
    # mobility F → v2 has Re G ≤ 0 at every frequency but a positive residue at the rigid-body
    # pole, passive in neither orientation (measured −0.099): margins ≥ 5x
    assert s[("F", "v1")] > -1e-3 and s[("F", "v2")] < -0.02
    # declared in the other order, the data still choose v1
    p = detect_pairs(["F"], ["v2", "v1"], ["N"], ["m/s", "m/s"], [(T, F[:, None], y[:, ::-1],
                                                                    "zoh")])
    assert [(q.u, q.y) for q in p.pairs] == [("F", "v1")] and p.measured == ("v2",)
    assert "passivity score" in p.pairs[0].reason and "v2" in p.pairs[0].reason


def test_without_units_the_data_pair_inputs_and_outputs_that_are_not_as_many():
    # a vendor component without units: the force in, the spring's force and both velocities
    # out (no declared order can pair one input with three outputs); the driving-point mobility
    # is the only candidate at SCORE_FLOOR or above (v2 −0.099, the spring force lags too)
    y = two_masses(F, spring=True)
    rec = [(T, F[:, None], y[:, [2, 1, 0]], "zoh")]
    p = detect_pairs(["F"], ["Fs", "v2", "v1"], [None], [None] * 3, rec)
    assert [(q.u, q.y) for q in p.pairs] == [("F", "v1")]
    assert p.measured == ("Fs", "v2") and p.modulating == ()
    assert p.pairs[0].watts == 1.0 and "no units declared" in p.pairs[0].reason
    assert p.scores[("F", "v1")] > -1e-3 and p.scores[("F", "v2")] < -0.02
    # the data must single a pair out: two static resistances of the one input score alike
    # (+1 each), so nothing is detected
    stat = [(T, F[:, None], np.column_stack([2.0 * F, 3.0 * F]), "zoh")]
    assert detect_pairs(["F"], ["a", "b"], [None], [None, None], stat) is None
    # as many inputs as outputs: the declared order stays the convention (nothing detected)
    assert detect_pairs(["F"], ["v2"], [None], [None], [(T, F[:, None], y[:, [1]], "zoh")]) \
        is None


def test_the_dataset_interface_from_causality_and_type():
    # values that change: an output constant throughout is left out (test_variables.py)
    rng = np.random.default_rng(0)
    cols = [(n, "", rng.normal(size=(1, T.size))) for n in ("u", "d", "y", "b", "x")]
    ds = assemble_dataset(T, None, ["u", "d", "y", "b", "x"], cols, runs=np.array([0]),
                          failure_kind=[""], message=[""], n_samples=np.array([T.size]),
                          wall_time=np.zeros(1), params={}, signal_table=["{}"],
                          signal_index=np.zeros(1, dtype=np.int64))
    for n, c, ty in (("u", "input", "Real"), ("d", "input", "Integer"), ("y", "output", "Real"),
                     ("b", "output", "Boolean"), ("x", "local", "Real")):
        ds[n].attrs.update(causality=c, type=ty)
    i = dataset_interface(ds)
    assert (i.inputs, i.outputs, i.not_fitted, i.discrete_inputs) == (
        ("u", "d"), ("y",), ("b",), ("d",))


def test_a_dataset_without_inputs_is_refused_with_the_reason():
    cols = [(n, "", np.zeros((1, T.size))) for n in ("x", "v")]
    ds = assemble_dataset(T, None, ["x", "v"], cols, runs=np.array([0]),
                          failure_kind=[""], message=[""], n_samples=np.array([T.size]),
                          wall_time=np.zeros(1), params={}, signal_table=["{}"],
                          signal_index=np.zeros(1, dtype=np.int64))
    for n in ("x", "v"):
        ds[n].attrs.update(causality="output", type="Real")
    with pytest.raises(LinearIdentificationError, match=r"no inputs, only the outputs \['x', 'v'\]"
                       r".*no port to couple through"):
        dataset_interface(ds)

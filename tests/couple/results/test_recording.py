import numpy as np

from fmu_surrogate.couple.results.recording import Recorder
from fmu_surrogate.couple.running import bond_energy
from fmu_surrogate.couple.system import Component, Connection, PowerBond, System


def test_recorder_aligns_a_jacobi_exchange_and_accounts_the_bond_like_bond_energy():
    bond = PowerBond("b", Connection.parse("a.e", "b.e"), Connection.parse("b.f", "a.f"),
                     {"a": -1, "b": 1})
    system = System({"a": Component("a", None), "b": Component("b", None)}, [], [bond])
    rec = Recorder(system, ["a.e", "b.e", "b.f", "a.f"])
    # outputs a.e = 1, 2, 4 and b.f = 3, 1, 2 at t = 0, 0.5, 1; after a step every input holds
    # its source's output of the step's start (Jacobi)
    rows = rec.add(0.5, [2.0, 1.0, 1.0, 3.0]) + rec.add(1.0, [4.0, 2.0, 2.0, 1.0])
    t = np.array([r[0] for r in rows])
    data = np.array([r[1] for r in rows])
    np.testing.assert_array_equal(t, [0.0, 0.5, 1.0])
    assert rec.names == ["a.e", "b.e", "b.f", "a.f", "bond:b:P_a", "bond:b:P_b", "bond:b:residual"]
    # row k: outputs at t_k, inputs at the value held from t_k on (= their source at t_k)
    np.testing.assert_array_equal(data[:, :4], [[1, 1, 3, 3], [2, 2, 1, 1], [4, 4, 2, 2]])
    # the hand computation of test_running.py: P_a = [3, 4.5, 3], P_b = [3, 2, 3], a gives power
    np.testing.assert_array_equal(data[:, 4], [3.0, 4.5, 3.0])
    np.testing.assert_array_equal(data[:, 5], [3.0, 2.0, 3.0])
    np.testing.assert_array_equal(data[:, 6], [0.0, 1.25, 1.25])
    ref = bond_energy(bond, t, {"a.e": data[:, 0], "b.f": data[:, 2]})
    for k, key in enumerate(("P_a", "P_b", "residual")):  # the same arithmetic, step by step
        np.testing.assert_array_equal(data[:, 4 + k], ref[key])


def test_an_inverted_bond_and_a_scaled_connection_are_recorded_as_their_targets_see_them():
    # both sides take power in (power_into +1, +1); the effort reaches b inverted
    bond = PowerBond("b", Connection.parse("a.e", "b.e", -1.0), Connection.parse("b.f", "a.f"),
                     {"a": 1, "b": 1})
    scaled = Connection.parse("a.y", "b.u", 1000.0, 5.0)  # a unit conversion with an offset
    system = System({"a": Component("a", None), "b": Component("b", None)}, [scaled], [bond])
    rec = Recorder(system, ["a.e", "b.e", "b.f", "a.f", "a.y", "b.u"])
    # outputs a.e = 1, 2, 4, b.f = 3, 1, 2 and a.y = 0.1, 0.2, 0.3 at t = 0, 0.5, 1; the inputs
    # after a step hold the transformed source of the step's start
    rows = rec.add(0.5, [2.0, -1.0, 1.0, 3.0, 0.2, 105.0]) + rec.add(
        1.0, [4.0, -2.0, 2.0, 1.0, 0.3, 205.0])
    data = np.array([r[1] for r in rows])
    # row 0 takes a.e and a.y from the inputs they fed: the transformation inverted
    np.testing.assert_allclose(data[:, :6], [[1, -1, 3, 3, 0.1, 105], [2, -2, 1, 1, 0.2, 205],
                                             [4, -4, 2, 2, 0.3, 305]], rtol=1e-15)
    # a sees e·f as in the plain bond (P = [3, 4.5, 3]); b sees −e·f ([−3, −2, −3]); the
    # energy created is −∫ (P_a + P_b) dt = −(0.5 (4.5 − 2) + 0.5 (3 − 3)) = −1.25
    np.testing.assert_array_equal(data[:, 6], [3.0, 4.5, 3.0])
    np.testing.assert_array_equal(data[:, 7], [-3.0, -2.0, -3.0])
    np.testing.assert_array_equal(data[:, 8], [0.0, -1.25, -1.25])
    ref = bond_energy(bond, np.array([0.0, 0.5, 1.0]), {"a.e": data[:, 0], "b.f": data[:, 2]})
    for k, key in enumerate(("P_a", "P_b", "residual")):
        np.testing.assert_array_equal(data[:, 6 + k], ref[key])

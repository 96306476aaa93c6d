"""PRBS amplitude and offset; descriptions written before they existed load unchanged."""

from __future__ import annotations

import numpy as np

from fmu_surrogate.fmu.signals import PRBS, signal_from_description


def test_amplitude_and_offset_scale_and_shift_the_levels():
    t = np.arange(0, 20, 0.05) + 0.01
    base = PRBS(bit_period=0.25, levels=(0.0, 2.0), seed=3, order=6)
    p = PRBS(bit_period=0.25, levels=(0.0, 2.0), seed=3, order=6, amplitude=0.5, offset=-1.0)
    np.testing.assert_array_equal(p(t), -1.0 + 0.5 * base(t))  # exact: one multiply-add
    assert p(-1.0) == -1.0  # before t0: bit 0's value, scaled


def test_old_descriptions_load_to_the_same_signal():
    old = {"kind": "prbs", "bit_period": 0.25, "levels": [0.0, 2.0], "seed": 3, "order": 6,
           "t0": 0.0}  # as datasets stored it before amplitude and offset
    sig = signal_from_description(old)
    assert sig == PRBS(bit_period=0.25, levels=(0.0, 2.0), seed=3, order=6)
    assert sig.amplitude == 1.0 and sig.offset == 0.0
    t = np.arange(0, 20, 0.05) + 0.01
    np.testing.assert_array_equal(sig(t), np.where(sig.bits[np.arange(400) // 5 % 63], 2.0, 0.0))
    new = PRBS(amplitude=0.2, offset=1.0).describe()
    assert new["amplitude"] == 0.2 and new["offset"] == 1.0
    assert signal_from_description(new) == PRBS(amplitude=0.2, offset=1.0)

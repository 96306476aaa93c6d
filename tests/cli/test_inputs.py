"""The --input option of harvest/validate: ranges, lists, prbs amplitude/offset, help and errors."""

from __future__ import annotations

import numpy as np
import pytest

from fmu_surrogate.cli import main
from fmu_surrogate.cli.inputs import input_help, parse_input_option
from fmu_surrogate.fmu.errors import SignalError
from fmu_surrogate.fmu.signals import PRBS, SIGNAL_KINDS, SchroederMultisine


def test_a_pair_takes_a_low_high_range():
    name, sig = parse_input_option("u=prbs:bit_period=0.5,levels=-0.2:0.2")
    assert name == "u" and sig == PRBS(bit_period=0.5, levels=(-0.2, 0.2))
    assert set(np.unique(sig(np.linspace(0, 100, 2001)))) == {-0.2, 0.2}  # exactly the levels
    assert parse_input_option("u=prbs:levels=-0.2;0.2")[1] == PRBS(levels=(-0.2, 0.2))


def test_prbs_amplitude_and_offset():
    _, sig = parse_input_option("u=prbs:bit_period=0.5,amplitude=0.2,offset=1")
    assert sig == PRBS(bit_period=0.5, amplitude=0.2, offset=1.0)
    assert set(np.unique(sig(np.linspace(0, 100, 2001)))) == {0.8, 1.2}  # 1 ± 0.2


def test_a_list_takes_items_or_start_stop_n():
    _, by_range = parse_input_option("u=multisine:frequencies=0.1:1:10")
    _, by_items = parse_input_option("u=multisine:frequencies=" + ";".join(
        str(f) for f in np.linspace(0.1, 1, 10)))
    assert by_range == by_items
    assert by_range == SchroederMultisine(frequencies=tuple(np.linspace(0.1, 1.0, 10)))


@pytest.mark.parametrize("text, parts", [
    ("u=prbs:levels=-0.2", ["--input", "prbs", "levels", "'-0.2'", "LOW:HIGH"]),
    ("u=prbs:levels=a:b", ["--input", "prbs", "levels", "'a'", "LOW:HIGH"]),
    ("u=multisine:frequencies=0.1:1", ["--input", "schroeder_multisine", "frequencies",
                                       "'0.1:1'", "';'", "START:STOP:N"]),
    ("u=multisine:frequencies=0.1;x", ["--input", "frequencies", "'x'", "';'"]),
    ("u=step:t0=1:2", ["--input", "step", "t0", "'1:2'", "';'"]),
    ("u=prbs:bit_period=-1", ["--input", "'u=prbs:bit_period=-1'", "PRBS", "bit_period"]),
    ("u=step:aftr=1", ["--input", "step", "unknown parameter(s) ['aftr']"]),
])
def test_errors_name_the_option_the_kind_and_the_text(text, parts):
    with pytest.raises(SignalError) as info:
        parse_input_option(text)
    msg = str(info.value)
    assert all(p in msg for p in parts), msg
    assert "could not convert" not in msg


def test_bad_input_is_one_line_with_exit_status_2(tmp_path, capsys):
    argv = ["harvest", str(tmp_path / "model.fmu"), "--input", "u=prbs:levels=-0.2"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--input" in err and "levels" in err


def test_help_lists_every_kind_and_parameter_from_the_signal_classes(capsys):
    text = input_help()
    for kind, cls in SIGNAL_KINDS.items():
        assert f"  {kind}" in text
        for p in cls.parameters():
            assert f"      {p.name} (" in text and p.meaning.split()[0].strip("`") in text
    for command in ("harvest", "validate"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        assert "amplitude (float, default 1.0): Factor on the levels." in out

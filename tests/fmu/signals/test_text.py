"""Signals written as text: the part after ``NAME=`` alone (system descriptions) and the whole
``NAME=KIND:...`` option read by the same parser."""

from __future__ import annotations

import pytest

from fmu_surrogate.fmu.errors import SignalError
from fmu_surrogate.fmu.signals import PRBS, Constant, SchroederMultisine, Step
from fmu_surrogate.fmu.signals.text import parse_input_option, parse_signal


def test_parse_signal_reads_a_kind_or_a_number():
    assert parse_signal("step:t0=0.1,after=12") == Step(t0=0.1, after=12.0)
    assert parse_signal(" 2.5 ") == Constant(2.5)
    assert parse_signal("multisine:frequencies=0.1;0.2") == SchroederMultisine(
        frequencies=(0.1, 0.2))
    assert parse_signal("prbs:levels=-1:1") == PRBS(levels=(-1.0, 1.0))


def test_the_option_is_the_name_and_the_same_signal():
    assert parse_input_option("motor.V=step:t0=0.1,after=12") == (
        "motor.V", parse_signal("step:t0=0.1,after=12"))


def test_messages_name_where_the_text_was_written():
    with pytest.raises(SignalError, match=r"^sys\.toml motor\.V: unknown signal kind 'stpe'"):
        parse_signal("stpe:t0=1", "sys.toml motor.V")
    with pytest.raises(SignalError, match=r"'fast' is neither a number nor KIND:"):
        parse_signal("fast")

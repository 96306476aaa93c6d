"""plots.plot_surrogate and ``fmu-surrogate plot`` for drop-in surrogates: the core's structure
matrices and the wiring of the external variables (names, signs, constant sources, x0)."""

from __future__ import annotations

import pytest

from fmu_surrogate.cli import main
from fmu_surrogate.ph import save
from fmu_surrogate.plots import plot_surrogate
from tests.export.test_wiring import X0, ported
from tests.test_validation_ported import damper_ported


@pytest.fixture
def plt():
    from fmu_surrogate.figures import pyplot

    yield pyplot()
    pyplot().close("all")


def _panels(fig):
    return {ax.get_title(): ax for ax in fig.axes if ax.get_title()}


def _cells(ax):
    return {t.get_text() for t in ax.texts}


def _ticks(ax, axis):
    return [t.get_text() for t in getattr(ax, f"get_{axis}ticklabels")()]


def test_ported_system_shows_core_and_wiring(plt):
    sur = ported()
    fig = plot_surrogate(sur)
    panels = _panels(fig)
    # the core with its feedthrough: W = [[R, P], [Pᵀ, S]] and N in place of R alone
    assert {"J (skew)", "W = [[R, P], [Pᵀ, S]] (⪰ 0)", "N (skew)", "Q (≻ 0)", "B",
            "poles of (J − R)Q", "gain (pH ports)"} <= set(panels)
    assert "R (⪰ 0)" not in panels
    # Tu | cu: the power-out force enters port F_core with the sign −1, the preload is a source
    tu = panels["Tu | cu: pH port inputs = Tu u + cu"]
    assert _ticks(tu, "x") == ["F", "u3", "cu (source)"]
    assert _ticks(tu, "y") == ["F_core", "preload", "V_core"]
    assert {"-1", "1", "0.5"} == _cells(tu)
    # the measured output q reads x1, x2 (Cx), F (Du) and its offset cy
    assert _ticks(panels["Cx: outputs from states"], "y") == ["v", "q", "i3"]
    assert _cells(panels["Cx: outputs from states"]) == {"1", "0.5"}
    assert _cells(panels["Du | cy: outputs from inputs, offset"]) == {"0.1", "0.2"}
    assert _ticks(panels["Ty: outputs from pH port outputs"], "x")[0] == "y:F_core"
    assert _cells(panels["x0 (operating point)"]) == {f"{v:.3g}" for v in X0}
    # the external variables with their units in the title
    text = fig._suptitle.get_text()
    assert "inputs F [N], u3 [V]" in text and "outputs v [m/s], q [m], i3 [A]" in text


def test_order_zero_surrogate_draws_empty_matrices(plt):
    fig = plot_surrogate(damper_ported())
    panels = _panels(fig)
    assert _cells(panels["J (skew)"]) == {"empty (0 × 0)"}
    assert _cells(panels["W = [[R, P], [Pᵀ, S]] (⪰ 0)"]) == {"4"}  # S = c
    assert "n = 0, m = 1" in fig._suptitle.get_text()


def test_cli_plots_a_drop_in_surrogate_file(tmp_path, capsys):
    path = save(ported(), tmp_path / "drop.json")
    assert main(["plot", str(path)]) == 0
    png = tmp_path / "drop.png"
    assert f"wrote {png}" in capsys.readouterr().out
    assert png.stat().st_size > 20_000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_static_law_shows_its_terms(plt):
    from tests.export.fmi.test_fmu_export_static_law import linear

    panels = _panels(plot_surrogate(linear()))
    wb = panels["law W | b: term arguments s = W u + b"]
    assert _ticks(wb, "y") == ["cubic 1", "tanh 2", "hinge 3"]
    assert _ticks(wb, "x") == ["v", "s", "b"]
    assert _cells(wb) == {"1", "-0.5", "2", "0.1", "-0.2"}
    c = panels["law C: outputs += C f(s)"]
    assert _ticks(c, "y") == ["F", "pos"] and _cells(c) == {"50", "80", "0.3"}

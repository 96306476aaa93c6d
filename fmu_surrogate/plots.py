"""The plots a user looks at: harvested runs, surrogate vs reference, feasibility, surrogates.

One module serves ``fmu-surrogate plot``, the demo, its report and ``validate``, so every figure
follows the same rules: axes carry units (the FMU's declared units; time in s), legends name runs
by their parameter values, two curves that would overlap get an error panel beneath them, and
plots of many runs stay readable (the first few runs drawn, the rest as a min–max band).

Every function returns the matplotlib ``Figure`` and, given ``path``, also saves it (PNG, 110 dpi)
and closes it.  matplotlib is imported on first use with the non-interactive Agg backend unless a
backend was already chosen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from fmu_surrogate.figures import finish as _finish
from fmu_surrogate.figures import pyplot as _pyplot

__all__ = ["plot_comparison", "plot_dataset", "plot_feasibility", "plot_surrogate"]


def _label(name: str, unit: str | None) -> str:
    return f"{name} [{unit}]" if unit else name


def _format_value(v: float) -> str:
    return f"{v:.4g}"


def run_labels(ds: Any) -> list[str]:
    """One legend label per run of a harvested dataset: its parameter values (or ``run k``).

    Parameters
    ----------
    ds : xarray.Dataset
        A harvested dataset.

    Returns
    -------
    list of str
        ``"G=0.5"``, ``"w2=-0.01, w3=0.02"``...; failed runs get ``" (failed: kind)"``.
    """
    from fmu_surrogate.fmu.dataset import parameter_names
    from fmu_surrogate.fmu.dataset.schema import STATUS_OK, param_var_name

    params = parameter_names(ds)
    labels = []
    for i, r in enumerate(ds["run"].values):
        parts = [f"{p}={_format_value(float(ds[param_var_name(p)].values[i]))}" for p in params]
        text = ", ".join(parts) if parts else f"run {int(r)}"
        if str(ds["status"].values[i]) != STATUS_OK:
            text += f" (failed: {ds['failure_kind'].values[i]})"
        labels.append(text)
    return labels


def plot_dataset(
    ds: Any,
    names: Sequence[str] | None = None,
    *,
    max_runs: int = 6,
    title: str | None = None,
    path: str | Path | None = None,
) -> Any:
    """Signals of a harvested dataset over time, one panel per variable.

    Parameters
    ----------
    ds : xarray.Dataset
        A harvested dataset (``fmu_surrogate.load_dataset``).
    names : sequence of str, optional
        FMU variable names to show (default: inputs and outputs, at most 6).
    max_runs : int
        Runs drawn as lines; successful runs beyond these are summarised by a min–max band.
        Failed runs are always drawn (dotted) up to where they stopped.
    title : str, optional
        Figure title (default: the model name).
    path : path, optional
        Save the figure there (PNG) and close it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from fmu_surrogate.fmu.dataset import data_var_name, fmu_variables

    plt = _pyplot()
    if names is None:
        causal = [
            n for n in fmu_variables(ds)
            if ds[data_var_name(ds, n)].attrs.get("causality") in ("input", "output")
        ]
        names = (causal or fmu_variables(ds))[:6]
    names = list(names)
    t = np.asarray(ds["time"].values, dtype=float)
    status = [str(s) for s in ds["status"].values]
    nsamp = np.asarray(ds["n_samples"].values, dtype=int)
    labels = run_labels(ds)
    ok = [i for i, s in enumerate(status) if s == "ok"]
    failed = [i for i, s in enumerate(status) if s != "ok"]
    drawn = ok[:max_runs]
    banded = ok[max_runs:]
    fig, axes = plt.subplots(len(names), 1, figsize=(8.5, 1.9 * len(names) + 0.9), sharex=True,
                             squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, name in zip(axes[:, 0], names):
        var = ds[data_var_name(ds, name)]
        values = np.asarray(var.values, dtype=float)
        if banded:
            block = values[banded]
            ax.fill_between(t, np.nanmin(block, 0), np.nanmax(block, 0), color="0.85",
                            label=f"{len(banded)} more runs (min–max)")
        for k, i in enumerate(drawn):
            n = nsamp[i]
            ax.plot(t[:n], values[i, :n], lw=0.9, color=colours[k % len(colours)], label=labels[i])
        for i in failed[:max_runs]:
            n = nsamp[i]
            ax.plot(t[:n], values[i, :n], ":", lw=1.0, color="tab:red", label=labels[i])
        ax.set_ylabel(_label(name, var.attrs.get("units")))
    axes[-1, 0].set_xlabel("time [s]")
    handles, _texts = axes[0, 0].get_legend_handles_labels()
    if handles:
        axes[0, 0].legend(fontsize=7, loc="upper right", ncol=2 if len(handles) > 4 else 1)
    fig.suptitle(title or f"{ds.attrs.get('model_name', 'dataset')}: harvested runs")
    return _finish(fig, path)


def plot_comparison(
    t: ArrayLike,
    reference: ArrayLike,
    candidate: ArrayLike,
    names: Sequence[str],
    *,
    units: Sequence[str | None] | None = None,
    labels: tuple[str, str] = ("reference", "surrogate"),
    title: str | None = None,
    path: str | Path | None = None,
) -> Any:
    """Two trajectories on one time grid, each variable with an error panel beneath it.

    Parameters
    ----------
    t : array_like, shape (N,)
        Time grid [s].
    reference, candidate : array_like, shape (N, k)
        The two trajectories (e.g. the reference FMU and the surrogate).
    names : sequence of str, length k
        Variable names.
    units : sequence of str or None, optional
        Units per variable (shown on the axes).
    labels : (str, str)
        Legend names of ``reference`` and ``candidate``.
    title : str, optional
        Figure title.
    path : path, optional
        Save the figure there (PNG) and close it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from fmu_surrogate.fmu.dataset import relative_errors

    plt = _pyplot()
    t = np.asarray(t, dtype=float)
    ref = np.asarray(reference, dtype=float).reshape(len(t), -1)
    cand = np.asarray(candidate, dtype=float).reshape(len(t), -1)
    units = list(units) if units is not None else [None] * len(names)
    k = len(names)
    fig, axes = plt.subplots(2 * k, 1, figsize=(8.5, 2.6 * k + 0.8), sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [2.2, 1.0] * k})
    for j, name in enumerate(names):
        ax, ax_err = axes[2 * j, 0], axes[2 * j + 1, 0]
        ax.plot(t, ref[:, j], "k-", lw=1.0, label=labels[0])
        ax.plot(t, cand[:, j], "--", color="tab:orange", lw=1.0, label=labels[1])
        ax.set_ylabel(_label(name, units[j]))
        err = cand[:, j] - ref[:, j]
        ax_err.plot(t, err, color="tab:red", lw=0.8)
        ax_err.axhline(0.0, color="0.6", lw=0.5)
        ax_err.set_ylabel(_label("error", units[j]))
        rel = float(relative_errors(ref[:, j], cand[:, j]))
        ax_err.set_title(
            f"max |error| {np.max(np.abs(err)):.2e} ({100 * rel:.3g} % of {name}'s swing), "
            f"RMS {np.sqrt(np.mean(err**2)):.2e}", fontsize=8, loc="left")
    axes[0, 0].legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("time [s]")
    if title:
        fig.suptitle(title)
    return _finish(fig, path)


def plot_feasibility(
    ds: Any,
    x: str,
    y: str,
    *,
    truth: Mapping[str, float] | None = None,
    title: str | None = None,
    path: str | Path | None = None,
) -> Any:
    """Which parameter values simulate: successful and failed runs over two parameters.

    Parameters
    ----------
    ds : xarray.Dataset
        A harvested dataset with parameters ``x`` and ``y``.
    x, y : str
        Parameter names for the axes.
    truth : mapping, optional
        A known point to mark (e.g. the true law), ``{x: value, y: value}``.
    title : str, optional
        Figure title.
    path : path, optional
        Save the figure there (PNG) and close it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from fmu_surrogate.fmu.dataset.schema import STATUS_OK, param_var_name

    plt = _pyplot()
    ok = np.array([str(s) == STATUS_OK for s in ds["status"].values])
    px, py = ds[param_var_name(x)], ds[param_var_name(y)]
    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    ax.scatter(px.values[ok], py.values[ok], c="tab:green", s=18, label=f"ok ({ok.sum()})")
    kinds = np.asarray([str(k) for k in ds["failure_kind"].values])
    for kind in sorted(set(kinds[~ok])):
        sel = (~ok) & (kinds == kind)
        ax.scatter(px.values[sel], py.values[sel], marker="x", s=22, label=f"{kind} ({sel.sum()})")
    if truth:
        ax.scatter([truth[x]], [truth[y]], c="k", marker="*", s=140, label="true value")
    ax.set_xlabel(_label(x, px.attrs.get("units")))
    ax.set_ylabel(_label(y, py.attrs.get("units")))
    ax.legend(fontsize=8)
    ax.set_title(title or "feasible (ok) and failed parameter values")
    return _finish(fig, path)


def _matrix(ax: Any, M: ArrayLike, title: str, rows: Sequence[str] | None = None,
            cols: Sequence[str] | None = None) -> None:
    """One matrix as a signed colour map; small ones carry their nonzero entries as numbers."""
    M = np.asarray(M, dtype=float)
    ax.set_title(title, fontsize=9)
    if M.size == 0:
        ax.text(0.5, 0.5, f"empty ({M.shape[0]} × {M.shape[1]})", ha="center", va="center",
                transform=ax.transAxes, color="0.4")
        ax.set_xticks([])
        ax.set_yticks([])
        return
    lim = float(np.max(np.abs(M))) or 1.0
    ax.imshow(M, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
    if M.shape[0] <= 10 and M.shape[1] <= 10:
        for (i, j), v in np.ndenumerate(M):
            if v != 0:
                ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=7,
                        color="w" if abs(v) > 0.6 * lim else "k")
    for setter, names, count in ((ax.set_yticks, rows, M.shape[0]),
                                 (ax.set_xticks, cols, M.shape[1])):
        if names is not None and count <= 16:
            setter(range(count), list(names), fontsize=7)


def plot_surrogate(system: Any, *, title: str | None = None, path: str | Path | None = None) -> Any:
    """The structure of a pH surrogate: its matrices, for linear systems poles and gain, and for a
    drop-in surrogate the wiring of its external variables.

    A :class:`~fmu_surrogate.ph.PortedSystem` gets a second row: which external input drives
    which pH port and with which sign (``Tu``) beside the constant sources (``cu``), which pH
    output (``Ty``), state (``Cx``) and input (``Du``) each external output reads and its offset
    (``cy``), the operating point ``x0`` and, with a static law of the inputs (``PortMap.law``),
    its terms' directions and offsets (``W | b``) and output gains (``C``); rows and columns carry
    the names.

    Parameters
    ----------
    system : fmu_surrogate.ph.LinearPH, fmu_surrogate.ph.PHDAE or fmu_surrogate.ph.PortedSystem
        The surrogate.
    title : str, optional
        Figure title.
    path : path, optional
        Save the figure there (PNG) and close it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from fmu_surrogate.ph import PortedSystem

    plt = _pyplot()
    ported = system if isinstance(system, PortedSystem) else None
    core = ported.system if ported is not None else system
    linear = hasattr(core, "Q")
    xs, us = list(core.state_names), list(core.input_names)
    mats: list[tuple] = [("J (skew)", core.J, xs, xs)]
    if core.has_feedthrough:
        mats += [("W = [[R, P], [Pᵀ, S]] (⪰ 0)", core.W, xs + us, xs + us),
                 ("N (skew)", core.N, us, us)]
    else:
        mats += [("R (⪰ 0)", core.R, xs, xs)]
    mats += [("Q (≻ 0)", core.Q, xs, xs)] if linear else [("E", core.E, xs, xs)]
    mats += [("B", core.B, xs, us)]
    ncols = len(mats) + (2 if linear else 0)
    wiring = []
    if ported is not None:
        p = ported.ports
        ins, outs = list(p.input_names), list(p.output_names)
        wiring = [("Tu | cu: pH port inputs = Tu u + cu", np.column_stack([p.Tu, p.cu]), us,
                   ins + ["cu (source)"]),
                  ("Ty: outputs from pH port outputs", p.Ty, outs, [f"y:{n}" for n in us]),
                  ("Cx: outputs from states", p.Cx, outs, xs),
                  ("Du | cy: outputs from inputs, offset", np.column_stack([p.Du, p.cy]), outs,
                   ins + ["cy"]),
                  ("x0 (operating point)", ported.x0.reshape(-1, 1), xs, ["x0"])]
        if p.reads_rate:
            wiring.insert(3, ("Cdx: outputs from the states' rates", p.Cdx, outs,
                              [f"d{x}/dt" for x in xs]))
        if p.law is not None:  # the static law: each term's argument, and its output gains
            terms = [f"{kind} {k + 1}" for k, kind in enumerate(p.law.kinds)]
            wiring += [("law W | b: term arguments s = W u + b",
                        np.column_stack([p.law.W, p.law.b]), terms, ins + ["b"]),
                       ("law C: outputs += C f(s)", p.law.C, outs, terms)]
        ncols = max(ncols, len(wiring))
    nrows = 2 if wiring else 1
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.0 * ncols, 3.4 * nrows), squeeze=False)
    for ax, (name, M, rows, cols) in zip(axes[0], mats):
        _matrix(ax, M, name, rows, cols)
    for ax, (name, M, rows, cols) in zip(axes[-1], wiring):
        _matrix(ax, M, name, rows, cols)
    for ax in list(axes[0, len(mats) + (2 if linear else 0):]) + list(axes[-1, len(wiring):]
                                                                      if wiring else []):
        ax.set_axis_off()
    if linear:
        _poles_and_gain(core, axes[0, len(mats)], axes[0, len(mats) + 1])
    n, m = np.shape(core.B)
    text = f"{type(core).__name__}: n = {n}, m = {m}"
    if ported is not None:
        text = (f"drop-in surrogate, {text}; inputs {', '.join(_labels(ins, p.input_units))}; "
                f"outputs {', '.join(_labels(outs, p.output_units))}")
    fig.suptitle(title + "\n" + text if title else text, fontsize=10)
    return _finish(fig, path)


def _labels(names: Sequence[str], units: Sequence[str | None]) -> list[str]:
    return [_label(n, u) for n, u in zip(names, units)]


def _poles_and_gain(system: Any, ax_poles: Any, ax_gain: Any) -> None:
    """Poles of ``(J − R)Q`` and the largest singular value of the transfer function."""
    A = (np.asarray(system.J) - np.asarray(system.R)) @ np.asarray(system.Q)
    ev = np.linalg.eigvals(A)
    ax_poles.plot(ev.real, ev.imag, "x")
    ax_poles.axvline(0.0, color="0.6", lw=0.5)
    ax_poles.set_xlabel("Re λ [1/s]")
    ax_poles.set_ylabel("Im λ [1/s]")
    ax_poles.set_title("poles of (J − R)Q", fontsize=9)
    nz = np.abs(ev)[np.abs(ev) > 0]
    slow, fast = (float(nz.min()), float(nz.max())) if nz.size else (1.0, 1.0)
    w = np.logspace(np.log10(slow) - 1, np.log10(fast) + 1, 300)
    gains = np.array([np.linalg.svd(np.atleast_2d(system.transfer_function(1j * wk)),
                                    compute_uv=False)[0] for wk in w])
    ax_gain.loglog(w, gains)
    ax_gain.set_xlabel("ω [rad/s]")
    ax_gain.set_ylabel("largest singular value of H(iω)")
    ax_gain.set_title("gain (pH ports)", fontsize=9)

"""Gated (contact) dissipation terms: the exported programs' numpy, C and Modelica renderings
equal PowerDissipation's clipped force, its Jacobian and its rate, branch for branch."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest

from fmu_surrogate.export.expressions.dissipation import dissipation_expressions
from fmu_surrogate.export.expressions.render import dissipation_c_source
from fmu_surrogate.export.modelica import modelica_model
from fmu_surrogate.ph import ConvexEffort, NonlinearPH, PowerDissipation
from tests.export import _modelica_check as mc

# the same formulas as PowerDissipation's in another summation order (the gate's clip, its
# comparisons and signs are exact operations): measured max-norm relative errors 1.2e-16
# (force), 4.1e-15 (Jacobian: the a = −1, p = −0.5 term near rest, as without gates) and
# 2.2e-16 (rate) in numpy, 1.7e-16, 2.8e-16 and 1.6e-16 in C, 2.2e-16 and 2.8e-16 in Modelica
# (force, rate); 1e-13 as test_dissipation.py, while a wrong branch (an O(1) error) fails it
RTOL = 1e-13
GATE_KEYS = {"diss_gate_directions", "diss_gate_shifts", "diss_gate_gains"}


def gated(kind="mixed", n=3, seed=0):
    """``mixed``: four terms, two of them gated (an asymmetric quadratic one and an asymmetric
    linear one), two ungated (p = 1/3 and a one-sided p = −0.5 law); ``all``: three symmetric
    gated terms, one with the gate gain 0 (a damper that never acts)."""
    r = np.random.default_rng(seed)
    if kind == "mixed":
        return PowerDissipation(r.normal(size=(4, n)), [2.0, 0.5, 0.3, 1.5],
                                [1 / 3, 1.0, -0.5, 0.0], [1e-3, 0.1, 0.02, 0.05],
                                [0.0, 0.6, -1.0, 0.3],
                                (r.normal(size=(4, n)), [0.0, 0.3, 0.0, -0.5],
                                 [np.inf, 2.0, np.inf, 0.7]))
    return PowerDissipation(r.normal(size=(3, n)), [1.0, 0.8, 2.0], [0.0, 1 / 3, 1.0],
                            [0.05, 0.01, 0.1], None,
                            (r.normal(size=(3, n)), [0.2, 0.0, -0.3], [1.2, 0.0, 3.0]))


def _efforts(n, seed=1, size=400):
    z = 2.0 * np.random.default_rng(seed).normal(size=(size, n))
    z[0] = 0.0  # rest
    return z


def _branches(d, z):
    """Per gated term, the number of efforts inside the clearance, with the limit holding and
    in contact without it (from the definition, not from the classes under test)."""
    s = z @ d.directions.T
    ungated = PowerDissipation(d.directions, d.gains, d.exponents, d.smoothing, d.asymmetry)
    cs = ungated.coefficients(z) * s  # the unlimited c_j s_j
    r = z @ d.gate_directions.T + d.gate_shifts
    f = np.where(d.gated, d.gate_gains, 0.0) * np.maximum(np.abs(r) - 1.0, 0.0)
    inside = np.abs(r) <= 1.0
    held = ~inside & (np.abs(cs) > f)
    free = ~inside & ~held
    return {k: (int(inside[:, k].sum()), int(held[:, k].sum()), int(free[:, k].sum()))
            for k in np.flatnonzero(d.gated)}


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("kind", ["mixed", "all"])
def test_numpy_rendering_equals_the_gated_dissipation(kind):
    d = gated(kind)
    ex = dissipation_expressions(d)
    z = _efforts(3)
    for k, counts in _branches(d, z).items():  # every branch of every gate is taken
        assert min(counts) > 10 or d.gate_gains[k] == 0.0, (k, counts)
    assert _rel(ex.evaluate("force", z), d.force(z)) < RTOL
    assert _rel(ex.evaluate("dforce", z), d.force_jacobian(z)) < RTOL
    assert _rel(ex.evaluate("rate", z), d.rate(z)) < RTOL
    fr = ex.evaluate("force_rate", z)
    assert np.array_equal(fr[:, :3], ex.evaluate("force", z))
    assert np.array_equal(fr[:, 3], ex.evaluate("rate", z))
    # the gates' arrays hold the gated terms' rows only, in term order
    on = d.gated
    assert np.array_equal(ex.params["diss_gate_directions"], d.gate_directions[on])
    assert np.array_equal(ex.params["diss_gate_shifts"], d.gate_shifts[on])
    assert np.array_equal(ex.params["diss_gate_gains"], d.gate_gains[on])
    # a gate of gain 0 switches its damper off (force and power 0 whatever the effort)
    if kind == "all":
        off = PowerDissipation(d.directions[1:2], d.gains[1:2], d.exponents[1:2],
                               d.smoothing[1:2], None,
                               (d.gate_directions[1:2], d.gate_shifts[1:2], [0.0]))
        exo = dissipation_expressions(off)
        assert np.all(exo.evaluate("force", z) == 0.0) and np.all(exo.evaluate("rate", z) == 0.0)


def test_the_jacobian_program_is_the_force_programs_derivative():
    """Central differences of the exported force (an independent check of the Jacobian rule,
    m gᵀ where the limit holds): at efforts at least 1e-3 away from every kink (the clearance's
    edge |r| = 1, the limit's |c s| = f) and from rest (the p = 1/3 law's bend)."""
    d = gated("mixed")
    ex = dissipation_expressions(d)
    z = _efforts(3, seed=4, size=300)
    s = z @ d.directions.T
    ungated = PowerDissipation(d.directions, d.gains, d.exponents, d.smoothing, d.asymmetry)
    cs = ungated.coefficients(z) * s
    r = z @ d.gate_directions.T + d.gate_shifts
    on = d.gated
    f = d.gate_gains[on] * np.maximum(np.abs(r[:, on]) - 1.0, 0.0)
    far = (np.abs(np.abs(r[:, on]) - 1.0).min(axis=1) > 1e-3) \
        & (np.abs(np.abs(cs[:, on]) - f).min(axis=1) > 1e-3) & (np.abs(s).min(axis=1) > 0.1)
    z = z[far]
    assert len(z) > 100 and min(min(c) for c in _branches(d, z).values()) > 30
    eps = 1e-6
    fd = np.stack([(ex.evaluate("force", z + eps * e) - ex.evaluate("force", z - eps * e))
                   / (2 * eps) for e in np.eye(3)], axis=2)
    # error eps² f'''/6 (f''' below ~1e2 for |s| > 0.1, δ = 1e-3, p = 1/3) plus round-off
    # 1e-16/eps: measured 3.8e-10 relative to the largest entry
    assert _rel(fd, ex.evaluate("dforce", z)) < 1e-7
    # where a limit holds the Jacobian is not symmetric (the m gᵀ term)
    J = ex.evaluate("dforce", z)
    assert np.abs(J - J.transpose(0, 2, 1)).max() > 0.1


def _compile(tmp_path, source):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed (gcc)"
    (tmp_path / "d.c").write_text(source)
    lib_path = tmp_path / "libd.so"
    proc = subprocess.run([cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O0",
                           "-shared", "-fPIC", "-o", str(lib_path), str(tmp_path / "d.c"), "-lm"],
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return ctypes.CDLL(str(lib_path))


@pytest.mark.parametrize("kind", ["mixed", "all"])
def test_c_rendering_compiles_and_equals_the_gated_dissipation(tmp_path, kind):
    n = 4
    d = gated(kind, n=n, seed=3)
    lib = _compile(tmp_path, dissipation_c_source(d, "dd") + (
        "\nvoid api_f(const double *x, double *f) { dd_f(x, f); }\n"
        "void api_df(const double *x, double *df) { dd_df(x, df); }\n"
        "double api_rate(const double *x) { return dd_rate(x); }\n"
        "void api_fr(const double *x, double *fr) { dd_fr(x, fr); }\n"))
    lib.api_rate.restype = ctypes.c_double
    P = ctypes.POINTER(ctypes.c_double)
    z = np.ascontiguousarray(_efforts(n, seed=2, size=200))
    for k, counts in _branches(d, z).items():
        assert min(counts) > 5 or d.gate_gains[k] == 0.0, (k, counts)
    N = len(z)
    f, df, rate, fr = np.zeros((N, n)), np.zeros((N, n * n)), np.zeros(N), np.zeros((N, n + 1))
    for k, zk in enumerate(z):
        lib.api_f(zk.ctypes.data_as(P), f[k].ctypes.data_as(P))
        lib.api_df(zk.ctypes.data_as(P), df[k].ctypes.data_as(P))
        rate[k] = lib.api_rate(zk.ctypes.data_as(P))
        lib.api_fr(zk.ctypes.data_as(P), fr[k].ctypes.data_as(P))
    assert np.array_equal(fr[:, :n], f) and np.array_equal(fr[:, n], rate)
    assert _rel(f, d.force(z)) < RTOL
    assert _rel(df.reshape(N, n, n), d.force_jacobian(z)) < RTOL
    assert _rel(rate, d.rate(z)) < RTOL


def test_modelica_functions_equal_the_gated_dissipation():
    """A NonlinearPH with gated terms: the model declares the gates' arrays and its
    dissipationForce / dissipationRate (the clip as max and min, the gate as max and abs: no
    event, in functions) evaluate, read from the model's text, to the PowerDissipation's force
    and rate."""
    d = gated("mixed")
    eff = ConvexEffort(np.diag([2.0, 1.0, 0.5]), ["quartic"], [0.5], [[1.0, 0.0, 0.0]])
    sysm = NonlinearPH(np.zeros((3, 3)), np.zeros((3, 3)), [[0.0], [1.0], [0.0]], eff, d,
                       input_names=["u"], output_names=["y"])
    text = modelica_model(sysm, "Gated")
    assert "max(abs(" in text and "max(-t" in text
    cls = mc.model(text)
    ev = mc.Evaluator(cls)
    for key in GATE_KEYS:
        assert np.array_equal(ev.params[key], dissipation_expressions(d).params[key]), key
    z = _efforts(3, seed=5, size=100)
    assert min(min(c) for c in _branches(d, z).values()) > 5
    f = np.array([ev.call_at("dissipationForce", zk) for zk in z])
    p = np.array([ev.call_at("dissipationRate", zk) for zk in z])
    # the Modelica text evaluated by numpy, the same operations (RTOL as above)
    assert _rel(f, d.force(z)) < RTOL
    assert _rel(p, d.rate(z)) < RTOL


def test_an_ungated_dissipation_exports_no_gate():
    """Without a gate the programs read no gate array (and are those of before the gates)."""
    r = np.random.default_rng(0)
    d = PowerDissipation(r.normal(size=(2, 3)), [1.0, 0.5], [0.0, 1.0], [0.1, 0.1])
    ex = dissipation_expressions(d)
    assert not GATE_KEYS & set(ex.params)
    assert "fmax" not in dissipation_c_source(d) and "fabs" not in dissipation_c_source(d)

"""The power-law dissipation's programs: their numpy and C renderings equal the ph object's
force, Jacobian and rate."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest

from fmu_surrogate.export.expressions.dissipation import dissipation_expressions
from fmu_surrogate.export.expressions.effort import ExportError
from fmu_surrogate.export.expressions.render import dissipation_c_source
from fmu_surrogate.ph import PowerDissipation

# measured (max-norm relative error over random efforts, |z| up to ~5, smoothing down to 1e-3):
# numpy rendering 1.3e-16, C rendering 5.6e-17 — the same formulas, pow as numpy's power, sums
# in another order; the bound is the one of the efforts (test_effort.py)
RTOL = 1e-13


def dissipation(seed=0, n=3, asymmetry=None):
    """Three terms: a p = 1/3 damper (F ~ |v|^(4/3)), a quadratic one (p = 1) and a p = −0.5
    one close to dry friction, smoothing from 1e-3 to 0.1."""
    r = np.random.default_rng(seed)
    return PowerDissipation(r.normal(size=(3, n)), [2.0, 0.5, 0.3], [1 / 3, 1.0, -0.5],
                            [1e-3, 0.1, 0.02], asymmetry)


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def _efforts(n, seed=1):
    z = 2.0 * np.random.default_rng(seed).normal(size=(6, n))
    z[0] = 0.0  # rest: the smoothing keeps the law finite
    return z


@pytest.mark.parametrize("asymmetry", [None, [0.6, 0.0, -1.0]])
def test_numpy_rendering_equals_the_dissipation(asymmetry):
    d = dissipation(asymmetry=asymmetry)
    ex = dissipation_expressions(d)
    z = _efforts(3)
    assert _rel(ex.evaluate("force", z), d.force(z)) < RTOL
    assert _rel(ex.evaluate("dforce", z), d.force_jacobian(z)) < RTOL
    assert _rel(ex.evaluate("rate", z), d.rate(z)) < RTOL
    fr = ex.evaluate("force_rate", z)
    assert np.array_equal(fr[:, :3], ex.evaluate("force", z))
    assert np.array_equal(fr[:, 3], ex.evaluate("rate", z))
    assert ex.evaluate("force", z[1]).shape == (3,) and ex.evaluate("rate", z[1]).shape == ()
    # the asymmetries only where there are some (symmetric laws export as before)
    assert set(ex.params) == {"diss_directions", "diss_gains", "diss_exponents",
                              "diss_smoothing"} | ({"diss_asymmetry"} if asymmetry else set())


@pytest.mark.parametrize("asymmetry", [None, [0.6, 0.0, -1.0]])
def test_c_rendering_compiles_and_equals_the_dissipation(tmp_path, asymmetry):
    d = dissipation(n=4, seed=3, asymmetry=asymmetry)
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed (gcc)"
    src = dissipation_c_source(d, "dd") + (
        "\nvoid api_f(const double *x, double *f) { dd_f(x, f); }\n"
        "void api_df(const double *x, double *df) { dd_df(x, df); }\n"
        "double api_rate(const double *x) { return dd_rate(x); }\n"
        "void api_fr(const double *x, double *fr) { dd_fr(x, fr); }\n"
        "int api_k(void) { return dd_K; }\n")
    (tmp_path / "d.c").write_text(src)
    lib_path = tmp_path / "libd.so"
    proc = subprocess.run([cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O0",
                           "-shared", "-fPIC", "-o", str(lib_path), str(tmp_path / "d.c"), "-lm"],
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lib = ctypes.CDLL(str(lib_path))
    lib.api_rate.restype = ctypes.c_double
    P = ctypes.POINTER(ctypes.c_double)
    z = _efforts(4, seed=2)
    f, df, rate, fr = np.zeros((6, 4)), np.zeros((6, 16)), np.zeros(6), np.zeros((6, 5))
    for k, zk in enumerate(np.ascontiguousarray(z)):
        lib.api_f(zk.ctypes.data_as(P), f[k].ctypes.data_as(P))
        lib.api_df(zk.ctypes.data_as(P), df[k].ctypes.data_as(P))
        rate[k] = lib.api_rate(zk.ctypes.data_as(P))
        lib.api_fr(zk.ctypes.data_as(P), fr[k].ctypes.data_as(P))
    assert lib.api_k() == 3
    # the force and the rate from one evaluation: bit for bit the separate functions' values
    assert np.array_equal(fr[:, :4], f) and np.array_equal(fr[:, 4], rate)
    assert _rel(f, d.force(z)) < RTOL
    assert _rel(df.reshape(6, 4, 4), d.force_jacobian(z)) < RTOL
    assert _rel(rate, d.rate(z)) < RTOL


def test_nothing_to_export_is_refused():
    with pytest.raises(ExportError, match="no terms"):
        dissipation_expressions(PowerDissipation.empty(2))
    with pytest.raises(ExportError, match="PowerDissipation only"):
        dissipation_expressions(np.eye(2))
    damaged = dissipation()
    damaged.gains = np.array([np.nan, 1.0, 1.0])
    with pytest.raises(ExportError, match="NaN"):
        dissipation_c_source(damaged)
    with pytest.raises(ExportError, match="not a C identifier"):
        dissipation_c_source(dissipation(), "1x")

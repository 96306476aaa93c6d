"""Exported surrogates that show fixed outputs before their first step
(``PortedSystem(..., first_outputs=…)``, as vendors' FMUs that compute their outputs in
``doStep`` only), or the change of the inputs set since the last step (``fast_feedthrough``):
run the way the harvest runs FMUs, the FMU reproduces ``fs.ph.simulate(ported, t, u,
hold="zoh")`` to round-off, the first row included, again after a reset; model exchange is
refused for fixed first outputs."""

import numpy as np
import pytest

from fmu_surrogate.export import export_fmu
from fmu_surrogate.export.expressions.effort import ExportError
from fmu_surrogate.fmu.backends.registry import FmpyBackend
from fmu_surrogate.ph import PortedSystem, simulate
from tests.export.fmi.test_fmu_export_delayed import _inputs, _rel
from tests.export.fmi.test_fmu_export_port_law import ported as nonlinear_ported


def _first():
    p = nonlinear_ported()
    return PortedSystem(p.system, p.ports, p.x0,
                        first_outputs=np.arange(1.0, p.n_outputs + 1.0) * 0.25)


def test_co_simulation_shows_the_first_outputs_then_the_model(tmp_path):
    ps = _first()
    fmu = export_fmu(ps, tmp_path / "first.fmu", fmi_version=2)
    t, U = _inputs(ps, 7)
    b = FmpyBackend(interface="cs")
    b.open(fmu)
    try:
        runs = [b.run({}, {n: U[:, k] for k, n in enumerate(ps.input_names)}, t,
                      list(ps.output_names)) for _ in range(2)]  # the second after a reset
    finally:
        b.close()
    ref = simulate(ps, t, U, hold="zoh").y
    for out in runs:
        Y = np.column_stack([out.values[n] for n in ps.output_names])
        assert np.array_equal(Y[0], ps.first_outputs)  # the fixed values, bit for bit
        # the same AVF steps in C and in numpy: round-off only (measured ≤ 1e-15)
        assert _rel(Y[1:], ref[1:]) < 1e-12


def test_model_exchange_is_refused(tmp_path):
    with pytest.raises(ExportError, match="first step.*model exchange"):
        export_fmu(_first(), tmp_path / "me.fmu", model_exchange=True)


@pytest.mark.parametrize("version", [2, 3])
def test_a_fast_feedthrough_shows_the_change_of_the_inputs_set_since_the_last_step(tmp_path,
                                                                                  version):
    from fmpy import read_model_description

    p = nonlinear_ported()
    before = np.linspace(-0.2, 0.3, p.n_inputs)
    d_f = np.arange(1.0, p.n_outputs * p.n_inputs + 1.0).reshape(p.n_outputs, p.n_inputs) / 7
    d_f[0, -1] = 0.0
    ps = PortedSystem(p.system, p.ports, p.x0, delayed_feedthrough=True, inputs_before=before,
                      fast_feedthrough=d_f)
    fmu = export_fmu(ps, tmp_path / "fast.fmu", fmi_version=version)
    t, U = _inputs(ps, 7)
    b = FmpyBackend(interface="cs")
    b.open(fmu)
    try:  # inputs set, outputs read, then the step: as a harvest reads an FMU
        out = b.run({}, {n: U[:, k] for k, n in enumerate(ps.input_names)}, t,
                    list(ps.output_names))
    finally:
        b.close()
    Y = np.column_stack([out.values[n] for n in ps.output_names])
    ref = simulate(ps, t, U, hold="zoh").y
    plain = simulate(ps.replace(fast_feedthrough=None), t, U, hold="zoh").y
    du = U - np.vstack([before, U[:-1]])
    assert _rel(ref - plain, du @ d_f.T) < 1e-13  # every point moved by D_f (u_k − u_{k−1})
    # the same AVF steps in C and in numpy: round-off only (measured ≤ 1e-15), every row
    assert _rel(Y, ref) < 1e-12
    # the outputs declare the inputs their fast feedthrough reads
    md = read_model_description(str(fmu))
    names = {id(v): v.name for v in md.modelVariables}
    deps = {names[id(o.variable)]: {names[id(d)] for d in o.dependencies}
            for o in md.outputs}
    for i, o in enumerate(ps.output_names):
        expected = {ps.input_names[k] for k in np.flatnonzero(d_f[i])}
        assert expected <= deps[o], (o, deps[o])


def test_a_master_that_reads_after_each_step_sees_no_fast_response(tmp_path):
    """libcosim's order: inputs set, step, outputs read. After a step the FMU holds the inputs
    it stepped with, so the fast feedthrough adds nothing: the outputs are those of the model
    with its delayed feedthrough alone; set new inputs and it adds ``D_f`` times their change."""
    from tests.export._unzip import cs_slave

    p = nonlinear_ported()
    before = np.linspace(-0.2, 0.3, p.n_inputs)
    d_f = np.arange(1.0, p.n_outputs * p.n_inputs + 1.0).reshape(p.n_outputs, p.n_inputs) / 7
    ps = PortedSystem(p.system, p.ports, p.x0, delayed_feedthrough=True, inputs_before=before,
                      fast_feedthrough=d_f)
    fmu = export_fmu(ps, tmp_path / "fast.fmu", fmi_version=2)
    t, U = _inputs(ps, 7)
    plain = simulate(ps.replace(fast_feedthrough=None), t, U, hold="zoh").y
    inst, vr = cs_slave(fmu, "t")
    ins, outs = [vr[n] for n in ps.input_names], [vr[n] for n in ps.output_names]
    inst.enterInitializationMode()
    inst.exitInitializationMode()
    try:
        for k in range(len(t) - 1):
            inst.setReal(ins, list(U[k]))
            inst.doStep(t[k], t[k + 1] - t[k])
            after = np.array(inst.getReal(outs))
            # the same AVF steps in C and in numpy: round-off only (measured ≤ 1e-15)
            assert _rel(after, plain[k + 1]) < 1e-12
            if k + 2 < len(t):  # the next inputs set: their change shows at once
                inst.setReal(ins, list(U[k + 1]))
                moved = np.array(inst.getReal(outs)) - after
                assert _rel(moved, d_f @ (U[k + 1] - U[k])) < 1e-12
    finally:
        inst.terminate()
        inst.freeInstance()

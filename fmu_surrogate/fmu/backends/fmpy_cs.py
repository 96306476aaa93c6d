"""The co-simulation loop of the fmpy backend: it calls the FMU's C functions directly (one
``fmi2GetReal`` / ``fmi3GetFloat64`` of all recorded value references per communication point,
written straight into the output array), with a fast FMI 2 loop for the common case (float inputs
and outputs, C-contiguous output) and a general loop for the others (FMI 3, other types, any
output layout).

Input convention: the input value at communication point ``t[i]`` is set before the values of
row ``i`` are read and held constant over the step ``[t[i], t[i+1])`` (zero-order hold).
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Mapping
from ctypes import CFUNCTYPE, c_bool, c_double, c_int, c_size_t, c_uint, c_void_p
from typing import TYPE_CHECKING, Any

import numpy as np

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.fmu.backends.api import _column_layout
from fmu_surrogate.fmu.backends.native_loop import (
    LOOP_DONE,
    LOOP_SET,
    LOOP_STOPPED,
    NativeRun,
    native_library,
)

if TYPE_CHECKING:  # pragma: no cover
    from fmu_surrogate.fmu.backends.fmpy_opened import OpenedFmpy


def _as_type(value: Any, vtype: str) -> Any:
    if vtype in ("Real", "Float64", "Float32"):
        return float(value)
    if vtype == "Boolean":
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes")
        return bool(value)
    if vtype == "String":
        return str(value)
    v = float(value)
    if v != round(v):
        raise InvalidInputError(
            f"value {value!r} is not an integer but the variable has type {vtype}")
    return round(v)


def _setter_type(vtype: str, fmi3: bool) -> str:
    if vtype == "Enumeration":
        return "Int64" if fmi3 else "Integer"
    return vtype


_FMI2_GET = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_void_p)
_FMI2_STEP = CFUNCTYPE(c_int, c_void_p, c_double, c_double, c_int)
_FMI2_STATUS_BOOL = CFUNCTYPE(c_int, c_void_p, c_int, c_void_p)
_FMI3_GET = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t)
_FMI3_STEP = CFUNCTYPE(c_int, c_void_p, c_double, c_double, c_bool, c_void_p, c_void_p, c_void_p,
                       c_void_p)


def _fmi_call_exception(function: str, status: int) -> Exception:
    from fmpy.fmi1 import FMICallException

    return FMICallException(function=function, status=status)

def fmi2_terminated(get_boolean_status: Any, comp: Any) -> bool:
    """Whether an FMI 2 co-simulation slave says it terminated (``fmi2Terminated`` status)."""
    flag = c_int(0)
    get_boolean_status(comp, 3, ctypes.addressof(flag))  # 3 = fmi2Terminated
    return bool(flag.value)


def io_layout(variables: Mapping[str, Any], record: tuple[str, ...], input_names: tuple[str, ...],
              fmi3: bool, model: str) -> dict[str, Any]:
    """How a run reads ``record`` and sets ``input_names``: the output columns, the variables
    read and set through the raw C calls (float64 scalars) and through fmpy (the others), and
    their value references as C arrays."""
    rec_vars = []
    for n in record:
        v = variables.get(n)
        if v is None:
            from fmu_surrogate.fmu.errors import UnknownVariableError

            raise UnknownVariableError(n, variables, model=model)
        rec_vars.append(v)
    cols, ncol = _column_layout(rec_vars)
    fast_type = "Float64" if fmi3 else "Real"
    fast = [v for v in rec_vars if v.type == fast_type]
    slow = [v for v in rec_vars if v.type != fast_type]
    # fast columns are contiguous only if fast vars are a prefix in record order; map them
    fast_cols = []
    for v in fast:
        c0, shape = cols[v.name]
        fast_cols.extend(range(c0, c0 + (int(np.prod(shape)) if shape else 1)))
    in_vars = [variables[n] for n in input_names]
    fast_in = [v for v in in_vars if v.type == fast_type and not v.shape]
    slow_in = [v for v in in_vars if not (v.type == fast_type and not v.shape)]
    vr = (c_uint * max(1, len(fast)))(*[v.value_reference for v in fast])
    in_vr = (c_uint * max(1, len(fast_in)))(*[v.value_reference for v in fast_in])
    return {"cols": cols, "ncol": ncol, "fast": fast, "slow": slow, "fast_cols": fast_cols,
            "n_fast_values": len(fast_cols), "fast_in": fast_in, "slow_in": slow_in, "vr": vr,
            "in_vr": in_vr, "contiguous": fast_cols == list(range(len(fast_cols)))}


def run_cs(b: OpenedFmpy, start_values, inputs, time, lay, out, progress, res) -> None:
    """One co-simulation run of backend ``b`` (its instance is fresh): initialise, then set the
    inputs, read the recorded values and step at every communication point, writing the rows
    into ``out`` and their count into ``progress[0]``; failures are raised (``res.error_time``
    says where)."""
    n = time.shape[0]
    t_list, h_list = b._grid(time)
    b._initialize(start_values, inputs, t_list[0], t_list[-1])
    comp = b._fmu.component
    nf = lay["n_fast_values"]
    nfv = len(lay["fast"])
    vr = ctypes.addressof(lay["vr"])
    contiguous = lay["contiguous"] and out.flags.c_contiguous and out.dtype == np.float64
    if contiguous:
        base = out.ctypes.data
        stride = out.strides[0]
        tmp = None
    else:
        tmp = np.empty(max(1, nf))
        base, stride = tmp.ctypes.data, 0
        fast_cols = lay["fast_cols"]
    fast_in = lay["fast_in"]
    nin = len(fast_in)
    in_base = in_stride = in_vr = 0
    if nin:
        u = _input_block(fast_in, inputs)
        in_base, in_stride = u.ctypes.data, u.strides[0]
        in_vr = ctypes.addressof(lay["in_vr"])
    slow_in = [(v, inputs[v.name]) for v in lay["slow_in"]]
    slow = lay["slow"]
    slow_get = [(getattr(b._fmu, "get" + _setter_type(v.type, b.fmi3)),
                 v.value_reference, lay["cols"][v.name], v) for v in slow]
    fmu = b._fmu
    last = n - 1
    lib = native_library() if b.native_loop and progress.dtype == np.int64 else None
    if contiguous and not slow_in and not slow_get and (lib is not None or not b.fmi3):
        if lib is not None:
            _loop_native(b, lib, comp, time, nin, in_vr, in_base, in_stride, nfv, nf, vr,
                         base, stride, progress, res)
        else:
            _loop_fmi2(b, comp, n, t_list, h_list, nin, in_vr, in_base, in_stride, nfv, vr,
                       base, stride, progress, res)
        with contextlib.suppress(Exception):  # the data is complete; terminate is courtesy
            fmu.terminate()
        return
    if b.fmi3:
        get = b._getF64
        setf = b._setF64
        step3 = b._doStep3
        ev, term, early, lst = c_bool(), c_bool(), c_bool(), c_double()
        a_ev, a_term, a_early, a_lst = (ctypes.addressof(ev), ctypes.addressof(term),
                                        ctypes.addressof(early), ctypes.addressof(lst))
        fn_get, fn_set, fn_step = "fmi3GetFloat64", "fmi3SetFloat64", "fmi3DoStep"
    else:
        get = b._getReal
        setf = b._setReal
        step = b._doStep
        fn_get, fn_set, fn_step = "fmi2GetReal", "fmi2SetReal", "fmi2DoStep"
    for i in range(n):
        if nin:
            st = (setf(comp, in_vr, nin, in_base + i * in_stride, nin) if b.fmi3
                  else setf(comp, in_vr, nin, in_base + i * in_stride))
            if st > 1:
                res.error_time = t_list[i]
                raise _fmi_call_exception(fn_set, st)
        for v, arr in slow_in:
            b._apply_start_values({v.name: arr[i]})
        if nfv:
            st = (get(comp, vr, nfv, base + i * stride, nf) if b.fmi3
                  else get(comp, vr, nfv, base + i * stride))
            if st > 1:
                res.error_time = t_list[i]
                raise _fmi_call_exception(fn_get, st)
            if tmp is not None:
                out[i, fast_cols] = tmp[:nf]
        for getter, ref, (c0, shape), v in slow_get:
            vals = getter([ref]) if not b.fmi3 else getter(
                [ref], nValues=int(np.prod(shape)) if shape else 1)
            out[i, c0:c0 + len(vals)] = vals
        progress[0] = i + 1
        if i == last:
            break
        if b.fmi3:
            st = step3(comp, t_list[i], h_list[i], True, a_ev, a_term, a_early, a_lst)
            if st > 1:
                res.error_time = t_list[i]
                raise _fmi_call_exception(fn_step, st)
            if term.value:
                # the step up to lastSuccessfulTime was completed: record it if it is ours
                if abs(lst.value - t_list[i + 1]) <= 1e-9 * max(1.0, abs(t_list[i + 1])):
                    j = i + 1
                    if nfv:
                        get(comp, vr, nfv, base + j * stride, nf)
                        if tmp is not None:
                            out[j, fast_cols] = tmp[:nf]
                    for getter, ref, (c0, shape), v in slow_get:
                        vals = getter([ref], nValues=int(np.prod(shape)) if shape else 1)
                        out[j, c0:c0 + len(vals)] = vals
                    progress[0] = j + 1
                res.stopped_early = True
                res.error_time = t_list[i]
                break
        else:
            st = step(comp, t_list[i], h_list[i], 1)
            if st > 1:
                res.error_time = t_list[i]
                # fmi2Discard: terminated by the FMU, or a step it cannot do
                if st == 2 and fmi2_terminated(b._getBoolStatus, comp):
                    res.stopped_early = True
                    break
                raise _fmi_call_exception(fn_step, st)
    with contextlib.suppress(Exception):  # the data is complete; terminate is courtesy
        fmu.terminate()


def _loop_fmi2(b: OpenedFmpy, comp, n, t_list, h_list, nin, in_vr, in_base, in_stride, nfv, vr,
               base, stride, progress, res) -> None:
    """The FMI 2 co-simulation loop of the common case: Real inputs and outputs written
    straight from/into C arrays, no per-step Python work beyond the three C calls."""
    setf, get, step = b._setReal, b._getReal, b._doStep
    in_addr, out_addr = in_base, base
    last = n - 1
    for i in range(n):
        if nin:
            st = setf(comp, in_vr, nin, in_addr)
            if st > 1:
                res.error_time = t_list[i]
                raise _fmi_call_exception("fmi2SetReal", st)
            in_addr += in_stride
        if nfv:
            st = get(comp, vr, nfv, out_addr)
            if st > 1:
                res.error_time = t_list[i]
                raise _fmi_call_exception("fmi2GetReal", st)
            out_addr += stride
        progress[0] = i + 1
        if i == last:
            return
        st = step(comp, t_list[i], h_list[i], 1)
        if st > 1:
            res.error_time = t_list[i]
            # fmi2Discard: terminated by the FMU, or a step it cannot do
            if st == 2 and fmi2_terminated(b._getBoolStatus, comp):
                res.stopped_early = True
                return
            raise _fmi_call_exception("fmi2DoStep", st)


def _loop_native(b: OpenedFmpy, lib, comp, time, nin, in_vr, in_base, in_stride, nfv, nf, vr,
                 base, stride, progress, res) -> None:
    """The loop of :func:`_loop_fmi2` (and its FMI 3 counterpart) as one call of the compiled
    loop (:mod:`~fmu_surrogate.fmu.backends.native_loop`); the FMU's failures are raised as the
    Python loop raises them."""
    run = NativeRun(lib)
    if b.fmi3:
        names = ("fmi3SetFloat64", "fmi3GetFloat64", "fmi3DoStep")
        code = run.fmi3(comp, b._setF64, b._getF64, b._doStep3, time, in_vr, nin, in_base,
                        in_stride, vr, nfv, nf, base, stride, progress)
    else:
        names = ("fmi2SetReal", "fmi2GetReal", "fmi2DoStep")
        code = run.fmi2(comp, b._setReal, b._getReal, b._doStep, b._getBoolStatus, time, in_vr,
                        nin, in_base, in_stride, vr, nfv, base, stride, progress)
    if code == LOOP_DONE:
        return
    res.error_time = float(time[run.row.value])
    if code == LOOP_STOPPED:
        res.stopped_early = True
        return
    raise _fmi_call_exception(names[code - LOOP_SET], run.status.value)


def _input_block(fast_in, inputs) -> np.ndarray:
    """The fast inputs as one (T, n_inputs) C array (a single float64 input: no copy)."""
    if len(fast_in) == 1:
        return np.ascontiguousarray(inputs[fast_in[0].name], dtype=np.float64).reshape(-1, 1)
    return np.ascontiguousarray(np.column_stack([inputs[v.name] for v in fast_in]),
                                dtype=np.float64)

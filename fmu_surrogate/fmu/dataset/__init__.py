"""The harvest dataset format (``format_version`` 2) and its reader/writer.

The names of the format are in :mod:`~fmu_surrogate.fmu.dataset.schema`; datasets are assembled
by :mod:`~fmu_surrogate.fmu.dataset.build`, written by :mod:`~fmu_surrogate.fmu.dataset.write`,
read by :mod:`~fmu_surrogate.fmu.dataset.read` and upgraded by
:mod:`~fmu_surrogate.fmu.dataset.upgrade`; :mod:`~fmu_surrogate.fmu.dataset.output_error` says
how far a predicted output is from a recorded one.  This module documents the format and gathers
the public names.

A dataset is an :class:`xarray.Dataset` stored as NetCDF-4 (HDF5, engine ``h5netcdf``).  It is
self-describing; nothing is pickled.

Dimensions and coordinates
--------------------------
``run``  (int64)   run labels (:attr:`RunRecord.index`), unique, in the order written.
``time`` (float64) the common time grid of all runs, strictly increasing, attrs ``units="s"``.

Recorded FMU variables — dims ``(run, time)``, float64
------------------------------------------------------
One data variable per recorded FMU variable, **named exactly as in the FMU** (``der(x)``,
``a.b[1]``, ``x y`` are all legal NetCDF-4 names).  Each carries the attribute
``fmu_variable`` = the original name (plus ``causality``, the FMI ``type`` and ``units`` when
known).  Only names
that cannot be stored as they are get escaped, reversibly (:func:`escape_name`):

* ``%`` → ``%25`` and ``/`` → ``%2F`` (HDF5 uses ``/`` as its path separator); a name that is
  exactly ``.`` or ``..`` has its dots written as ``%2E``;
* a name that collides with the format's own names (``time``, ``run``, ``status``,
  ``failure_kind``, ``message``, ``n_samples``, ``wall_time``, ``signal``, ``signal_index``,
  ``signal_table``, ``signal_set``) or starts with ``param:`` or ``var:`` gets the prefix
  ``var:``.

Readers should look variables up by their original name through :func:`data_var_name` /
:func:`run_arrays`, never guess.  Samples after a run's end (runs that stopped early or failed)
are NaN.  An FMI 3 array variable ``x`` of shape ``(2, 3)`` is stored element-wise as ``x[1,1]``,
``x[1,2]``, ... (1-based, row-major), each with attrs ``fmu_variable="x"`` and ``element="1,1"``.

Per-run variables — dim ``run``
-------------------------------
``status``        str      ``"ok"`` or ``"failed"``.
``failure_kind``  str      ``""`` for ok runs, else one of :data:`FAILURE_KINDS`.
``message``       str      the FMU's log / the exception text (may be ``""``).
``n_samples``     int64    number of valid leading time samples of the run.
``wall_time``     float64  seconds the run took (NaN if unknown).
``signal``        str      JSON ``{input name: Signal.describe()}`` (keys sorted) of the run's
                           inputs.  In the file: see below.
``param:<name>``  float64  value of every parameter set in any run; NaN where the run kept the
                           FMU's default.  Attribute ``parameter`` = the original name.

Input signals in the file
-------------------------
Runs usually share a few input signals, and a sampled input (``ArraySignal``) has a long
description, so the file stores each distinct description once:

``signal_table``  dim ``signal_set``, str: the distinct texts of ``signal``;
``signal_index``  dim ``run``, int64: ``signal == signal_table[signal_index]``.

:func:`save_dataset` writes these two instead of ``signal``, :func:`load_dataset` turns them back
into ``signal`` (sharing the strings), so a dataset in memory has the layout above, with the
dimensions ``run`` and ``time`` only.

Global attributes
-----------------
``format="fmu-surrogate dataset"``, ``format_version`` (int, :data:`FORMAT_VERSION`), ``created``
(ISO 8601, UTC), ``fmu_surrogate_version``, ``fmu_name``, ``fmu_guid``, ``fmi_version``,
``generation_tool``, ``fmu_sha256``, ``fmu_path``, and JSON lists of names: ``variables``
(recorded variables, in order, original names), ``parameters`` (varied parameters), ``inputs``,
``outputs``, ``states`` and ``derivatives`` (``derivatives[i]`` is the derivative of
``states[i]``), all taken from the FMU's model description (``[]`` when not known).
``parameter_values`` (JSON object ``{name: start value}`` of the FMU's scalar numeric
parameters, the values every run used unless its ``param:<name>`` says otherwise) is written
since it exists and is optional: files without it do not know them; likewise
``input_start_values`` (the start values of the inputs, what an input holds when nothing sets
it).

Storage
-------
:func:`save_dataset` writes the (run, time) variables in chunks of whole runs (about 1 MB),
gzip-compressed with the HDF5 shuffle filter at level ``complevel`` (default 1: NaN tails of
failed runs cost almost nothing, smooth trajectories shrink about 2x; higher levels gain little
on such data and cost more time, 0 stores them uncompressed).  Any NetCDF-4 reader can open the
files.

Versioning
----------
:func:`load_dataset` reads ``format_version <= FORMAT_VERSION``; older versions are upgraded in
memory by the functions in ``_UPGRADERS`` or refused with the reason and what to do; newer
versions are refused (upgrade fmu-surrogate).  Any change of this layout bumps
:data:`FORMAT_VERSION`.

* Version 1 stored ``signal`` (the JSON description) once per run and no ``signal_index`` /
  ``signal_table``; it is upgraded on load (the table is made of its distinct descriptions;
  FMU variables stored under the names that version 2 reserves get the ``var:`` prefix).
"""

from __future__ import annotations

from fmu_surrogate.fmu.dataset.build import assemble_dataset, dataset_to_records, records_to_dataset
from fmu_surrogate.fmu.dataset.deflater import ChunkDeflater
from fmu_surrogate.fmu.dataset.output_error import (
    STEADY_RTOL,
    output_scale,
    relative_errors,
    swing_origin,
)
from fmu_surrogate.fmu.dataset.read import (
    CONSTANT_RTOL,
    constant_columns,
    constant_variables,
    data_var_name,
    failed_runs,
    fmu_variables,
    input_start_values,
    load_dataset,
    operating_parameters,
    parameter_names,
    proportional_inputs,
    run_arrays,
    runs_table,
)
from fmu_surrogate.fmu.dataset.schema import (
    FAILURE_KINDS,
    FORMAT_NAME,
    FORMAT_VERSION,
    RERUN_KINDS,
    STATUS_FAILED,
    STATUS_OK,
    RunRecord,
    escape_name,
    signal_table,
    unescape_name,
)
from fmu_surrogate.fmu.dataset.write import part_path, save_dataset

__all__ = [
    "CONSTANT_RTOL",
    "FAILURE_KINDS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "RERUN_KINDS",
    "STATUS_FAILED",
    "STATUS_OK",
    "STEADY_RTOL",
    "ChunkDeflater",
    "RunRecord",
    "assemble_dataset",
    "constant_columns",
    "constant_variables",
    "data_var_name",
    "dataset_to_records",
    "escape_name",
    "failed_runs",
    "fmu_variables",
    "input_start_values",
    "load_dataset",
    "operating_parameters",
    "output_scale",
    "parameter_names",
    "part_path",
    "proportional_inputs",
    "records_to_dataset",
    "relative_errors",
    "run_arrays",
    "runs_table",
    "save_dataset",
    "signal_table",
    "swing_origin",
    "unescape_name",
]

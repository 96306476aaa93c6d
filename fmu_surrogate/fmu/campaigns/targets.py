"""Campaign targets that are not ``.fmu`` files: what a campaign needs to know of them.

A :class:`Campaign <fmu_surrogate.fmu.campaigns.campaign.Campaign>` normally simulates an FMU.  Any other
simulation that runs on a fixed time grid — for example a system of several FMUs on another
engine — can use the same machinery (isolated worker processes, timeouts, the run store and
resume, Dask) when it comes as a :class:`Target`:

* ``info`` declares its variables (settable ones with causality ``parameter`` or ``input``,
  recorded ones with any causality), its default experiment and, as ``sha256``, a hash of its
  content, which enters the campaign's identity;
* ``backend`` names a backend made by a factory registered with
  :func:`fmu_surrogate.fmu.backends.registry.register_backend`; ``module`` is the dotted name of the
  module that registers it, imported by every worker process before the backend is made;
* the backend's ``open(info.path, info)`` loads the target once per worker and its ``run`` writes
  every grid point into the output buffer as it goes (with the row counter), so a run that
  crashes or hangs keeps its data up to that point.

On a Dask cluster the target is opened from the same path on the Dask workers (a shared file
system or a local cluster); only ``.fmu`` files are sent to workers that lack them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fmu_surrogate.errors import InvalidInputError
from fmu_surrogate.fmu.model.info import DefaultExperiment, FMUInfo, Variable

__all__ = ["Target", "target_info"]


@dataclass(frozen=True)
class Target:
    """A simulation target run by a registered backend (see the module docstring).

    Attributes
    ----------
    info : FMUInfo
        Its variables, default experiment, name, file (``path``) and content hash (``sha256``);
        made by :func:`target_info`.
    backend : str
        Name under which the backend factory is registered.
    module : str
        Dotted name of the module that registers the backend.
    options : dict
        JSON-serialisable keyword arguments of the backend factory; part of the campaign's
        identity.
    attrs : dict
        Extra attributes of the campaign's dataset.
    """

    info: FMUInfo
    backend: str
    module: str
    options: Mapping[str, Any] = field(default_factory=dict)
    attrs: Mapping[str, Any] = field(default_factory=dict)


def target_info(name: str, path: str | os.PathLike, content_hash: str,
                variables: Sequence[Variable],
                default_experiment: DefaultExperiment | None = None,
                description: str = "") -> FMUInfo:
    """The :class:`FMUInfo` of a target that is not an FMU.

    Parameters
    ----------
    name : str
        Model name (the dataset's ``fmu_name``).
    path : path
        The file the backend opens.
    content_hash : str
        Hash of everything the results depend on (files, options); the campaign identity.
    variables : sequence of Variable
        Settable and recorded variables, each name once.
    default_experiment : DefaultExperiment, optional
    description : str

    Returns
    -------
    FMUInfo
        Co-simulation only, no FMI version, ``has_binary`` true.

    Raises
    ------
    ValueError
        A variable name given twice.
    """
    names = [v.name for v in variables]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise InvalidInputError(
            f"target {name!r} declares the variables {twice} twice; give each once.")
    return FMUInfo(path=Path(path), sha256=str(content_hash), name=name, guid="", fmi_version="",
                   generation_tool="", model_identifier_cs=name, model_identifier_me=None,
                   platforms=(), has_binary=True, variables=tuple(variables), states=(),
                   derivatives={}, default_experiment=default_experiment or DefaultExperiment(),
                   description=description)

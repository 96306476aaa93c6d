"""A fixed-step co-simulation master of our own, on fmpy: what libcosim does for FMI 2.0, for
systems that hold FMI 3.0 FMUs or model-exchange-only FMUs (libcosim loads FMI 1.0 and 2.0
co-simulation FMUs only; a model-exchange FMU is stepped by
:class:`~fmu_surrogate.couple.engines.me_stepper.ModelExchangeStepper`).

It is libcosim's fixed-step scheme, step for step, so that a system gives the same numbers on
either engine (tested to the last bit on FMI 2.0 systems):

* **initialisation** — every FMU gets its parameters and enters its initialisation mode; the
  connections then carry each source's output to its target ``n + 1`` times for ``n``
  components (every chain of direct feedthrough settles), the driven inputs their first values;
  then every FMU leaves the initialisation mode;
* **steps** (non-iterative, Jacobi) — every FMU steps from ``t_k`` to ``t_k + h`` with the inputs
  it holds; then the connections carry the outputs at ``t_{k+1}`` to the inputs for the next
  step, a connection's linear transformation applied, and the driven inputs take their signal's
  value at ``t_{k+1}``.

The FMUs run in this process (as libcosim's do): an FMU that crashes takes the process down.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fmu_surrogate.couple.engines.observed import unconnected
from fmu_surrogate.couple.system import CouplingError, System
from fmu_surrogate.couple.validation import ComponentInfo

__all__ = ["cosimulate"]

_NS = 1e9


class _Exchange:
    """Read the sources and the observed outputs of every component; set the targets."""

    def __init__(self, system: System, infos: dict[str, ComponentInfo],
                 observed: Sequence[str]) -> None:
        self.conns = system.all_connections()
        self.targets = {c.target for c in self.conns}
        reads: dict[str, list[str]] = {n: [] for n in system.components}
        for c in self.conns:
            reads[c.source[0]].append(c.source[1])
        self.observed = [tuple(n.split(".", 1)) for n in observed]
        self.driven = {tuple(ref.split(".", 1)) for ref in system.inputs}
        for key in self.observed:  # what the master sets it knows; the rest it reads
            if key not in self.targets and key not in self.driven:
                reads[key[0]].append(key[1])
        self.reads = {n: list(dict.fromkeys(v)) for n, v in reads.items()}
        self.held: dict[tuple[str, str], float] = {}

    def outputs(self, insts: dict[str, Any]) -> dict[tuple[str, str], float]:
        out = {}
        for name, names in self.reads.items():
            if names:
                out.update({(name, v): float(x)
                            for v, x in zip(names, insts[name].get_values(names))})
        return out

    def carry(self, insts: dict[str, Any], out: dict[tuple[str, str], float]) -> None:
        sets: dict[str, dict[str, float]] = {}
        for c in self.conns:
            value = out[c.source]
            if c.transformed:
                value = c.factor * value + c.offset
            sets.setdefault(c.target[0], {})[c.target[1]] = value
            self.held[c.target] = value
        for name, values in sets.items():
            insts[name].set_values(values)

    def drive(self, insts: dict[str, Any], driven: dict[tuple[str, str], Any], t: float) -> None:
        for (comp, var), sig in driven.items():
            value = float(sig(t))
            insts[comp].set_values({var: value})
            self.held[(comp, var)] = value

    def values(self, out: dict[tuple[str, str], float], t: float,
               driven: dict[tuple[str, str], Any]) -> list[float]:
        """The observed values: a connected input at the value it held over the step, a driven
        one at its signal's value at ``t`` (the one it holds from ``t`` on)."""
        return [float(driven[key](t)) if key in self.driven else
                self.held[key] if key in self.targets else out[key] for key in self.observed]


def cosimulate(system: System, infos: dict[str, ComponentInfo], stop_time: float, step: float,
               observed: Sequence[str],
               on_step: Callable[[float, list[float], list[float] | None], bool],
               progress: bool = False) -> str:
    """Step the system to ``stop_time`` with fmpy (module docs); after every step call
    ``on_step`` as :func:`fmu_surrogate.couple.engines.libcosim.cosimulate` does.

    Parameters
    ----------
    system : System
    infos : dict of str to ComponentInfo
    stop_time, step : float
    observed : sequence of str
        The variables whose values ``on_step`` receives.
    on_step : callable
        ``on_step(t, values, initial)``; returning true ends the run.
    progress : bool
        Show a progress bar.

    Returns
    -------
    str
        The failing component and its FMU's message when a step failed, else ``""``.

    Raises
    ------
    CouplingError
        A component whose FMU cannot be opened (named, with the reason).
    """
    from tqdm.auto import tqdm

    from fmu_surrogate.couple.engines.me_stepper import ModelExchangeStepper
    from fmu_surrogate.couple.surrogates import exported_start_values
    from fmu_surrogate.fmu.backends.fmpy_instance import FmpyBackend

    insts: dict[str, Any] = {}
    ex = _Exchange(system, infos, observed)
    driven = {tuple(ref.split(".", 1)): sig for ref, sig in system.inputs.items()}
    name = ""
    try:
        for name, comp in system.components.items():
            b = FmpyBackend(interface="cs", native_loop=False) if infos[name].co_simulation \
                else ModelExchangeStepper()
            try:
                b.open(comp.path)
            except Exception as exc:  # the FMU's own reason, named
                raise CouplingError(f"component {name!r} ({comp.path}) cannot be co-simulated: "
                                    f"{exc}") from exc
            insts[name] = b
        for name, comp in system.components.items():
            start = exported_start_values(comp) if comp.surrogate is not None else {}
            insts[name].initialize({**comp.parameters, **start}, 0.0, stop_time)
        ex.drive(insts, driven, 0.0)
        for _ in range(len(insts) + 1):  # every chain of feedthrough settles
            out = ex.outputs(insts)
            ex.carry(insts, out)
        for name, b in insts.items():
            b.end_initialization()
        out = ex.outputs(insts)
        values0 = ex.values(out, 0.0, driven)
        initial = [float("nan")] * len(observed)
        for k in unconnected(system, observed):
            initial[k] = values0[k]
        # libcosim's clock: integer nanoseconds, so that both engines pass the FMUs equal times;
        # the driven inputs' signals see t_ns / 1e9 on both (the loop of engines.libcosim)
        h_ns = round(step * _NS)
        n = -(-round(stop_time * _NS) // h_ns)
        bar = tqdm(total=n, unit="step", disable=not progress, desc="couple (fixed, fmpy)")
        for k in range(n):
            # libcosim's step: from t_k to t_{k+1} as doubles, H their difference (so that
            # t_k + H lands on t_{k+1})
            t, t_next = k * h_ns / _NS, (k + 1) * h_ns / _NS
            for name, b in insts.items():
                if b.do_step(t, t_next - t):
                    bar.close()
                    return f"component {name!r} ended the simulation at t = {t:g} s"
            name = ""
            out = ex.outputs(insts)
            bar.update(1)
            if on_step(t_next, ex.values(out, t_next, driven), initial if k == 0 else None):
                break
            ex.carry(insts, out)
            ex.drive(insts, driven, t_next)
        bar.close()
        return ""
    except CouplingError:
        raise
    except Exception as exc:  # noqa: BLE001 - a failing FMU is the run's result, with its reason
        log = list(insts[name].messages) if name in insts else []
        last = log[-1][2] if log else ""
        return f"component {name!r}: {exc}" + (f" ({last})" if last else "")
    finally:
        for b in insts.values():
            b.close()

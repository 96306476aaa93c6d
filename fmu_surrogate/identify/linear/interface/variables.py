"""The variables of a harvested dataset a surrogate takes and gives.

:func:`dataset_interface` reads them from the variables' attributes (causality, FMI type): the
inputs, and the Real outputs to fit.  Left out of the fit, and named in the report:

* outputs of another type (Boolean, Integer);
* outputs that are a power the FMU shows, an input times another output
  (:mod:`.port_power`);
* outputs with one value throughout every successful run
  (:func:`~fmu_surrogate.fmu.dataset.constant_variables`): a fixed flange's position, the
  loss of a lossless part, a temperature the model holds.  Such an output tells nothing of
  how the FMU answers its inputs, and fitted it broke the fit of the rest: an output
  identically 0 next to a damped mass's position, velocity and acceleration gave a held-out
  error of 1e288 % (each output is weighted by its spread, here zero), the mass alone 5.5e-8.

Inputs with one value throughout stay inputs (the drop-in surrogate keeps the FMU's inputs: a
DC motor's held field and direction) and are named as not excited; the linear fit takes them
as an operating point, deviations from that value
(:meth:`~fmu_surrogate.identify.LinearPHIdentifier.fit_dataset`, ``input_offsets_``): as
signals they drove a mass's integrator, an ambient temperature held at 293.15 K giving 2.2e4 %
held out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fmu_surrogate.identify.linear.errors import LinearIdentificationError

__all__ = ["REAL_TYPES", "Interface", "dataset_interface"]

#: FMI types of continuous-valued variables (fitted, and candidates of power pairs).
REAL_TYPES = ("Real", "Float32", "Float64")


@dataclass(frozen=True)
class Interface:
    """The variables of a harvested dataset a surrogate takes and gives.

    Attributes
    ----------
    inputs : tuple of str
        Every recorded input (causality ``"input"``), in the dataset's order.
    outputs : tuple of str
        Recorded outputs of FMI type Real (fitted).
    not_fitted : tuple of str
        Recorded outputs of another type (Boolean, Integer): not fitted.
    discrete_inputs : tuple of str
        Inputs of a type other than Real: modulating inputs, never in a power pair.
    products : tuple of (str, str)
        Real outputs left out of the fit as the product of an input and another output, with
        that product in words (``("P", "P = 1 · v · F")``: a power the FMU shows,
        :mod:`.port_power`).
    constants : tuple of (str, float)
        Real outputs left out of the fit as one value in every successful run, with that value
        (:func:`~fmu_surrogate.fmu.dataset.constant_variables`).
    held_inputs : tuple of (str, float)
        Inputs with one value in every successful run, with that value: not excited, fitted as
        an operating point (they stay in ``inputs``: the drop-in surrogate keeps the FMU's
        inputs).
    """

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    not_fitted: tuple[str, ...]
    discrete_inputs: tuple[str, ...]
    products: tuple[tuple[str, str], ...] = ()
    constants: tuple[tuple[str, float], ...] = ()
    held_inputs: tuple[tuple[str, float], ...] = ()

    def report_lines(self, fitted: Sequence[str] = ()) -> tuple[str, ...]:
        """The report's lines on the outputs left out of the fit (those not in ``fitted``,
        which the user may have named), one line per kind, and on the inputs not excited.

        Parameters
        ----------
        fitted : sequence of str
            The outputs fitted after all.

        Returns
        -------
        tuple of str
        """
        skip = set(fitted)
        discrete = [v for v in self.not_fitted if v not in skip]
        products = [text for name, text in self.products if name not in skip]
        constants = [f"{name} = {value:.6g}" for name, value in self.constants if name not in skip]
        power = ("an input times another output, a power the FMU shows: compute it from the "
                 "surrogate's variables")
        constant = "one value in every run: no answer to the inputs; the surrogate leaves them out"
        kinds = (("discrete outputs", ", ", discrete), (power, "; ", products),
                 (constant, ", ", constants))
        lines = tuple(f"  not fitted ({why}): {sep.join(names)}" for why, sep, names in kinds
                      if names)
        if not self.held_inputs:
            return lines
        held = ", ".join(f"{name} = {value:.6g}" for name, value in self.held_inputs)
        line = (f"  not excited (one value in every run): {held} — fitted as the operating "
                "point, so the surrogate does not know how the FMU answers other values of them "
                "(its exported FMU refuses others); excite them in the harvest (--input) for one "
                "that does")
        return (*lines, line)


def dataset_interface(ds: Any) -> Interface:
    """The inputs and outputs of a harvested dataset from its variables' attributes.

    Parameters
    ----------
    ds : xarray.Dataset
        A harvested dataset (attributes ``causality`` and ``type`` of each recorded variable;
        a variable without ``type`` counts as Real).

    Returns
    -------
    Interface

    Raises
    ------
    LinearIdentificationError
        The dataset records no input or no Real output (name them explicitly), every Real
        output is constant, or no input varies (nothing answers an input).
    """
    ins, outs, skip, disc = [], [], [], []
    units: dict[str, str | None] = {}
    for v in ds.data_vars.values():
        base = v.attrs.get("fmu_variable")
        if base is None:
            continue
        el = v.attrs.get("element")
        name = f"{base}[{el}]" if el else str(base)
        units[name] = v.attrs.get("units")
        real = str(v.attrs.get("type", "Real")) in REAL_TYPES
        if v.attrs.get("causality") == "input":
            ins.append(name)
            if not real:
                disc.append(name)
        elif v.attrs.get("causality") == "output":
            (outs if real else skip).append(name)
    if not ins and outs:
        raise LinearIdentificationError(
            f"the dataset records no inputs, only the outputs {outs}: a surrogate is fitted to "
            "how an FMU's outputs answer its inputs, and a model with no inputs (a free-running "
            "model, a source) has no port to couple through or to excite. If the FMU has inputs "
            "the harvest did not record, harvest again recording them (--record) and exciting "
            "them (--input), or name them with inputs=… (CLI --inputs).")
    if not ins or not outs:
        raise LinearIdentificationError(
            f"the dataset records {len(ins)} inputs and {len(outs)} Real outputs (attribute "
            "causality); name the variables to fit with inputs=…, outputs=… (CLI --inputs, "
            "--outputs), or harvest recording the FMU's inputs and outputs.")
    from fmu_surrogate.fmu.dataset import constant_variables
    from fmu_surrogate.identify.linear.interface.port_power import power_outputs

    held = list(constant_variables(ds, ins).items())
    constants = list(constant_variables(ds, outs).items())
    outs = [o for o in outs if o not in dict(constants)]
    if not outs:
        raise LinearIdentificationError(
            f"every Real output of the dataset is constant in every run ({constants}): nothing "
            "answers the inputs; harvest exciting the inputs (--input), or name the outputs to "
            "fit with outputs=… (CLI --outputs).")
    if held and len(held) == len(ins):
        values = ", ".join(f"{name} = {value:.6g}" for name, value in held)
        raise LinearIdentificationError(
            f"no input of the dataset varies in any run ({values}): its outputs show how the "
            "FMU moves on its own, not how it answers its inputs, and a surrogate is fitted to "
            "that answer; harvest exciting the inputs (--input NAME=noise:…, several runs at "
            "different amplitudes), or name the inputs to fit with inputs=… (CLI --inputs).")
    products = power_outputs(ds, [n for n in ins if n not in disc], outs, units)
    left = {name for name, _ in products}
    return Interface(tuple(ins), tuple(o for o in outs if o not in left), tuple(skip),
                     tuple(disc), tuple(products), tuple(constants), tuple(held))

"""Input signals of harvesting campaigns: the base class, the standard kinds, broadband excitation.

``base`` holds :class:`Signal`; ``standard`` the simple kinds (constant, step, chirp, sampled
arrays), the registry of kinds (``SIGNAL_KINDS``) and the parsing of descriptions; ``excitation``
the identification signals (Schroeder multisine, PRBS, band-limited noise).  Every public name of
those modules is available here (``fs.signals.Chirp``).
"""

from fmu_surrogate.fmu.signals.base import Signal
from fmu_surrogate.fmu.signals.excitation import PRBS, BandLimitedNoise, SchroederMultisine
from fmu_surrogate.fmu.signals.standard import (
    SIGNAL_KINDS,
    ArraySignal,
    Chirp,
    Constant,
    Step,
    check_signal_fits,
    sample_inputs,
    signal_from_description,
)

__all__ = [
    "PRBS",
    "SIGNAL_KINDS",
    "ArraySignal",
    "BandLimitedNoise",
    "Chirp",
    "Constant",
    "SchroederMultisine",
    "Signal",
    "Step",
    "check_signal_fits",
    "sample_inputs",
    "signal_from_description",
]

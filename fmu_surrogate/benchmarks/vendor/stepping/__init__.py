"""Vendor-like components that step as a vendor's exported co-simulation FMUs step, quirks
included: :mod:`.coupled_mass_clock` counts its own time as 20-sim's FMUs do and compares it with
the communication points without a tolerance."""

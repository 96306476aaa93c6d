"""Coupled systems of FMUs and surrogates: SSP/TOML descriptions, runs on libcosim, energy per bond."""

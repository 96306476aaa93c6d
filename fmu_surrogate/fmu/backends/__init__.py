"""Simulation backends: one FMU instance, many runs (fmpy co-simulation and model exchange, PyFMI)."""

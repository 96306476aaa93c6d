"""fmu layer."""

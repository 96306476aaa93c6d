"""Surrogates as FMUs: the model description (FMI 2.0 and 3.0), the variables, the C sources, the archive."""

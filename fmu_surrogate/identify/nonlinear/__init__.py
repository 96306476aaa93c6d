"""Nonlinear pH surrogates with a latent state, identified from input-output data only."""

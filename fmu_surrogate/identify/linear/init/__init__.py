"""Initial linear pH models from data: subspace identification, the passive pH form, growing the order."""

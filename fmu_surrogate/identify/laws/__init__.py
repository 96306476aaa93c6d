"""Constitutive laws by sparse Bayesian learning (docs/design.md §5): candidate libraries, RVM, GP-RVM, their data and pH surrogates."""

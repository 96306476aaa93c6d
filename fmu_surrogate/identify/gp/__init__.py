"""Gaussian-process identification of pH-DAE efforts (docs/design.md §3): effort, Hamiltonian, Kronecker and low-rank GPs, training subsets."""

"""Gaussian-process identification of pH-DAE efforts (docs/design.md §3).

:mod:`.effort` (the estimator) with :mod:`.samples` (targets and checked samples),
:mod:`.structure` (known structure and components), :mod:`.standardise` (units),
:mod:`.models` (the torch GP) and :mod:`.training` (Adam on the marginal likelihood); the GPs of
:mod:`.kronecker`, :mod:`.hamiltonian` and :mod:`.sor` (low rank, for GP-RVM) on the kernel of
:mod:`.kernels`; training subsets by farthest-point sampling in :mod:`.sampling`; a structure
``J, R, B`` proposed from declared states in :mod:`.proposal`.
"""

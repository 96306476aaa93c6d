"""Effort functions of pH systems: kernel expansions, known polynomials, sums of elementary terms."""

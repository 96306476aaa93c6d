"""Optimisers of linear pH identification: Levenberg–Marquardt, Riemannian CG, pymanopt's first-order methods."""

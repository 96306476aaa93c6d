"""The discretised linear pH model: recurrences, costs, adjoint gradients, sensitivities and the manifold."""

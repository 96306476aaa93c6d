"""Linear pH identification (docs/design.md §4): the estimator, its data, settings, noise handling, prediction and report."""

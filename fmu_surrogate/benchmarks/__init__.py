"""benchmarks layer."""

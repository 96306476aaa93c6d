"""identify layer."""

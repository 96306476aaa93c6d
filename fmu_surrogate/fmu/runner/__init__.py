"""The isolated runner: persistent worker processes, their scheduling, timeouts, crash and failure classification."""

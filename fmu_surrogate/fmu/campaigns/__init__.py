"""Harvesting campaigns: experiments and parameter plans, execution, the crash-safe run store, Dask, sessions."""

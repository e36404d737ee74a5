"""Engines move rows and run scorers in parallel (datasets, sharded resumable jobs, Ray Data);
the filter plan decides what to keep."""

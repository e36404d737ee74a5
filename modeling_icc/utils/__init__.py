"""Shared helpers that depend on nothing else in the package: errors, provenance (versions,
atomic JSON), shipped data, the human norms, caption text normalization, noise and windows."""

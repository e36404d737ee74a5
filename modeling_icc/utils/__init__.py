"""Shared helpers that depend on nothing else in the package: errors, provenance (versions,
atomic JSON), shipped data, the training scripts' TrainingArguments and option parsing."""

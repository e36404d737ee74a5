"""The ICC ``evaluate`` module, shipped as package data: ``evaluate.load(modeling_icc.metric_path())``."""

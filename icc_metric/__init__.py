"""The ICC ``evaluate`` module, shipped as package data: ``evaluate.load(str(modeling_icc.metric_path()))``."""

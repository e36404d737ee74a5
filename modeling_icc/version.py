"""The package version and its distribution name (``pip`` name).

The distribution is ``icc-concreteness``: ``icc`` on PyPI is an unrelated project.
"""

__version__ = "0.1.0"
DISTRIBUTION = "icc-concreteness"

"""The ``icc`` command line."""

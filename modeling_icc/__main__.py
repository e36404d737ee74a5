"""``python -m modeling_icc`` runs the ``icc`` command line."""

import sys

from .cli.main import main

sys.exit(main())

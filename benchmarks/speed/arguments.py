"""The flags of the scripts that time scoring: how many captions (``--n``), how many timed runs
(``--repeats``), and where the JSON goes (``--out``)."""

from __future__ import annotations

import argparse
from pathlib import Path


def timing_parser(doc: str, out: Path, *, n: int, repeats: int, n_help: str | None = None) -> argparse.ArgumentParser:
    """A script's parser, its docstring as the description, with ``--n``, ``--repeats`` and ``--out`` (default
    ``out``) in that order; the script adds its own flags after them."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=n, help=n_help)
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--out", type=Path, default=out)
    return parser

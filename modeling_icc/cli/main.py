"""Entry point of the ``icc`` console script.

Only the chosen command's module is imported (``icc --help`` imports none of them),
and torch and transformers only when a neural model is loaded, so the command starts
in a fraction of a second.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

from ..utils.errors import UserInputError
from ..version import __version__

#: Command name -> one-line help; ``modeling_icc.cli.<name>`` holds its options and ``run``.
COMMANDS = {
    "score": "score captions (arguments, stdin, txt/jsonl/csv/parquet)",
    "filter": "keep rows whose caption is concrete enough",
    "explain": "show which words and cues push a caption's score up or down",
    "bench": "benchmark scorers against human concreteness ratings (captions, words, nouns, phrases)",
    "cards": "generate the model and dataset cards from bench results and provenance",
    "push": "build, check and upload a model, dataset, Space or the evaluate module",
    "convert": "convert a student checkpoint (the published moranyanuka/icc format) into the icc format",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``icc`` parser; only ``command``'s options are defined (all listed commands still parse)."""
    parser = argparse.ArgumentParser(
        prog="icc",
        description="Image Caption Concreteness: score and filter captions by how visually concrete they are.",
    )
    parser.add_argument("--version", action="version", version=f"icc {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        subparser = subparsers.add_parser(name, help=help_text, formatter_class=argparse.RawDescriptionHelpFormatter)
        if name == command:
            import_module(f".{name}", __package__).configure(subparser)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 2
    from ..scoring.load import CheckpointError, ModelNotAvailableError

    try:
        return args.run(args)
    except (UserInputError, ModelNotAvailableError, CheckpointError) as error:
        print(f"icc: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())

"""Entry point of the ``icc`` console script."""

from __future__ import annotations

import argparse
import sys

from ..scoring.load import CheckpointError, ModelNotAvailableError
from ..utils.errors import UserInputError
from ..version import __version__
from . import bench as bench_command
from . import cards as cards_command
from . import explain as explain_command
from . import filter as filter_command
from . import push as push_command
from . import score as score_command

COMMANDS = (score_command, filter_command, explain_command, bench_command, cards_command, push_command)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="icc",
        description="Image Caption Concreteness: score and filter captions by how visually concrete they are.",
    )
    parser.add_argument("--version", action="version", version=f"icc {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 2
    try:
        return args.run(args)
    except (UserInputError, ModelNotAvailableError, CheckpointError) as error:
        print(f"icc: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())

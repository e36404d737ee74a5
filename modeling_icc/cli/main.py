"""Entry point of the ``icc`` console script.

Only the chosen command's module is imported (``icc --help`` imports none of them),
and torch and transformers only when a neural model is loaded, so the command starts
in a fraction of a second.
"""

from __future__ import annotations

import argparse
import os
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


#: Exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    """Run one ``icc`` command; every failure a user can act on is one line on stderr (exit code 2).

    The one place that maps exceptions to messages and exit codes: the commands' own
    errors, errors of the system (a full disk, a read-only folder: ``OSError``), Ctrl-C
    (exit code 130, temporary files removed on the way out) and a reader that went away
    (``icc ... | head``: quiet, as Unix tools are).
    """
    if sys.stderr is None:  # started with stderr closed: messages must not end up in the output
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (open for the rest of the process)
    args = argparse.Namespace()  # filled by the parser, read here once Ctrl-C stops anything
    try:
        return _run(sys.argv[1:] if argv is None else list(argv), args)
    except KeyboardInterrupt:
        _silence_stdout()
        resume = "; run the same command again to resume" if getattr(args, "output_dir", None) else ""
        line_end = "\n" if sys.stderr.isatty() else ""  # past a progress bar's line
        print(f"{line_end}icc: interrupted{resume}", file=sys.stderr)
        return INTERRUPTED


def _run(argv: list[str], args: argparse.Namespace) -> int:
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    parser.parse_args(argv, namespace=args)
    if not hasattr(args, "run"):
        parser.print_help()
        return 2
    if sys.stdin is None:
        sys.stdin = _ClosedStream("input", "pass --input FILE")
    if sys.stdout is None:
        sys.stdout = _ClosedStream(
            "output", "pass --output FILE" if hasattr(args, "output") else "redirect it (> FILE)"
        )
    from ..scoring.load import CheckpointError, ModelNotAvailableError

    try:
        return args.run(args)
    except (UserInputError, ModelNotAvailableError, CheckpointError) as error:
        print(f"icc: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except OSError as error:
        _silence_stdout()
        print(f"icc: error: {_os_error_message(error)}", file=sys.stderr)
        return 2


class _ClosedStream:
    """Stands for a standard stream the process was started without (``<&-``, ``>&-``, where
    Python sets it to ``None``): using it is a one-line error instead of an ``AttributeError``."""

    def __init__(self, name: str, advice: str) -> None:
        self.name, self.advice = name, advice

    def flush(self) -> None:
        """Nothing to flush (the interpreter flushes stdout on exit)."""

    def __getattr__(self, attribute: str) -> object:
        raise UserInputError(f"standard {self.name} is closed; {self.advice}")


def _os_error_message(error: OSError) -> str:
    """``PATH: reason`` (or the reason alone), e.g. ``out.jsonl: No space left on device``."""
    reason = error.strerror or str(error)
    return f"{error.filename}: {reason}" if error.filename else reason


def _silence_stdout() -> None:
    """Point stdout at /dev/null if what it holds cannot be written, so that the interpreter's
    final flush does not fail again with a traceback (the reader has gone, the disk is full)."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())

"""Entry point of the ``icc`` console script.

Only the chosen command's module is imported (``icc --help`` imports none of them),
and torch and transformers only when a neural model is loaded, so the command starts
in a fraction of a second.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from importlib import import_module
from types import ModuleType, TracebackType
from typing import TextIO

from ..utils.errors import OptionError, UserInputError
from ..utils.extras import missing_module_line
from ..utils.redaction import redact
from ..version import __version__

#: Command name -> one-line help; ``modeling_icc.cli.<name>`` holds its ``DESCRIPTION``, ``EXAMPLES``,
#: options (``configure``) and ``run``.
COMMANDS = {
    "score": "score captions (arguments, stdin, txt/jsonl/csv/parquet)",
    "filter": "keep rows whose caption is concrete enough",
    "explain": "show which words and cues push a caption's score up or down",
    "bench": "quality benchmarks: scorers against human concreteness ratings (captions, words, nouns, phrases)",
    "cards": "generate the model and dataset cards from bench results and provenance",
    "push": "build, check and upload a model, dataset, Space or the evaluate module",
    "convert": "convert a student checkpoint (the published moranyanuka/icc format) into the icc format",
}


#: Environment switches of the libraries' own progress bars, read when each is imported
#: (huggingface_hub's also covers transformers' "Loading weights" and "Writing model shards").
LIBRARY_BAR_SWITCHES = ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS")
#: One imported library's bars: ``(switch, is_on, turn_off, turn_on)``.
LibraryBars = tuple[str, Callable[[], bool], Callable[[], None], Callable[[], None]]


@contextmanager
def library_bars_off() -> Iterator[None]:
    """No progress bars of transformers, datasets or huggingface_hub during a command: the command shows
    its own (rows, shards), on a terminal only, so a redirected stderr holds only its ``icc:`` lines.

    A switch the user set is kept; libraries imported already are switched off, and back on after.
    """
    saved = {name: os.environ.get(name) for name in LIBRARY_BAR_SWITCHES}
    for name in LIBRARY_BAR_SWITCHES:
        os.environ.setdefault(name, "1")
    with ExitStack() as restore:
        for switch, is_on, turn_off, turn_on in _imported_library_bars():
            if saved[switch] is None and is_on():
                turn_off()
                restore.callback(turn_on)
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)


def _imported_library_bars() -> Iterator[LibraryBars]:
    """The bars of each library already imported."""
    hub = sys.modules.get("huggingface_hub.utils")
    if hub is not None:
        yield _hub_style_bars(LIBRARY_BAR_SWITCHES[0], hub)
    logging = sys.modules.get("transformers.utils.logging")
    if logging is not None:
        yield (
            LIBRARY_BAR_SWITCHES[0],
            logging.is_progress_bar_enabled,
            logging.disable_progress_bar,
            logging.enable_progress_bar,
        )
    bars = sys.modules.get("datasets.utils.tqdm")
    if bars is not None:
        yield _hub_style_bars(LIBRARY_BAR_SWITCHES[1], bars)


def _hub_style_bars(switch: str, module: ModuleType) -> LibraryBars:
    """The bars of a library whose ``module`` has huggingface_hub's progress-bar functions (as datasets')."""
    return (
        switch,
        lambda: not module.are_progress_bars_disabled(),
        module.disable_progress_bars,
        module.enable_progress_bars,
    )


@contextmanager
def package_notices() -> Iterator[None]:
    """What the package logs as a warning (mini's ONNX graph being built, a cached graph rebuilt) as one
    ``icc: notice:`` line on stderr each, as it happens, during a command (Python callers see the bare line)."""
    import logging

    logger = logging.getLogger(__package__.rpartition(".")[0])
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("icc: notice: %(message)s"))
    handler.setLevel(logging.WARNING)
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


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
            module = import_module(f".{name}", __package__)
            subparser.description, subparser.epilog = module.DESCRIPTION, module.EXAMPLES
            module.configure(subparser)
            subparser.set_defaults(run=module.run)
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
    if argv is None:  # the process's own command: a traceback it dies with is printed without secrets too
        sys.excepthook = _redacted_excepthook
    args = argparse.Namespace()  # filled by the parser, read here once Ctrl-C stops anything
    stderr = sys.stderr
    sys.stderr = RedactedStream(stderr)
    try:
        return _run(sys.argv[1:] if argv is None else list(argv), args)
    except KeyboardInterrupt:
        _silence_stdout()
        resume = "; run the same command again to resume" if getattr(args, "output_dir", None) else ""
        line_end = "\n" if sys.stderr.isatty() else ""  # past a progress bar's line
        print(f"{line_end}icc: interrupted{resume}", file=sys.stderr)
        return INTERRUPTED
    finally:
        if isinstance(sys.stderr, RedactedStream) and sys.stderr.stream is stderr:
            sys.stderr = stderr


class RedactedStream:
    """stderr while a command runs: every line written to it (icc's own, a library's warning or log line, a
    traceback) has the secrets a URL carried hidden (:func:`~modeling_icc.utils.redaction.redact`)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(redact(text))

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def _redacted_excepthook(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
    """Python's report of an uncaught exception, with secrets hidden (see :class:`RedactedStream`)."""
    import traceback

    sys.stderr.write(redact("".join(traceback.format_exception(kind, error, trace))))


#: The extra each command beyond the core needs whole (a missing module of it names this extra).
COMMAND_EXTRAS = {"bench": "baselines", "cards": "train", "push": "train", "convert": "torch"}


def _run(argv: list[str], args: argparse.Namespace) -> int:
    command = argv[0] if argv and argv[0] in COMMANDS else None
    try:
        return _run_command(command, argv, args)
    except ModuleNotFoundError as error:  # an optional module: one line naming its extra, not a traceback
        line = missing_module_line(error, f"icc {command}" if command else "icc", COMMAND_EXTRAS.get(command or ""))
        if line is None:
            raise
        print(f"icc: error: {line}", file=sys.stderr)
        return 2


def _run_command(command: str | None, argv: list[str], args: argparse.Namespace) -> int:
    parser = build_parser(command)
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
        with library_bars_off(), package_notices():
            return args.run(args)
    except OptionError as error:  # named as the flags that set the options
        print(f"icc: error: {error.naming(flag)}", file=sys.stderr)
        return 2
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


def flag(option: str) -> str:
    """The flag of a model option (``batch_size`` -> ``--batch-size``): each flag's ``dest`` is the option's name."""
    return f"--{option.replace('_', '-')}"


class _ClosedStream:
    """Stands for a standard stream the process was started without (``<&-``, ``>&-``, where
    Python sets it to ``None``): using it is a one-line error instead of an ``AttributeError``."""

    #: Read by libraries at import time (pandas, through pyarrow): answered, not an error.
    encoding = errors = None

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

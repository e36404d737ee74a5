"""Exceptions for mistakes a user can fix; the CLI prints them as one line, no traceback."""

from __future__ import annotations

from collections.abc import Callable

from .redaction import redact


class UserInputError(ValueError):
    """Bad file, format, column or option: the message says what to change. A secret that a URL carried is
    never part of it (:func:`~.redaction.redact`): the message is shown, and may be logged."""

    def __init__(self, message: object = "", *args: object) -> None:
        super().__init__(redact(message), *args)


class CheckpointError(ValueError):
    """The checkpoint exists but cannot be used: corrupt, incomplete, pickle-only, or of another architecture."""


class OptionError(UserInputError):
    """An option with a bad value, or one its model would ignore: the message names the options as a caller
    names them, Python arguments by default (``batch_size``); :meth:`naming` names them otherwise (the ``icc``
    command: as its flags, ``--batch-size``)."""

    def __init__(self, message: str, *options: str) -> None:
        """``message``: ``{}`` stands for the options' names, ``{model}`` for the model option's."""
        self.message, self.options = message, options
        super().__init__(self.naming(str))

    def naming(self, name: Callable[[str], str]) -> str:
        """The message with every option named by ``name``."""
        return self.message.format(", ".join(map(name, self.options)), model=name("model"))

    def __reduce__(self) -> tuple:  # sent whole from worker processes
        return type(self), (self.message, *self.options)

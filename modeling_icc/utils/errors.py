"""Exceptions for mistakes a user can fix; the CLI prints them as one line, no traceback."""


class UserInputError(ValueError):
    """Bad file, format, column or option: the message says what to change."""


class CheckpointError(ValueError):
    """The checkpoint exists but cannot be used: corrupt, incomplete, pickle-only, or of another architecture."""

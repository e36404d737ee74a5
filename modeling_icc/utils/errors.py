"""Exceptions for mistakes a user can fix; the CLI prints them as one line, no traceback."""


class UserInputError(ValueError):
    """Bad file, format, column or option: the message says what to change."""

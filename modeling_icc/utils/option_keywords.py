"""An options dataclass given to a function as keywords: its fields become the function's parameters.

The engines (``datasets``, Ray) take their filter options (:class:`~modeling_icc.curation.filter_options.FilterOptions`)
and scoring options (:class:`~modeling_icc.scoring.options.ScoringOptions`) this way: a user writes
``filter_by_icc(ds, threshold=0.5, model="lite")``, the engine receives one checked options object, and its
signature (``help``, ``inspect``) lists every option with its default, so an option added to a dataclass
reaches every engine at once.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection
from dataclasses import fields
from typing import Any, TypeVar

Result = TypeVar("Result")


def takes_options(
    options: type, parameter: str, *, positional: Collection[str] = (), after: str | None = None
) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """A decorator: ``engine``'s ``parameter`` (an ``options`` dataclass) is given as the dataclass's fields.

    Each field becomes a keyword with its default, where ``parameter`` stood; those named in ``positional``
    may also be given by position, right after the engine's parameter ``after`` (``None``: where
    ``parameter`` stood). The engine is called with the fields built into one ``options`` (so checked before
    it runs); a wrong keyword is a ``TypeError``, as in a plain call.
    """

    def decorate(engine: Callable[..., Result]) -> Callable[..., Result]:
        signature = inspect.signature(engine)
        missing = [name for name in (parameter, after) if name is not None and name not in signature.parameters]
        if missing:
            raise TypeError(f"{engine.__name__} has no parameter {missing[0]!r}")
        given_as = {
            field.name: inspect.Parameter(
                field.name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD if field.name in positional else inspect.Parameter.KEYWORD_ONLY,
                default=field.default,
                annotation=field.type,
            )
            for field in fields(options)
        }
        moved = [given_as.pop(name) for name in positional] if after is not None else []
        parameters = []
        for current in signature.parameters.values():
            if current.name == parameter:
                parameters += given_as.values()
                continue
            parameters.append(current)
            if current.name == after:
                parameters += moved
        try:
            with_options = signature.replace(parameters=parameters)
        except ValueError as error:  # keywords before a parameter that may go by position
            raise TypeError(f"{engine.__name__}: the options cannot stand where {parameter!r} does ({error})") from None
        names = {field.name for field in fields(options)}
        more = [current.name for current in parameters if current.kind is inspect.Parameter.VAR_KEYWORD]

        @functools.wraps(engine)
        def call(*args: Any, **kwargs: Any) -> Result:
            given = with_options.bind(*args, **kwargs).arguments
            built = options(**{name: given.pop(name) for name in names & given.keys()})
            extra = given.pop(more[0], {}) if more else {}
            return engine(**given, **{parameter: built}, **extra)

        call.__signature__ = with_options  # type: ignore[attr-defined]
        return call

    return decorate

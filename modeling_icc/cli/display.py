"""Human-readable tables for the terminal (rich)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

import numpy as np
from rich.console import Console
from rich.table import Table


class PipeConsole(Console):
    """A rich console whose reader may stop early (``icc explain ... | head -1``): rich would exit with
    status 1 there; this hands the ``BrokenPipeError`` to the command, which ends quietly (status 0)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def score_style(score: float) -> str:
    if np.isnan(score):
        return "dim"
    return "green" if score >= 0.66 else "yellow" if score >= 0.33 else "red"


def print_score_table(
    captions: Sequence[object],
    scores: np.ndarray,
    *,
    title: str,
    kept: np.ndarray | None = None,
    stream: TextIO | None = None,
) -> None:
    """Score (coloured by band), optionally whether a filter keeps the row, and caption."""
    table = Table(title=title, show_lines=False)
    table.add_column("ICC", justify="right", no_wrap=True)
    if kept is not None:
        table.add_column("kept", justify="center", no_wrap=True)
    table.add_column("caption", overflow="fold")
    for index, (caption, score) in enumerate(zip(captions, scores, strict=True)):
        shown = "NaN" if np.isnan(score) else f"{score:.3f}"
        cells = [f"[{score_style(score)}]{shown}[/]"]
        if kept is not None:
            cells.append("[green]yes[/]" if kept[index] else "[dim]no[/]")
        table.add_row(*cells, str(caption))
    PipeConsole(file=stream or sys.stdout, soft_wrap=False).print(table)

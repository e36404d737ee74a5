"""``icc explain``: which words and cues make a caption concrete or not."""

from __future__ import annotations

import argparse
import json
import math
import sys

from rich.text import Text

from ..scoring.explanation import Explanation
from ..scoring.inputs import has_content
from ..utils.errors import UserInputError
from .common import add_model_options, open_scorer
from .display import PipeConsole

DESCRIPTION = (
    "Explain scores. Lite: exact per-word and per-cue contributions to the logit "
    "(they add up, with the bias, to logit(score)). Mini: exact per-word contributions to the logit (its heads "
    "are linear over the encoder's token states). Neural students: occlusion, the change in the raw "
    "score when each word is removed (one extra forward pass per word, batched)."
)
EXAMPLES = """examples:
  icc explain "a man with a white shirt" "a great method of quantifying concreteness"   # mini: exact, contextual
  icc explain --model lite --json "How To Create A Social Media Strategy In 5 Easy Steps"   # lite: words and cues
  icc explain --model path/to/student "a cat on a counter"     # occlusion: one pass per word
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("texts", nargs="+", metavar="TEXT", help="captions to explain")
    parser.add_argument("--json", action="store_true", help="print one JSON object per caption")
    parser.add_argument("--top", type=int, default=3, help="number of top reasons to list (default 3)")
    add_model_options(parser)


def run(args: argparse.Namespace) -> int:
    if any(not has_content(text) for text in args.texts):
        raise UserInputError("cannot explain a blank caption")
    scorer = open_scorer(args)
    explanations = scorer.explain_many(list(args.texts))
    if args.json:
        for explanation in explanations:
            print(json.dumps(explanation.to_dict(), ensure_ascii=False))
        return 0
    console = PipeConsole(file=sys.stdout, highlight=False)
    for explanation in explanations:
        print_explanation(console, explanation, top=args.top)
    return 0


def coloured_caption(explanation: Explanation) -> Text:
    """The caption as the model read it (as written, or as normalized: ``Explanation.text``), its words green
    where they raise the score and red where they lower it; spacing and punctuation between them as they are."""
    scale = max((abs(value) for _, value in explanation), default=0.0) or 1.0
    text = Text()
    for piece, value in explanation.segments():
        if value is None:
            text.append(piece, style="grey50" if explanation.web_junk else None)
            continue
        strength = min(abs(value) / scale, 1.0)
        level = int(95 + 160 * strength)
        colour = f"rgb(0,{level},0)" if value > 0 else f"rgb({level},0,0)" if value < 0 else "grey50"
        text.append(piece, style=f"bold {colour}" if strength > 0.5 else colour)
    return text


def print_explanation(console: PipeConsole, explanation: Explanation, top: int) -> None:
    score = "NaN" if math.isnan(explanation.score) else f"{explanation.score:.3f}"
    console.print(
        Text.assemble(
            ("ICC ", "bold"),
            (score, "bold cyan"),
            f"  ({explanation.model_id}, {explanation.method}; language: {explanation.language})",
        )
    )
    console.print(coloured_caption(explanation))
    if explanation.web_junk is not None:
        console.print(f"  web junk ({explanation.web_junk}): scored 0.0 without running the model")
    for name, value in explanation.reasons(top):
        direction = "raises" if value > 0 else "lowers"
        console.print(f"  {direction} the score: {name} ({value:+.3f})")
    console.print()

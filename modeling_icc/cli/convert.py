"""``icc convert``: a student checkpoint (the published ``moranyanuka/icc`` format, or ours) in our format."""

from __future__ import annotations

import argparse
import sys

from ..hub.convert import convert_student
from ..hub.upload import prepare_output

DESCRIPTION = (
    "Convert a student checkpoint (RobertaForSequenceClassification in the published moranyanuka/icc "
    "format, or ours) into the icc format, and check that its raw scores are unchanged."
)
EXAMPLES = """examples:
  hf download moranyanuka/icc            # once, where the Hub is reachable
  icc convert --model moranyanuka/icc --output outputs/icc-distilroberta \\
      --card hub_cards/icc-distilroberta/README.md
  icc push --kind model --repo-id my-org/icc-distilroberta --model outputs/icc-distilroberta

writes model.safetensors, config.json (model_type icc, auto_map for AutoConfig, AutoModel and
AutoModelForSequenceClassification), configuration_icc.py and modeling_icc.py (for users without
the package: trust_remote_code=True), the tokenizer and, with --card, README.md; then checks that
the converted folder gives the source's raw scores, through icc and through transformers alone
(a fresh process, trust_remote_code=True, without this package).
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", required=True, help="local folder or Hub id (from the Hugging Face cache, or downloaded)"
    )
    parser.add_argument("--output", required=True, metavar="DIR", help="new or empty folder to write")
    parser.add_argument("--card", help="card to include as README.md (e.g. written by `icc cards --all`)")


def run(args: argparse.Namespace) -> int:
    for check in convert_student(args.model, prepare_output(args.output), args.card):
        print(f"icc: ok: {check}", file=sys.stderr)
    print(f"icc: converted {args.model} into {args.output}")
    return 0

"""``icc push``: build the exact folder a Hub repository receives, check it offline, upload it."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from huggingface_hub import constants as hf_constants
from huggingface_hub import get_token
from huggingface_hub.errors import HfHubHTTPError

from ..hub import upload
from ..hub.folders import HUB_CARDS_DIR
from ..scoring.load import hub_reachable
from ..utils.errors import UserInputError
from ..utils.extras import GRADIO, require

DESCRIPTION = (
    "Build the exact upload folder, validate it offline (card YAML, files, the model "
    "loading from the folder), then upload it with huggingface_hub unless --dry-run is given."
)
EXAMPLES = """examples:
  icc push --kind model --repo-id my-org/icc-distilroberta --model outputs/icc-distilroberta --dry-run outputs/push
  icc push --kind model --repo-id my-org/icc-lite --model lite            # a model shipped in the package: its card
  icc push --kind dataset --repo-id my-org/icc-teacher-scores --data runs/paper/dataset
  icc push --kind dataset --repo-id my-org/icc-caption-concreteness --data benchmark
  icc push --kind space --repo-id my-org/icc-demo    # needs: pip install "icc-concreteness[space]"
  icc push --kind metric --repo-id my-org/icc        # [space] too; then: evaluate.load("my-org/icc", "lite")

--card defaults to DATA/README.md for a teacher-score folder that has one (run_pipeline.py writes
it), else hub_cards/NAME/README.md (written by `icc cards`); the Space sources default to
hub_cards/space/. Uploading needs a Hub token (`hf auth login` or HF_TOKEN).
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kind", required=True, choices=upload.KINDS)
    parser.add_argument("--repo-id", required=True, help="ORG/NAME on the Hub")
    parser.add_argument(
        "--model",
        help="kind model: a student folder or Hub id (re-saved in the icc format, see `icc convert`), "
        "or a model shipped in the package (lite: its card alone)",
    )
    parser.add_argument(
        "--data", help="teacher-score parquet file or folder, or 'benchmark' for the shipped dev split (kind dataset)"
    )
    parser.add_argument("--card", help="card to upload as README.md (default: hub_cards/NAME/README.md)")
    parser.add_argument("--source", default=str(upload.SPACE_SOURCE), help="Space sources (kind space)")
    parser.add_argument("--dry-run", metavar="DIR", help="build and check into DIR (new or empty); upload nothing")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--token", default=None, help="Hub token (default: the logged-in token or HF_TOKEN)")


def run(args: argparse.Namespace) -> int:
    repo_id = upload.check_repo_id(args.repo_id)
    if args.kind in ("space", "metric"):  # the folder's check builds its Gradio app
        require([(f"icc push --kind {args.kind}", GRADIO)])
    if not args.dry_run:
        check_can_upload(args.token)
    if args.dry_run:
        return _build_and_report(args, repo_id, upload.prepare_output(args.dry_run))
    with tempfile.TemporaryDirectory(prefix="icc-push-") as temp:
        return _build_and_report(args, repo_id, Path(temp))


def check_can_upload(token: str | None) -> None:
    """Fail in seconds, before building, when an upload cannot succeed."""
    if hf_constants.HF_HUB_OFFLINE:
        raise UserInputError("HF_HUB_OFFLINE is set, so nothing can be uploaded; use --dry-run DIR to build and check")
    if not (token or get_token()):
        raise UserInputError("no Hub token: run `hf auth login`, set HF_TOKEN or pass --token (or use --dry-run DIR)")
    if not hub_reachable():
        raise UserInputError(f"cannot reach the Hub at {hf_constants.ENDPOINT}; use --dry-run DIR to build and check")


def _build_and_report(args: argparse.Namespace, repo_id: str, folder: Path) -> int:
    build(args, repo_id, folder)
    checks = upload.validate_folder(folder, args.kind)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        print(f"{path.stat().st_size:>12,}  {path.relative_to(folder)}", file=sys.stderr)
    for check in checks:
        print(f"icc: ok: {check}", file=sys.stderr)
    if args.dry_run:
        print(f"icc: dry run: {args.kind} folder for {repo_id} built and checked at {folder}; nothing uploaded")
        return 0
    try:
        url = upload.upload_folder(folder, repo_id, args.kind, private=args.private, token=args.token)
    except (OSError, HfHubHTTPError) as error:
        raise UserInputError(f"upload to {repo_id} failed: {error}") from None
    print(f"icc: uploaded {args.kind} to {url}")
    return 0


def build(args: argparse.Namespace, repo_id: str, folder: Path) -> Path:
    card = args.card or default_card(args, repo_id)
    if args.kind == "model":
        if not args.model:
            raise UserInputError("--kind model needs --model FOLDER (a saved student, or lite)")
        return upload.build_model_folder(args.model, card, folder)
    if args.kind == "dataset":
        if not args.data:
            raise UserInputError("--kind dataset needs --data (parquet file or folder, or 'benchmark')")
        if args.data == "benchmark":
            return upload.build_benchmark_dataset_folder(card, folder)
        return upload.build_teacher_dataset_folder(upload.parquet_inputs(args.data), card, folder)
    if args.kind == "space":
        return upload.build_space_folder(folder, args.source)
    return upload.build_metric_folder(repo_id, folder)


def default_card(args: argparse.Namespace, repo_id: str) -> str:
    """The teacher-score folder's own card (the pipeline writes one), else ``hub_cards/NAME/README.md``."""
    own = Path(args.data) / "README.md" if args.kind == "dataset" and args.data and args.data != "benchmark" else None
    if own is not None and own.is_file():
        return str(own)
    return str(HUB_CARDS_DIR / repo_id.split("/")[-1] / "README.md")

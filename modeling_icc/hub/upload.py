"""Build the exact folder a Hub repository receives, check it offline, then upload it.

Kinds: ``model`` (safetensors, config with ``auto_map``, our modeling code for
``trust_remote_code`` users, tokenizer, card), ``dataset`` (parquet under ``data/`` +
card), ``space`` (the demo: app, requirements, README, and the ``modeling_icc`` source it
runs on) and ``metric`` (the ``evaluate`` module as a Space). Nothing touches the network
until :func:`upload_folder`.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from huggingface_hub import DatasetCard, HfApi, ModelCard, RepoCard
from huggingface_hub.utils import HFValidationError, validate_repo_id
from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from ..scoring.load import LITE_MODEL_ID, ZERO_DOWNLOAD_MODELS, load_scorer
from ..utils.atomic_files import copy_file, write_bytes
from ..utils.errors import UserInputError
from ..utils.shipped_data import paper_examples
from ..version import DISTRIBUTION
from .cards import ZERO_DOWNLOAD_CARD_KEY
from .convert import convert_student
from .folders import write_benchmark_data, zero_download_files
from .fresh_process import remote_code_scores, run_python
from .measurement import metric_path

KINDS = ("model", "dataset", "space", "metric")
REPO_TYPES = {"model": "model", "dataset": "dataset", "space": "space", "metric": "space"}
#: Keys a card's YAML header must have, per kind.
REQUIRED_CARD_KEYS = {
    "model": ("license", "language", "library_name", "pipeline_tag", "model-index"),
    "dataset": ("license", "language", "pretty_name", "task_categories", "configs"),
    "space": ("title", "sdk", "sdk_version", "app_file"),
    "metric": ("title", "sdk", "sdk_version", "app_file", "tags"),
}
#: Where the Space sources live in a checkout of the repository.
SPACE_SOURCE = Path("hub_cards") / "space"
#: Package code files the Spaces run on are copied without these.
_PACKAGE_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "testing")


def check_repo_id(repo_id: str) -> str:
    if repo_id.count("/") != 1:
        raise UserInputError(f"--repo-id must be ORG/NAME, got {repo_id!r}")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as error:
        raise UserInputError(f"invalid --repo-id {repo_id!r}: {error}") from None
    return repo_id


def prepare_output(folder: str | os.PathLike) -> Path:
    """An empty folder to build into (refuses to mix with existing files)."""
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise UserInputError(f"{folder} is not empty; pass a new or empty folder")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _copy_card(card: str | os.PathLike, folder: Path) -> None:
    card = Path(card)
    if not card.is_file():
        raise UserInputError(f"card not found: {card} (generate it with `icc cards`)")
    copy_file(card, folder / "README.md")


# -- building -------------------------------------------------------------------------


def build_model_folder(model: str | os.PathLike, card: str | os.PathLike, folder: Path) -> Path:
    """A student re-saved in our format (:func:`~.convert.convert_student`: safetensors, ``auto_map``,
    code, tokenizer, its ``icc_provenance.json``) with its card; or, for a model shipped in the
    package (``"mini"``, ``"lite"``), its repository as ``icc cards`` writes it: card, config and
    trained parts (mini's base encoder is named by Hub id and revision, not copied).

    Re-saving also converts published-format (``RobertaForSequenceClassification``)
    checkpoints, so every upload has the same layout, and leaves training leftovers such as
    the pickled ``training_args.bin`` behind.
    """
    _copy_card(card, folder)  # checked before any model is loaded
    if os.fspath(model) in ZERO_DOWNLOAD_MODELS:
        for name, data in zero_download_files(os.fspath(model)).items():
            write_bytes(folder / name, data)
    else:
        convert_student(model, folder)
    return folder


def build_teacher_dataset_folder(
    parquet_files: Sequence[str | os.PathLike], card: str | os.PathLike, folder: Path
) -> Path:
    """Parquet shards as ``data/train-0000i-of-0000n.parquet`` (the card's ``configs``) + card."""
    if not parquet_files:
        raise UserInputError("--data: give the teacher-score parquet file(s) or folder")
    data = folder / "data"
    data.mkdir()
    total = len(parquet_files)
    for index, file in enumerate(parquet_files):
        copy_file(file, data / f"train-{index:05d}-of-{total:05d}.parquet")
    _copy_card(card, folder)
    return folder


def build_benchmark_dataset_folder(card: str | os.PathLike, folder: Path) -> Path:
    """The shipped development split as ``data/dev.csv`` (what ``icc cards`` writes) + card."""
    write_benchmark_data(folder)
    _copy_card(card, folder)
    return folder


def build_space_folder(folder: Path, source: str | os.PathLike = SPACE_SOURCE) -> Path:
    """The demo Space: ``app.py``, ``requirements.txt``, ``README.md`` and ``modeling_icc/``."""
    source = Path(source)
    missing = [name for name in ("app.py", "requirements.txt", "README.md") if not (source / name).is_file()]
    if missing:
        raise UserInputError(f"{source} lacks {', '.join(missing)}; run from the repository root or pass --source")
    for name in ("app.py", "requirements.txt", "README.md"):
        copy_file(source / name, folder / name)
    _copy_package(folder)
    return folder


def build_metric_folder(repo_id: str, folder: Path) -> Path:
    """The ``evaluate`` module as a Space: the script renamed to ``<NAME>.py`` (evaluate needs
    the script and the Space to share a name), its card, app and requirements, and our code."""
    source = Path(metric_path())
    name = repo_id.split("/")[-1]
    copy_file(source / "icc_metric.py", folder / f"{name}.py")
    for file in ("README.md", "app.py", "requirements.txt"):
        copy_file(source / file, folder / file)
    _copy_package(folder)
    return folder


def _copy_package(folder: Path) -> None:
    package = Path(__file__).resolve().parents[1]
    shutil.copytree(package, folder / package.name, ignore=_PACKAGE_IGNORE)


def parquet_inputs(path: str | os.PathLike) -> list[Path]:
    """A parquet file, or every ``*.parquet`` in a folder (sorted, so shard order is stable)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.rglob("*.parquet"))
        if not files:
            raise UserInputError(f"no .parquet files under {path}")
        return files
    if path.suffix != ".parquet" or not path.is_file():
        raise UserInputError(f"{path}: expected a .parquet file or a folder of them")
    return [path]


# -- validating -----------------------------------------------------------------------


def validate_card(folder: Path, kind: str) -> RepoCard:
    """The README parses as a card of the right type and its YAML holds the required keys.

    A model card of a model shipped in the package (YAML key ``icc_zero_download``) needs no
    ``model-index``: such a model may have no held-out figure to report.
    """
    readme = folder / "README.md"
    if not readme.is_file():
        raise UserInputError(f"{folder} has no README.md")
    card_class = {"model": ModelCard, "dataset": DatasetCard}.get(kind, RepoCard)
    try:
        card = card_class.load(readme, repo_type=REPO_TYPES[kind], ignore_metadata_errors=False)
    except (ValueError, TypeError) as error:
        raise UserInputError(f"{readme}: card does not parse ({error})") from None
    metadata_dict = card.data.to_dict()
    missing = [key for key in required_card_keys(card, kind) if not metadata_dict.get(key)]
    if missing:
        raise UserInputError(f"{readme}: YAML header lacks {', '.join(missing)}")
    if "model-index" in required_card_keys(card, kind) and not card.data.eval_results:
        raise UserInputError(f"{readme}: model-index holds no results")
    return card


def required_card_keys(card: RepoCard, kind: str) -> tuple[str, ...]:
    if kind == "model" and card.data.get(ZERO_DOWNLOAD_CARD_KEY):
        return tuple(key for key in REQUIRED_CARD_KEYS[kind] if key != "model-index")
    return REQUIRED_CARD_KEYS[kind]


def validate_folder(folder: Path, kind: str) -> list[str]:
    """Every offline check for ``kind``; returns what was checked, raises on the first failure."""
    card = validate_card(folder, kind)
    checks = [f"README.md parses as a {REPO_TYPES[kind]} card with {', '.join(required_card_keys(card, kind))}"]
    if kind == "model" and card.data.get(ZERO_DOWNLOAD_CARD_KEY):
        checks += _validate_zero_download_model(folder, card.data.get(ZERO_DOWNLOAD_CARD_KEY))
    elif kind == "model":
        checks += _validate_model(folder)
    elif kind == "dataset":
        checks += _validate_dataset(folder, card)
    else:
        checks += _validate_space(folder, card, kind)
    return checks


def _validate_model(folder: Path) -> list[str]:
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    for auto_class, reference in config.get("auto_map", {}).items():
        module = reference.split(".")[0]
        if not (folder / f"{module}.py").is_file():
            raise UserInputError(f"auto_map {auto_class} points to {module}.py, which is not in the folder")
    if not (folder / "model.safetensors").is_file() or list(folder.glob("*.bin")):
        raise UserInputError(f"{folder}: weights must be model.safetensors only")
    texts = [row["caption"] for row in paper_examples()[:4]]
    ours = load_scorer(folder, device="cpu", dtype="float32").score(texts, raw=True)
    remote = remote_code_scores(folder, texts)
    if not np.allclose(ours, remote, atol=1e-4):
        raise UserInputError(f"remote-code scores {remote} differ from load_scorer's {ours.tolist()}")
    return [
        "model.safetensors only; auto_map files present",
        "load_scorer(folder) scores captions",
        "AutoModel.from_pretrained(folder, trust_remote_code=True) in a fresh process gives the same scores",
    ]


def _validate_zero_download_model(folder: Path, name: str) -> list[str]:
    """The repository of a model shipped in the package: exactly its files, and loaded from the folder
    it scores as the shipped model does."""
    if name not in ZERO_DOWNLOAD_MODELS:
        raise UserInputError(f"README.md names {name!r}, which is not a model shipped in the package")
    files = zero_download_files(name)
    expected = {"README.md", *files}
    present = {path.name for path in folder.iterdir()}
    if present != expected:
        raise UserInputError(f"{folder}: the {name} repository holds {sorted(expected)}, not {sorted(present)}")
    texts = [row["caption"] for row in paper_examples()]
    shipped = load_scorer(name).score(texts)
    if not np.isfinite(shipped).all():
        raise UserInputError(f"load_scorer({name!r}) did not score the paper's captions: {shipped.tolist()}")
    if not files:
        return [f"load_scorer({name!r}) scores captions; the folder holds the card alone"]
    if not np.array_equal(load_scorer(folder).score(texts), shipped):
        raise UserInputError(f"load_scorer(folder) does not score the paper's captions as load_scorer({name!r}) does")
    return [f"{', '.join(sorted(expected))}; load_scorer(folder) gives load_scorer({name!r})'s scores"]


def _app_builds(folder: Path, app_file: str) -> str:
    """Run the Space's app file (without launching) as the Space will: from its folder, on the
    ``modeling_icc`` copy shipped there; returns where ``modeling_icc`` was imported from."""
    program = (
        "import json, runpy, sys\n"
        "namespace = runpy.run_path(sys.argv[1])\n"
        "import gradio, modeling_icc\n"
        "assert isinstance(namespace.get('demo'), gradio.Blocks), 'app.py defines no gradio Blocks named demo'\n"
        "print(json.dumps(modeling_icc.__file__))\n"
    )
    return json.loads(run_python(program, [app_file], cwd=folder, what=f"running {app_file}"))


def _validate_dataset(folder: Path, card: RepoCard) -> list[str]:
    """Every ``configs`` entry matches files, and ``datasets`` loads the folder as the Hub will."""
    import datasets

    checks = []
    for config in card.data.to_dict()["configs"]:
        name = config.get("config_name", "default")
        expected = {}
        for entry in config.get("data_files", []):
            files = sorted(folder.glob(entry["path"]))
            if not files:
                raise UserInputError(f"configs: {entry['path']} matches no file in {folder}")
            expected[entry["split"]] = sum(map(_rows_in, files))
        with tempfile.TemporaryDirectory() as cache:
            loaded = datasets.load_dataset(str(folder), name, cache_dir=cache)
            got = {split: loaded[split].num_rows for split in loaded}
        if got != expected:
            raise UserInputError(f"datasets.load_dataset({folder}) gave splits {got}, the files hold {expected}")
        checks.append(f"config {name!r} loads with datasets: " + ", ".join(f"{s} {n:,} rows" for s, n in got.items()))
    return checks


def _rows_in(file: Path) -> int:
    """Rows of a data file the Hub reads: Parquet (from its metadata) or CSV (records after the header)."""
    if file.suffix == ".csv":
        with file.open(newline="", encoding="utf-8") as handle:
            return sum(1 for _ in csv.reader(handle)) - 1
    return pq.read_metadata(file).num_rows


def _validate_space(folder: Path, card: RepoCard, kind: str) -> list[str]:
    data = card.data.to_dict()
    if data["sdk"] != "gradio":
        raise UserInputError(f"README.md: sdk must be gradio, got {data['sdk']!r}")
    try:
        sdk_version = Version(str(data["sdk_version"]))
    except InvalidVersion:
        raise UserInputError(f"README.md: sdk_version {data['sdk_version']!r} is not a version") from None
    app = folder / data["app_file"]
    if not app.is_file():
        raise UserInputError(f"README.md: app_file {data['app_file']} is not in the folder")
    try:
        compile(app.read_text(encoding="utf-8"), str(app), "exec")  # no __pycache__ left in the upload
    except SyntaxError as error:
        raise UserInputError(f"{app.name} does not compile: {error}") from None
    requirements = _read_requirements(folder / "requirements.txt")
    missing = [name for name in space_requirement_names() if name not in requirements]
    if missing:
        raise UserInputError(f"requirements.txt lacks {', '.join(missing)}")
    if not requirements["gradio"].specifier.contains(sdk_version, prereleases=True):
        raise UserInputError(f"sdk_version {sdk_version} does not satisfy requirements.txt's {requirements['gradio']}")
    if not (folder / "modeling_icc" / "__init__.py").is_file():
        raise UserInputError(f"{folder} lacks the modeling_icc package the app imports")
    imported_from = Path(_app_builds(folder, data["app_file"])).resolve()
    if folder.resolve() not in imported_from.parents:
        raise UserInputError(f"{data['app_file']} imported modeling_icc from {imported_from}, not from the folder")
    checks = [
        f"gradio Space, sdk_version {sdk_version}, {data['app_file']} compiles",
        "requirements.txt complete",
        f"{data['app_file']} builds its gradio demo in a fresh process on the shipped modeling_icc",
    ]
    if kind == "metric":
        checks.append(_validate_metric_script(folder))
    return checks


def _validate_metric_script(folder: Path) -> str:
    import evaluate

    from .measurement import module_script

    script = module_script(folder)
    module = evaluate.load(str(script), LITE_MODEL_ID)
    result = module.compute(predictions=["a man with a white shirt"])
    if len(result["icc_scores"]) != 1 or result["icc_model"] != LITE_MODEL_ID:
        raise UserInputError(f"{script.name}: compute() returned {result}")
    return f"evaluate.load('{script.name}', {LITE_MODEL_ID!r}) computes offline"


def _read_requirements(path: Path) -> dict[str, Requirement]:
    if not path.is_file():
        raise UserInputError(f"{path.parent} has no requirements.txt")
    lines = [line.split("#")[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    requirements = [Requirement(line) for line in lines if line]
    return {requirement.name.lower().replace("_", "-"): requirement for requirement in requirements}


def space_requirement_names() -> list[str]:
    """Distributions a Space running ``modeling_icc`` needs: the package's core deps and its ``space`` extra's,
    with the extras that one names of this package (``icc-concreteness[parquet]``) read in turn."""
    specs = [Requirement(spec) for spec in metadata.requires(DISTRIBUTION) or []]
    names: list[str] = []
    extras, seen = ["space"], set()
    while extras:
        extra = extras.pop()
        seen.add(extra)
        for requirement in specs:
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
                continue
            if requirement.name == DISTRIBUTION:
                extras += sorted(set(requirement.extras) - seen)
            else:
                names.append(requirement.name.lower().replace("_", "-"))
    return list(dict.fromkeys(names))


# -- uploading ------------------------------------------------------------------------


def upload_folder(folder: Path, repo_id: str, kind: str, *, private: bool = False, token: str | None = None) -> str:
    """Create the repository if needed and upload ``folder`` in one commit; returns the commit URL."""
    api = HfApi(token=token)
    repo_type = REPO_TYPES[kind]
    api.create_repo(
        repo_id,
        repo_type=repo_type,
        private=private,
        exist_ok=True,
        space_sdk="gradio" if repo_type == "space" else None,
    )
    commit = api.upload_folder(
        repo_id=repo_id,
        folder_path=folder,
        repo_type=repo_type,
        commit_message=f"Upload {kind} with `icc push`",
    )
    return commit.commit_url

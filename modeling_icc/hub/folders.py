"""The push-ready folders under ``hub_cards/``, one per Hub repository, written from measured
results and the repository's files by ``icc cards --all``.

Files are written only when their content changes, so a regenerated tree shows in
``git diff`` exactly where a result moved, and committed links (the metric Space's files
point into ``icc_metric/``, the student's code files into the package) stay links.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from ..scoring.load import LITE_MODEL_ID, MINI_MODEL_ID, PUBLISHED_MODEL_ID, ZERO_DOWNLOAD_MODELS
from ..utils.atomic_files import write_bytes, write_text
from ..utils.errors import UserInputError
from .cards import (
    BENCHMARK_DATA_FILE,
    benchmark_data_csv,
    benchmark_dataset_card,
    published_student_card,
    zero_download_card,
)
from .results_schema import BenchResults, read_speed_results
from .student_format import write_student_skeleton

#: Where the folders live in a checkout (``icc cards --output-dir`` and ``icc push --card`` defaults).
HUB_CARDS_DIR = Path("hub_cards")
#: Repository names under a namespace; each folder under ``hub_cards/`` has its repository's name.
MODEL_NAME = "icc-distilroberta"
TEACHER_DATASET_NAME = "icc-teacher-scores"
BENCHMARK_DATASET_NAME = "icc-caption-concreteness"
METRIC_NAME = "icc"
#: The speed results the published student's card quotes (``benchmarks/speed/student_throughput.py``).
STUDENT_SPEED_FILE = "student_throughput_cpu.json"
#: In the student's folder: how to add the weights this repository does not hold.
WEIGHTS_NOTE = "WEIGHTS.md"


def zero_download_name(name: str) -> str:
    """The repository (and folder) name of a model shipped in the package: ``icc-lite``."""
    return f"icc-{name}"


def write_if_changed(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically, unless it already holds exactly that."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return path
    return write_text(path, text)


def write_bytes_if_changed(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, unless it already holds exactly that (a committed link to
    the package's file stays a link)."""
    if path.is_file() and path.read_bytes() == data:
        return path
    return write_bytes(path, data)


def zero_download_files(name: str) -> dict[str, bytes]:
    """The files of a zero-download model's repository besides its card: config and trained parts,
    from the files shipped in the package (mini: the heads and the base encoder's Hub id and revision;
    lite: its weights and lexicon). A model without a repository layout is published as its card alone."""
    if name == MINI_MODEL_ID:
        from ..models.mini.repository import folder_files

        return folder_files()
    if name == LITE_MODEL_ID:
        from ..models.lite.folder import folder_files

        return folder_files()
    return {}


def write_card(text: str, folder: Path) -> Path:
    """``folder/README.md``."""
    return write_if_changed(folder / "README.md", text if text.endswith("\n") else text + "\n")


def write_benchmark_data(folder: Path) -> Path:
    return write_if_changed(folder / BENCHMARK_DATA_FILE, benchmark_data_csv())


def write_benchmark_folder(folder: Path, repo_id: str, bench: BenchResults | None) -> list[Path]:
    """The benchmark dataset: card and data file."""
    return [write_card(str(benchmark_dataset_card(repo_id, bench)), folder), write_benchmark_data(folder)]


def write_student_folder(folder: Path, namespace: str, bench: BenchResults, results_dir: Path) -> list[Path]:
    """The published student's repository without its weights and tokenizer: card, config, code,
    and the note that says how to add the rest."""
    repo_id = f"{namespace}/{MODEL_NAME}"
    card = published_student_card(
        repo_id,
        bench,
        read_speed_results(results_dir / STUDENT_SPEED_FILE),
        metric_repo_id=f"{namespace}/{METRIC_NAME}",
        benchmark_dataset=f"{namespace}/{BENCHMARK_DATASET_NAME}",
    )
    written = [write_card(str(card), folder)]
    with tempfile.TemporaryDirectory() as scratch:
        for file in write_student_skeleton(Path(scratch)):
            written.append(write_if_changed(folder / file.name, file.read_text(encoding="utf-8")))
    written.append(write_if_changed(folder / WEIGHTS_NOTE, weights_note(repo_id)))
    return written


def weights_note(repo_id: str) -> str:
    converted, card = Path("outputs") / MODEL_NAME, HUB_CARDS_DIR / MODEL_NAME / "README.md"
    return (
        "# Adding the weights\n\n"
        f"This folder holds what `icc push` uploads to `{repo_id}` except the weights and the tokenizer,\n"
        f"which are not in this repository: they are those of `{PUBLISHED_MODEL_ID}`. Where the Hub is reachable:\n\n"
        "```bash\n"
        f"hf download {PUBLISHED_MODEL_ID}\n"
        f"icc convert --model {PUBLISHED_MODEL_ID} --output {converted} --card {card}\n"
        f"icc push --kind model --repo-id {repo_id} --model {converted}\n"
        "```\n\n"
        "`icc convert` writes safetensors, this config and code, and the tokenizer, and checks that the\n"
        "converted model (loaded by `icc` and by `transformers` with `trust_remote_code=True` alone) gives\n"
        f"the raw scores of `{PUBLISHED_MODEL_ID}`. A download that holds only pickle weights\n"
        "(`pytorch_model.bin`) is refused with the one-line command that converts it.\n"
    )


def write_zero_download_folder(
    folder: Path, name: str, namespace: str, bench: BenchResults, results_dir: Path
) -> list[Path]:
    """The repository of a model shipped in the package: its card, config and trained parts."""
    if name not in ZERO_DOWNLOAD_MODELS:
        raise UserInputError(f"{name!r} is not a model shipped in the package ({', '.join(ZERO_DOWNLOAD_MODELS)})")
    speed_files = [results_dir / f"{name}_throughput{suffix}.json" for suffix in ("", "_cpu")]
    speed_file = next((path for path in speed_files if path.is_file()), None)
    speed = read_speed_results(speed_file) if speed_file else None
    if speed:  # a throughput run may time other models beside this one (mini's times lite too)
        others = [other for other in ZERO_DOWNLOAD_MODELS if other != name]
        rates = {key: rate for key, rate in speed.rates.items() if not any(other in key for other in others)}
        speed = dataclasses.replace(speed, rates=rates)
    card = zero_download_card(
        name,
        f"{namespace}/{zero_download_name(name)}",
        bench,
        speed,
        metric_repo_id=f"{namespace}/{METRIC_NAME}",
        benchmark_dataset=f"{namespace}/{BENCHMARK_DATASET_NAME}",
    )
    files = [write_bytes_if_changed(folder / file, data) for file, data in zero_download_files(name).items()]
    return [write_card(str(card), folder), *files]


def write_all(namespace: str, output_dir: Path, bench: BenchResults, results_dir: Path) -> list[Path]:
    """Every folder the repository's own files and results can build (``icc cards --all``): the
    published student, each zero-download model with results, the benchmark dataset."""
    written = write_student_folder(output_dir / MODEL_NAME, namespace, bench, results_dir)
    for name in ZERO_DOWNLOAD_MODELS:
        if bench.for_scorer(name):
            written += write_zero_download_folder(
                output_dir / zero_download_name(name), name, namespace, bench, results_dir
            )
    written += write_benchmark_folder(
        output_dir / BENCHMARK_DATASET_NAME, f"{namespace}/{BENCHMARK_DATASET_NAME}", bench
    )
    return written

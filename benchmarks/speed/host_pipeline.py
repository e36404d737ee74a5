"""How fast can this host feed a GPU? The scorer's host-side work with the model replaced by a no-op.

``NeuralScorer.score`` checks and de-duplicates the captions, tokenizes them into packed int32 arrays
(in ``tokenize_workers`` processes), sorts each chunk by length, plans batches under the GPU token
budget, pads them in NumPy and puts the scores back in input order. On a GPU this host work, not the
model, can set the pace (on one H200: 172,780 captions/s end to end against 215,796/s for the model
alone, ``results/gpu_end_to_end_cuda.json``).
This times that pipeline with a model that returns zeros, with GPU batch limits (1,024 rows, 65,536
tokens, widths rounded to 8), for 0, 1, ... all-cores tokenizer workers in one run, and, for
comparison, the tokenizer alone: the ``transformers`` call, the Rust ``encode_batch_fast`` and the
worker pool without the rest of the pipeline. Pinned memory and the host-to-device copies need CUDA
and are not exercised here (``benchmarks/speed/gpu_end_to_end.py`` measures them on a GPU).

From the runs it derives what a 16-core GPU host would do: the rate of one worker (per core), the
scaling efficiency from 1 worker to all cores (rate / (workers x one worker's rate)), and
per-core rate x efficiency x 16, against the 150,000 captions/s goal. The scoring process itself
does part of the work for every caption (checks, de-duplication, packing the text for the workers,
padding, scatter) whatever the number of workers; its CPU time per caption, measured, bounds the
rate any number of workers can reach, and is reported as ``main_process_ceiling_captions_per_s``.

The same at all cores for ``icc score --input N.txt --output out.parquet``'s path (``run_single_file``:
Arrow blocks read from the text file, scored, written to Parquet), against the 100,000 rows/s goal
of the file path: its scoring-process CPU time per row, reading and writing included, bounds it the
same way (``file_path_main_process_ceiling_captions_per_s``).

Captions: CC3M validation captions copied with one word swapped per copy (``cc3m_copies``, mean
13 tokens), as in ``gpu_end_to_end.py``; all-MiniLM-L6-v2's WordPiece tokenizer stands in for RoBERTa's BPE.

    python benchmarks/speed/host_pipeline.py --n 1000000 --repeats 3     # a GPU host
    python benchmarks/speed/host_pipeline.py --n 200000 --repeats 3      # this project's 2-core CPU
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from cc3m_copies import cc3m_copies
from result_file import write_result

from modeling_icc import NeuralScorer
from modeling_icc.curation.engines.job import Job
from modeling_icc.curation.engines.single_file import run_single_file
from modeling_icc.models.icc.modeling_icc import ICCForConcreteness
from modeling_icc.scoring.chunks import CHUNK_SIZE
from modeling_icc.scoring.languages import forget_languages
from modeling_icc.scoring.neural import default_batch_limits
from modeling_icc.scoring.tokenize_workers import (
    PackedTokens,
    TokenizerSpec,
    encode_packed,
    shutdown_pools,
    tokenizer_pool,
    usable_cores,
)
from modeling_icc.testing import distilroberta_config
from modeling_icc.utils.provenance import cpu_kind, cpu_name, stand_in_tokenizer

RESULTS = Path(__file__).resolve().parent / "results"
GOAL_CAPTIONS_PER_S = 150_000
#: The goal for ``icc score`` file -> Parquet on one GPU.
FILE_GOAL_CAPTIONS_PER_S = 100_000
GPU_HOST_CORES = 16


class HostOnlyScorer(NeuralScorer):
    """The scorer's host pipeline with a model that costs nothing."""

    def _forward(self) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        return lambda input_ids, attention_mask: torch.zeros(input_ids.shape[0])


def children_cpu_seconds() -> float:
    """CPU seconds used so far by this process's live child processes, the tokenizer workers (user + system)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text(encoding="ascii", errors="replace").rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == os.getpid():  # ppid
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of /proc/PID/stat)
    return total / os.sysconf("SC_CLK_TCK")


def timed(run: Callable[[], object], repeats: int) -> dict:
    """Medians of ``repeats`` runs after one untimed warm-up: wall seconds, CPU seconds of this process and of
    its tokenizer workers (CPU time does not grow when other jobs share the cores; wall time does)."""
    run()
    walls, cpus, workers = [], [], []
    for _ in range(repeats):
        wall, cpu, child = time.perf_counter(), time.process_time(), children_cpu_seconds()
        run()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        workers.append(children_cpu_seconds() - child)
    return {
        "wall_s": float(np.median(walls)),
        "main_process_cpu_s": float(np.median(cpus)),
        "workers_cpu_s": float(np.median(workers)),
        "runs_wall_s": walls,
        "load_average_1min_after": os.getloadavg()[0],
    }


def pool_alone(spec: TokenizerSpec, workers: int, captions: list[str]) -> Callable[[], list[PackedTokens]]:
    """Every caption through the worker pool in chunk-sized tasks, results gathered (no batching)."""
    pool = tokenizer_pool(spec, workers)
    task = max(512, CHUNK_SIZE // workers)

    def run() -> list[PackedTokens]:
        futures = [pool.submit(captions[start : start + task]) for start in range(0, len(captions), task)]
        return [future.result() for future in futures]

    return run


def afresh(run: Callable[[], object]) -> Callable[[], object]:
    """``run`` with the languages remembered forgotten first: each run names every caption, as a new job does."""

    def run_afresh() -> object:
        forget_languages()
        return run()

    return run_afresh


def text_to_parquet_job(captions: list[str], folder: Path) -> Job:
    """``icc score --input N.txt --output out.parquet``'s job over ``captions`` (written once to ``folder``)."""
    source = folder / "captions.txt"
    source.write_text("\n".join(captions) + "\n", encoding="utf-8")
    return Job.of_file(source, "txt", folder / "scored.parquet", "parquet", progress=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000, help="captions per timed run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-workers", type=int, default=None, help="default: the usable cores")
    parser.add_argument("--out", type=Path, default=RESULTS / "host_pipeline.json")
    args = parser.parse_args()
    cores = usable_cores()
    top = args.max_workers or cores

    tokenizer = stand_in_tokenizer()
    config = distilroberta_config()
    config.pad_token_id = tokenizer.pad_token_id
    model = ICCForConcreteness(config).eval()
    captions = cc3m_copies(args.n, seed=0)
    rows, tokens = default_batch_limits(torch.device("cuda"))
    spec = TokenizerSpec.from_pretrained_tokenizer(tokenizer, 512)
    lengths = encode_packed(spec.build(), captions[:20_000]).lengths

    results: dict[str, dict] = {}

    def record(name: str, run: Callable[[], object]) -> None:
        row = timed(run, args.repeats)
        row["captions_per_s"] = args.n / row["wall_s"]
        results[name] = row
        print(
            f"{name:32s} {row['captions_per_s']:10,.0f} captions/s (CPU s: scoring process "
            f"{row['main_process_cpu_s']:.2f}, workers {row['workers_cpu_s']:.2f})"
        )

    record(
        "tokenizer_call_transformers",
        lambda: tokenizer(captions, truncation=True, max_length=512, return_attention_mask=False),
    )
    rust = spec.build()
    record("rust_encode_batch_fast_packed", lambda: encode_packed(rust, captions))
    for workers in range(1, top + 1):
        record(f"worker_pool_alone_{workers}", pool_alone(spec, workers, captions))
        shutdown_pools()
    for workers in range(0, top + 1):
        scorer = HostOnlyScorer(
            model,
            tokenizer,
            model_id="none",
            progress=False,
            batch_size=rows,
            max_batch_tokens=tokens,
            tokenize_workers=workers,
        )
        scorer.pad_multiple = 8
        record(f"pipeline_workers_{workers}", afresh(lambda scorer=scorer: scorer.score(captions, raw=True)))
        if workers == top:
            with tempfile.TemporaryDirectory() as folder:
                job = text_to_parquet_job(captions, Path(folder))
                record(
                    f"file_to_parquet_workers_{workers}",
                    afresh(lambda job=job, scorer=scorer: run_single_file(job, lambda: scorer)),
                )
            scorer.languages = None  # the scorer as it was before each caption's language was named
            record(f"pipeline_workers_{workers}_without_language_step", lambda s=scorer: s.score(captions, raw=True))
        shutdown_pools()  # the next worker count starts its own pool

    one, full = results["pipeline_workers_1"], results[f"pipeline_workers_{top}"]
    per_core_cpu = args.n / one["workers_cpu_s"]
    efficiency_wall = full["captions_per_s"] / (top * one["captions_per_s"])
    efficiency_cpu = one["workers_cpu_s"] / full["workers_cpu_s"]
    ceiling = args.n / full["main_process_cpu_s"]
    file_path = results[f"file_to_parquet_workers_{top}"]
    without_step = results[f"pipeline_workers_{top}_without_language_step"]
    summary = {
        "per_core_captions_per_s": one["captions_per_s"],
        "per_core_definition": "wall rate of the pipeline with 1 tokenizer worker (scoring process on another core)",
        "per_worker_cpu_second_captions": per_core_cpu,
        "workers_at_all_cores": top,
        "scaling_efficiency_1_to_all_wall": efficiency_wall,
        "scaling_efficiency_1_to_all_cpu": efficiency_cpu,
        "projected_16_core_captions_per_s": one["captions_per_s"] * efficiency_wall * GPU_HOST_CORES,
        "projected_16_core_captions_per_s_cpu_time": per_core_cpu * efficiency_cpu * GPU_HOST_CORES,
        "goal_captions_per_s": GOAL_CAPTIONS_PER_S,
        "main_process_cpu_us_per_caption": 1e6 * full["main_process_cpu_s"] / args.n,
        "main_process_ceiling_captions_per_s": ceiling,
        "main_process_cpu_us_per_caption_without_language_step": 1e6 * without_step["main_process_cpu_s"] / args.n,
        "main_process_ceiling_captions_per_s_without_language_step": args.n / without_step["main_process_cpu_s"],
        "file_path_main_process_cpu_us_per_caption": 1e6 * file_path["main_process_cpu_s"] / args.n,
        "file_path_main_process_ceiling_captions_per_s": args.n / file_path["main_process_cpu_s"],
        "file_path_goal_captions_per_s": FILE_GOAL_CAPTIONS_PER_S,
        "notes": [
            "projected_16_core: per-core wall rate x wall scaling efficiency x 16; meaningful on an otherwise idle "
            "host with more cores than workers + 1 (the scoring process needs a core too)",
            "projected_16_core_cpu_time: captions per CPU-second of one worker x (worker CPU at 1 worker / at all) "
            "x 16: what 16 cores give when each runs a worker, unaffected by other jobs on a shared machine",
            "main_process_ceiling: the scoring process's own work per caption caps the rate whatever the workers",
            "without_language_step: the same with the scorer's language step off (languages = None), in the same "
            "run: what naming each caption adds to the scoring process on these English captions",
            "file_path_main_process_ceiling: the same for icc score's text -> Parquet path, reading and writing "
            "included",
        ],
    }
    print(
        f"per core {one['captions_per_s']:,.0f}/s wall, {per_core_cpu:,.0f} per worker CPU-second; efficiency "
        f"{efficiency_wall:.2f} (wall) / {efficiency_cpu:.2f} (CPU); x{GPU_HOST_CORES}: "
        f"{summary['projected_16_core_captions_per_s']:,.0f}/s (wall) / "
        f"{summary['projected_16_core_captions_per_s_cpu_time']:,.0f}/s (CPU time); goal {GOAL_CAPTIONS_PER_S:,}; "
        f"scoring-process ceiling {ceiling:,.0f}/s; text -> Parquet file path "
        f"{summary['file_path_main_process_ceiling_captions_per_s']:,.0f}/s (goal {FILE_GOAL_CAPTIONS_PER_S:,})"
    )
    write_result(
        "host_pipeline",
        args.out,
        results,
        what="NeuralScorer.score's host work with a zero-cost model, GPU batch limits; tokenizer alone for comparison",
        captions={
            "n": args.n,
            "source": "CC3M validation captions, one word swapped per copy (benchmarks/speed/cc3m_copies.py)",
            "mean_tokens": float(lengths.mean()),
        },
        tokenizer="all-MiniLM-L6-v2 WordPiece (stand-in for RoBERTa BPE), truncation at 512",
        batch_limits={"rows": rows, "tokens": tokens, "pad_multiple": 8},
        cpu=f"{cpu_name()} ({cpu_kind()})",
        usable_cores=cores,
        repeats=args.repeats,
        summary=summary,
    )


if __name__ == "__main__":
    main()

"""The host pipeline of the neural scorers: packed Rust tokenization, worker processes, NumPy batching."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from modeling_icc import NeuralScorer, load_scorer
from modeling_icc.cli.main import main
from modeling_icc.curation.engines.run import run_job
from modeling_icc.curation.job_spec import JobSpec, ScoringOptions
from modeling_icc.scoring import chunks, runner
from modeling_icc.scoring.batching import MIN_SPLIT_ROWS, pad_packed, pad_rows, padded_width, plan_batches
from modeling_icc.scoring.languages import ENGLISH_ONLY, caption_language, reads
from modeling_icc.scoring.tokenize_workers import (
    PackedTokens,
    TokenizerSpec,
    encode_packed,
    shutdown_pools,
    tokenizer_pool,
)
from modeling_icc.testing.student import tiny_student, tiny_tokenizer
from modeling_icc.utils.provenance import stand_in_tokenizer, synthetic_captions
from modeling_icc.utils.web_junk import is_web_junk

ROOT = Path(__file__).resolve().parents[1]


def captions() -> list[str]:
    """Ordinary, long (past 128 and 512 tokens), non-ASCII and odd-space captions."""
    return [
        *synthetic_captions(300, seed=3),
        "a dog " * 80,
        "word " * 700,
        "café ünïcode 😂 naïve — “quotes”",
        "tab\tand\u00a0nbsp and\u2028line separator",
        "x",
    ]


@pytest.fixture(autouse=True)
def _stop_pools():
    yield
    shutdown_pools()


@pytest.mark.parametrize("max_length", [16, 128, 512])
def test_packed_ids_equal_the_transformers_call_despite_padding_in_tokenizer_json(max_length):
    """all-MiniLM-L6-v2's tokenizer.json pads and truncates to 128 by itself: the spec overrides both."""
    tokenizer = stand_in_tokenizer()
    assert tokenizer.backend_tokenizer.padding is not None  # the trap this test is about
    texts = captions()
    expected = tokenizer(texts, truncation=True, max_length=max_length, return_attention_mask=False)["input_ids"]
    spec = TokenizerSpec.from_pretrained_tokenizer(tokenizer, max_length)
    packed = encode_packed(spec.build(), texts)
    assert packed.ids.dtype == np.int32 and packed.lengths.dtype == np.int32
    assert packed.lengths.tolist() == [len(ids) for ids in expected]
    assert packed.ids.tolist() == [token for ids in expected for token in ids]
    pooled = tokenizer_pool(spec, 2).submit(texts).result()
    assert pooled.ids.tolist() == packed.ids.tolist() and pooled.lengths.tolist() == packed.lengths.tolist()


def test_a_worker_error_is_raised_to_the_caller_and_the_worker_lives_on():
    tokenizer = tiny_tokenizer()
    pool = tokenizer_pool(TokenizerSpec.from_pretrained_tokenizer(tokenizer, 128), 1)
    with pytest.raises(TypeError, match="tokenizing failed in a worker"):
        pool.submit(["a lone surrogate \ud800"]).result()
    assert pool.submit(["a dog"]).result().ids.tolist() == tokenizer(["a dog"])["input_ids"][0]


def reference_scores(model, tokenizer, texts: list[str]) -> np.ndarray:
    """The scorer's contract computed plainly: the transformers call, padded batches, one forward per batch;
    web junk scores 0.0 without the model, a caption in a language students do not read NaN."""
    out = np.full(len(texts), np.nan, dtype=np.float32)
    valid = [i for i, text in enumerate(texts) if isinstance(text, str) and text.strip()]
    valid = [i for i in valid if reads(caption_language(texts[i]), ENGLISH_ONLY)]
    junk = {i for i in valid if is_web_junk(texts[i])}
    out[sorted(junk)] = 0.0
    valid = [i for i in valid if i not in junk]
    with torch.inference_mode():
        for start in range(0, len(valid), 32):
            rows = valid[start : start + 32]
            batch = tokenizer([texts[i] for i in rows], padding=True, truncation=True, return_tensors="pt")
            out[rows] = model(**batch).raw_scores.float().numpy()
    return out


@pytest.mark.parametrize("workers", [0, 1, 2])
def test_scores_equal_the_plain_path_for_any_number_of_workers(monkeypatch, workers):
    """Same scores, input order, duplicates sharing a score, NaN for blank and non-text captions."""
    monkeypatch.setattr(chunks, "POOL_MIN_CAPTIONS", 0)  # use the pool even for this small input
    monkeypatch.setattr(chunks, "MIN_TASK_SIZE", 7)  # several tasks per chunk, on both workers
    monkeypatch.setattr(chunks, "CHUNK_SIZE", 100)  # several chunks
    tokenizer, model = tiny_tokenizer(), tiny_student()
    texts = [*captions(), "a dog", "", "   ", None, 3, "a dog", *captions()[:50]]
    expected = reference_scores(model, tokenizer, texts)
    scorer = NeuralScorer(model, tokenizer, model_id="tiny", progress=False, tokenize_workers=workers)
    scores = scorer.score(texts, errors="nan", raw=True)
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-5)
    assert np.isnan(scores).tolist() == np.isnan(expected).tolist()
    assert scores[texts.index("a dog")] == scores[len(texts) - 51]


def test_the_default_uses_workers_only_for_an_accelerator(monkeypatch):
    monkeypatch.setattr(runner, "usable_cores", lambda: 16)
    assert runner.default_tokenize_workers(torch.device("cpu")) == 0
    assert runner.default_tokenize_workers(torch.device("cuda")) == 16
    with pytest.raises(ValueError, match="tokenize_workers"):
        NeuralScorer(tiny_student(), tiny_tokenizer(), model_id="tiny", tokenize_workers=-1)


@pytest.mark.dtype_free
def test_workers_start_from_a_script_without_a_main_guard(tmp_path):
    """Worker processes never re-run the caller's script (multiprocessing's spawn and forkserver do)."""
    script = tmp_path / "no_guard.py"
    script.write_text(
        textwrap.dedent(
            """
            from modeling_icc.scoring.tokenize_workers import TokenizerSpec, tokenizer_pool
            from modeling_icc.testing.student import tiny_tokenizer
            print("started")
            spec = TokenizerSpec.from_pretrained_tokenizer(tiny_tokenizer(), 128)
            print(tokenizer_pool(spec, 2).submit(["a", "a a"]).result().lengths.tolist())
            """
        )
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=ROOT, check=True
    )
    assert result.stdout.split() == ["started", "[3,", "4]"], result.stderr


@pytest.mark.dtype_free
def test_the_worker_module_imports_no_torch():
    code = "import sys, modeling_icc.scoring.tokenize_workers; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.strip() == "False"


def row_by_row_batches(lengths: np.ndarray, max_rows: int, max_tokens: int, multiple: int) -> list[tuple[int, int]]:
    """The batching rule one row at a time: rows of one padded width fill batches within the budgets; what is left
    of a width is cut into powers of two, largest first, down to MIN_SPLIT_ROWS, and the rest is one batch."""
    out, start = [], 0
    while start < len(lengths):
        width = padded_width(int(lengths[start]), multiple)
        end = start
        while end < len(lengths) and padded_width(int(lengths[end]), multiple) == width:
            end += 1
        full = 1
        while full < max_rows and (full + 1) * width <= max_tokens:
            full += 1
        while end - start >= full:
            out.append((start, start + full))
            start += full
        size = full
        while start < end:
            if end - start < MIN_SPLIT_ROWS:
                size = end - start  # the rest in one batch
            while size > end - start or (size & (size - 1) and size >= MIN_SPLIT_ROWS):
                size -= 1
            out.append((start, start + size))
            start += size
    return out


@pytest.mark.parametrize("seed", range(5))
def test_vectorized_batch_plan_equals_the_row_by_row_rule(seed):
    rng = np.random.default_rng(seed)
    lengths = np.sort(rng.integers(1, 300, size=int(rng.integers(1, 2000))))
    max_rows, max_tokens, multiple = int(rng.integers(1, 600)), int(rng.integers(8, 9000)), int(rng.choice([1, 8]))
    planned = [(b.start, b.stop) for b in plan_batches(lengths, max_rows, max_tokens, multiple)]
    assert planned == row_by_row_batches(lengths, max_rows, max_tokens, multiple)


def test_padding_packed_ids_equals_padding_lists():
    token_ids = [[0, 5, 2], [0, 5, 6, 7, 2], [0, 2], [0, 9, 9, 9, 9, 9, 9, 9, 9, 2]]
    packed = PackedTokens.from_lists(token_ids)
    for rows in (np.array([1, 0]), np.array([3, 2, 0]), np.array([2])):
        for multiple in (1, 8):
            expected = pad_rows(token_ids, rows, pad_id=1, multiple=multiple)
            got = pad_packed(packed.ids, packed.starts, packed.lengths, rows, pad_id=1, multiple=multiple)
            for a, b in zip(got, expected, strict=True):
                assert a.dtype == np.int64 and a.tolist() == b.tolist()


def test_a_dead_worker_fails_its_callers_and_is_replaced():
    spec = TokenizerSpec.from_pretrained_tokenizer(tiny_tokenizer(), 128)
    pool = tokenizer_pool(spec, 1)
    worker = pool._workers[0]
    worker.process.kill()
    worker._reader.join(timeout=30)
    with pytest.raises(RuntimeError, match="tokenizer worker process exited"):
        pool.submit(["a dog"]).result(timeout=30)
    replaced = tokenizer_pool(spec, 1)
    assert replaced is not pool
    assert len(replaced.submit(["a dog"]).result(timeout=60)) == 1


def test_load_scorer_takes_tokenize_workers_per_call_also_from_the_cache(tiny_student_dir, monkeypatch):
    monkeypatch.setattr(chunks, "POOL_MIN_CAPTIONS", 0)
    cached = load_scorer(tiny_student_dir, "cpu", "float32", cache=True)
    pooled = load_scorer(tiny_student_dir, "cpu", "float32", cache=True, tokenize_workers=2)
    assert pooled.model is cached.model and (cached.tokenize_workers, pooled.tokenize_workers) == (None, 2)
    texts = captions()
    np.testing.assert_allclose(pooled.score(texts), cached.score(texts), rtol=0, atol=1e-6)
    assert load_scorer(tiny_student_dir, "cpu", "float32", tokenize_workers=1).tokenize_workers == 1
    with pytest.raises(ValueError, match="tokenize_workers must be 0 or more"):
        load_scorer(tiny_student_dir, "cpu", tokenize_workers=-1)


def test_mini_scores_the_same_with_tokenizer_workers(monkeypatch):
    monkeypatch.setattr(chunks, "POOL_MIN_CAPTIONS", 0)
    texts = [*captions()[:120], "A Dog ON a Beach", "a dog on a beach"]
    in_process = load_scorer("mini", "cpu", "float32", tokenize_workers=0).score(texts)
    pooled = load_scorer("mini", "cpu", "float32", tokenize_workers=2).score(texts)
    np.testing.assert_allclose(pooled, in_process, rtol=0, atol=1e-6)
    assert pooled[-2] == pooled[-1]  # lower-cased before tokenizing, in either path


def test_the_cli_refuses_a_negative_number_of_tokenizer_workers(capsys):
    assert main(["score", "--model", "lite", "--tokenize-workers", "-1", "a dog"]) == 2
    assert "--tokenize-workers must be 0 or more" in capsys.readouterr().err


def test_a_sharded_job_passes_tokenize_workers_to_its_scorer(tiny_student_dir, tmp_path, monkeypatch):
    from modeling_icc.scoring import options

    seen = []
    original = options.load_scorer

    def spy(*args, **kwargs):
        seen.append(kwargs.get("tokenize_workers"))
        return original(*args, **kwargs)

    monkeypatch.setattr(options, "load_scorer", spy)
    source = tmp_path / "a.txt"
    source.write_text("a dog\nthe meaning of life\n", encoding="utf-8")
    scoring = ScoringOptions(str(tiny_student_dir), device="cpu", tokenize_workers=1)
    spec = JobSpec(inputs=(str(source),), output_dir=str(tmp_path / "out"), scoring=scoring, progress=False)
    assert run_job(spec)["rows"] == 2
    assert seen == [1]

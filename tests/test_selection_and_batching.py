"""Keep rules and length-sorted batching."""

import threading

import datasets
import numpy as np
import pytest
import torch

import modeling_icc.scoring.runner as runner
from modeling_icc import MiniScorer, filter_by_icc
from modeling_icc.cli.main import main
from modeling_icc.curation.selection import KeepRule, keep_mask
from modeling_icc.scoring.batching import (
    MIN_SPLIT_ROWS,
    fill_rows,
    pad_rows,
    padded_width,
    plan_batches,
    shape_bound,
)
from modeling_icc.scoring.chunks import CHUNK_SIZE
from modeling_icc.scoring.neural import default_batch_limits
from modeling_icc.scoring.runner import pad_multiple, run_batches
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.shipped_data import dev_split

SCORES = np.array([0.2, np.nan, 0.9, 0.5, 0.9, 0.7], dtype=np.float32)


def test_threshold_keeps_at_or_above_and_drops_nan():
    np.testing.assert_array_equal(keep_mask(SCORES, KeepRule(threshold=0.5)), [0, 0, 1, 1, 1, 1])


def test_top_k_breaks_ties_by_input_order_and_uses_raw_ranking():
    np.testing.assert_array_equal(keep_mask(SCORES, KeepRule(top_k=1)), [0, 0, 1, 0, 0, 0])
    raw = np.array([0.2, np.nan, 1.1, 0.5, 1.3, 0.7])
    np.testing.assert_array_equal(keep_mask(np.clip(raw, 0, 1), KeepRule(top_k=1), ranking=raw), [0, 0, 0, 0, 1, 0])
    assert keep_mask(SCORES, KeepRule(top_k=100)).sum() == 5


def test_top_fraction_counts_scored_rows_only():
    assert keep_mask(SCORES, KeepRule(top_fraction=0.4)).sum() == 2  # 0.4 * 5 scored rows
    assert keep_mask(SCORES, KeepRule(top_fraction=1.0)).sum() == 5


@pytest.mark.parametrize(
    "kwargs", [{}, {"threshold": 0.5, "top_k": 3}, {"top_fraction": 0.0}, {"top_fraction": 1.5}, {"top_k": -1}]
)
def test_invalid_rules_are_refused(kwargs):
    with pytest.raises(UserInputError):
        KeepRule(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"threshold": float("nan")}, UserInputError, "threshold must be a finite number, got nan"),
        ({"threshold": float("inf")}, UserInputError, "threshold must be a finite number"),
        ({"threshold": -float("inf")}, UserInputError, "threshold must be a finite number"),
        ({"threshold": "0.5"}, TypeError, "threshold must be a number, got str '0.5'"),
        ({"threshold": True}, TypeError, "threshold must be a number, got bool"),
        ({"top_fraction": float("nan")}, UserInputError, "top_fraction must be a finite number"),
        ({"top_fraction": -0.1}, UserInputError, r"top_fraction must be in \(0, 1\]"),
        ({"top_fraction": "0.3"}, TypeError, "top_fraction must be a number"),
        ({"top_k": 2.5}, TypeError, "top_k must be an integer, got float 2.5"),
        ({"top_k": 3.0}, TypeError, "top_k must be an integer"),
        ({"top_k": True}, TypeError, "top_k must be an integer, got bool"),
        ({"top_k": "3"}, TypeError, "top_k must be an integer"),
    ],
)
def test_rules_no_filter_can_mean_are_refused_with_a_clear_error(kwargs, error, message):
    with pytest.raises(error, match=message):
        KeepRule(**kwargs)
    pool = datasets.Dataset.from_dict({"caption": ["a dog on a beach", "the meaning of life"]})
    with pytest.raises(error, match=message):  # before any scoring, in every engine that takes a rule
        filter_by_icc(pool, model="lite", **kwargs)


def test_rules_take_numpy_numbers_and_store_plain_python_ones():
    assert KeepRule(threshold=np.float32(0.5)) == KeepRule(threshold=0.5)
    assert type(KeepRule(threshold=np.float32(0.5)).threshold) is float
    assert type(KeepRule(top_fraction=np.float64(0.3)).top_fraction) is float
    assert type(KeepRule(top_k=np.int64(3)).top_k) is int
    assert type(KeepRule(threshold=1).threshold) is float


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_cli_filter_refuses_a_threshold_that_is_not_a_finite_number(value, tmp_path, capsys):
    captions = tmp_path / "captions.txt"
    captions.write_text("a dog on a beach\nthe meaning of life\n")
    out = tmp_path / "kept.jsonl"
    assert main(["filter", "--model", "lite", "-i", str(captions), "-o", str(out), "--threshold", value]) == 2
    err = capsys.readouterr().err
    assert "threshold must be a finite number" in err and "Traceback" not in err
    assert not out.exists()


def test_batches_respect_the_token_budget_and_cover_every_row():
    lengths = np.sort(np.random.default_rng(0).integers(3, 60, size=500))
    batches = list(plan_batches(lengths, max_rows=64, max_tokens=512))
    covered = np.concatenate([np.arange(len(lengths))[b] for b in batches])
    np.testing.assert_array_equal(covered, np.arange(len(lengths)))
    for batch in batches:
        rows = batch.stop - batch.start
        assert rows <= 64
        assert rows == 1 or rows * padded_width(int(lengths[batch.stop - 1])) <= 512


def test_a_row_longer_than_the_budget_gets_its_own_batch():
    assert [(b.start, b.stop) for b in plan_batches(np.array([4, 900]), 8, 64)] == [(0, 1), (1, 2)]


def test_what_is_left_of_a_width_comes_in_powers_of_two_then_in_one_batch():
    # width 5: full batches of 64 rows (320 tokens), then 64 + 32 (powers of two from MIN_SPLIT_ROWS), then 23
    lengths = np.array([5] * (128 + MIN_SPLIT_ROWS * 3 + 23) + [7] * 3)
    assert [(b.start, b.stop) for b in plan_batches(lengths, 64, 320, 1)] == [
        (0, 64), (64, 128), (128, 192), (192, 224), (224, 247), (247, 250)
    ]  # fmt: skip


def _job_shapes(lengths: np.ndarray, max_rows: int, max_tokens: int, multiple: int, gpu: bool) -> set:
    """The ``(rows, width)`` shapes a job over ``lengths`` runs, chunk by chunk as the scorers cut it."""
    shapes = set()
    for start in range(0, len(lengths), CHUNK_SIZE):
        chunk = np.sort(lengths[start : start + CHUNK_SIZE])
        for batch in plan_batches(chunk, max_rows, max_tokens, multiple):
            width = padded_width(int(chunk[batch.stop - 1]), multiple)
            rows = np.arange(batch.start, batch.stop)
            shapes.add((len(fill_rows(rows, width, max_rows, max_tokens) if gpu else rows), width))
    return shapes


@pytest.mark.parametrize(("device", "max_length"), [("cpu", 128), ("cpu", 512), ("cuda", 128), ("cuda", 512)], ids=str)
def test_a_million_caption_job_meets_a_bounded_set_of_shapes(device, max_length):
    """Whatever a job's size, the shapes it meets are bounded (issue 49): on a CPU by the full, the power-of-two and
    the small row counts per width, on a GPU by one shape per width."""
    rng = np.random.default_rng(0)
    lengths = np.minimum(rng.geometric(1 / 14, size=1_000_000) + 2, max_length)  # captions: ~15 tokens, long tail
    max_rows, max_tokens = default_batch_limits(torch.device(device))
    multiple = pad_multiple(torch.device(device))
    shapes = _job_shapes(lengths, max_rows, max_tokens, multiple, gpu=device == "cuda")
    widths = {width for _, width in shapes}
    assert len(shapes) <= shape_bound(max_length, max_rows, multiple)
    if device == "cuda":
        assert len(shapes) == len(widths) <= -(-max_length // multiple)


def test_pad_rows_right_pads_to_a_multiple_of_eight():
    ids, mask = pad_rows([[0, 5, 2], [0, 5, 6, 7, 2]], np.array([1, 0]), pad_id=1)
    assert ids.shape == (2, 8)
    assert ids[0, :5].tolist() == [0, 5, 6, 7, 2] and ids[1, 3:].tolist() == [1] * 5
    assert mask.sum(axis=1).tolist() == [5, 3]


def test_cpu_batches_run_side_by_side_in_order_under_inference_mode_and_restore_threads():
    threads_before, seen = torch.get_num_threads(), []

    def run(batch: slice) -> torch.Tensor:
        seen.append((threading.get_ident(), torch.is_inference_mode_enabled(), torch.get_num_threads()))
        return torch.arange(batch.start, batch.stop, dtype=torch.float32)

    batches = [slice(start, start + 3) for start in range(0, 30, 3)]
    out = run_batches(run, batches, workers=2)
    assert torch.equal(torch.cat(out), torch.arange(30, dtype=torch.float32))
    assert all(inference and threads == 1 for _, inference, threads in seen)
    assert torch.get_num_threads() == threads_before
    assert [tensor.tolist() for tensor in run_batches(run, batches, workers=1)] == [t.tolist() for t in out]


def test_mini_scores_do_not_depend_on_how_many_batches_run_at_once(monkeypatch):
    texts = [row["caption"] for row in dev_split()[:120]]
    scorer = MiniScorer(dtype="float32", max_batch_tokens=256)
    side_by_side = scorer.score(texts)
    monkeypatch.setattr(runner, "cpu_batch_workers", lambda device: 1)
    np.testing.assert_allclose(scorer.score(texts), side_by_side, atol=1e-6)

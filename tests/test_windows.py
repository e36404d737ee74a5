"""mini's window rule for long captions: every window counts, the first the most, and it is the rule the CV chose."""

import json

import numpy as np
import pytest

from modeling_icc import load_scorer
from modeling_icc.models.mini.modeling_mini import shipped_heads_path
from modeling_icc.scoring.progress import reporting_to
from modeling_icc.testing.captions import SHAPES
from modeling_icc.utils import caption_text
from modeling_icc.utils.caption_text import MAX_SPLIT_HASHTAGS
from modeling_icc.utils.windows import MAX_WINDOWS, WINDOW_DECAY, pieces_read, split_windows, window_weights


@pytest.mark.parametrize("n_windows", [1, 2, 3, 7])
def test_window_weights_sum_to_one_and_every_window_counts(n_windows):
    weights = window_weights(n_windows)
    assert weights.shape == (n_windows,) and weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert (weights > 0).all() and (np.diff(weights) <= 0).all()  # later windows never outweigh earlier ones
    np.testing.assert_allclose(
        weights, WINDOW_DECAY ** np.arange(n_windows) / (WINDOW_DECAY ** np.arange(n_windows)).sum()
    )


def test_a_decay_of_one_is_the_plain_mean_and_decays_outside_0_1_are_refused():
    np.testing.assert_array_equal(window_weights(4, 1.0), np.full(4, 0.25))
    np.testing.assert_allclose(window_weights(3, 0.5), [4 / 7, 2 / 7, 1 / 7])
    for decay in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError, match="decay"):
            window_weights(2, decay)


def test_the_default_decay_is_the_one_cross_validation_chose_for_the_shipped_heads():
    report = json.loads(shipped_heads_path().with_suffix(".report.json").read_text(encoding="utf-8"))
    table = report["window_rule_cv_203"]
    assert table["chosen_decay"] == WINDOW_DECAY
    assert 1.0 in [row["decay"] for row in table["candidates"]]  # today's mean was among the candidates
    assert WINDOW_DECAY >= min(row["decay"] for row in table["candidates"]) > 0  # never the first window alone


def test_windows_cover_every_piece_up_to_the_last_window_read():
    ids = [101, *range(1000, 1300), 102]
    windows = split_windows(ids, 128)
    assert all(window[0] == 101 and window[-1] == 102 and len(window) <= 128 for window in windows)
    assert {piece for window in windows for piece in window[1:-1]} == set(range(1000, 1300))
    assert split_windows(ids[:100], 128) == [ids[:100]]
    longer = [101, *range(10_000, 10_000 + 5 * pieces_read(128)), 102]
    read = split_windows(longer, 128)
    assert len(read) == MAX_WINDOWS and read == split_windows([*longer[: pieces_read(128) + 1], 102], 128)
    # what the windows after the last read would add to a logit is below float32's resolution of a score
    assert WINDOW_DECAY**MAX_WINDOWS / (1 - WINDOW_DECAY) < 1e-9


@pytest.fixture(scope="module")
def mini():
    return load_scorer("mini", device="cpu", dtype="float32")


@pytest.mark.parametrize(
    "text",
    [
        " ".join(["a brown dog runs on the wet sand of a wide beach"] * 400),
        "-".join(["x1"] * 10_000),
        SHAPES["hyphenated_price_words"](60_000),
        SHAPES["long_word_and_dots"](60_000),
        SHAPES["spaces_then_a_word"](60_000),
    ],
    ids=["words", "hyphens", "price_words", "one_long_word", "spaces_then_a_word"],
)
def test_mini_tokenizes_only_the_start_it_reads_and_reads_the_same_windows(mini, text):
    """A long caption's start, cut where a word ends, gives the windows of the whole caption."""
    prepared = mini._prepare(text)
    start, encoding = mini._read_pieces(prepared)
    assert prepared.startswith(start)
    whole = split_windows(mini._full_tokenizer.encode(prepared).ids, mini.max_length)
    assert split_windows(encoding.ids, mini.max_length) == whole


def test_a_caption_past_the_windows_read_scores_as_its_start(mini):
    """Past the last window read nothing changes: 20,000 words score as their first 2,000, bit for bit."""
    words = [f"word{index % 97} dog beach" for index in range(20_000 // 3)]
    whole, start = " ".join(words), " ".join(words[: 2_000 // 3])
    assert mini.score([whole])[0] == mini.score([start])[0]
    assert mini.explain(whole).score == mini.explain(start).score


def test_mini_never_reads_as_far_as_the_hashtags_left_unsplit(mini, monkeypatch):
    """Hashtags past ``MAX_SPLIT_HASHTAGS`` are read as written; every hashtag makes a word piece, so mini's
    windows end before them: splitting them all gives the same score, bit for bit."""
    text = SHAPES["distinct_hashtags"](200_000)
    assert text.count("#") > MAX_SPLIT_HASHTAGS
    bounded = mini.score([text])[0]
    monkeypatch.setattr(caption_text, "MAX_SPLIT_HASHTAGS", 10**9)
    assert mini.score([text])[0] == bounded


def test_a_jobs_progress_counts_each_caption_once_however_it_is_read(mini):
    """Window rows are no captions: a job's report hears of each caption once (one window or twenty)."""
    counts = []
    texts = ["a dog on a beach", "x" * 5_000, " ".join(["a brown dog runs on the wet sand"] * 400)]
    with reporting_to(counts.append):
        mini.score(texts)
    assert sum(counts) == len(texts)

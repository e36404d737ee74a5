"""mini's window rule for long captions: every window counts, the first the most, and it is the rule the CV chose."""

import json

import numpy as np
import pytest

from modeling_icc.models.mini.modeling_mini import shipped_heads_path
from modeling_icc.utils.windows import WINDOW_DECAY, split_windows, window_weights


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


def test_windows_cover_every_piece():
    ids = [101, *range(1000, 1300), 102]
    windows = split_windows(ids, 128)
    assert all(window[0] == 101 and window[-1] == 102 and len(window) <= 128 for window in windows)
    assert {piece for window in windows for piece in window[1:-1]} == set(range(1000, 1300))
    assert split_windows(ids[:100], 128) == [ids[:100]]

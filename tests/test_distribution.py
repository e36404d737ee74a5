"""Score distributions on an unlabelled pool: summaries, distinct top and bottom captions, the histogram."""

import numpy as np

from modeling_icc import LiteScorer
from modeling_icc.evaluation.distribution import distribution_markdown, plot_histograms, score_distribution
from modeling_icc.scoring.base import ConcretenessScorer


class LengthScorer(ConcretenessScorer):
    """Longer captions score higher: a scorer whose ranking the test can predict."""

    model_id = "length"

    def _score_valid(self, texts):
        return np.array([min(len(text) / 50, 1.0) for text in texts], dtype=np.float32)


def test_distribution_lists_distinct_captions_best_and_worst_first(tmp_path):
    texts = ["a dog", "a dog on a red sofa in a sunny room", "a dog", "hope", "two cats on a mat", "  "]
    result = score_distribution(texts, {"length": LengthScorer(), "lite": LiteScorer()}, k=3)
    summary = result["scorers"]["length"]
    assert result["n_captions"] == 6 and result["n_distinct"] == 5 and summary["n"] == 5  # the blank scores NaN
    assert [row["caption"] for row in summary["highest"]] == [
        "a dog on a red sofa in a sunny room",
        "two cats on a mat",
        "a dog",
    ]
    assert [row["caption"] for row in summary["lowest"]] == ["hope", "a dog", "two cats on a mat"]
    assert sum(summary["histogram"]["counts"]) == 5 and len(summary["histogram"]["edges"]) == 21
    kept = summary["kept_by_threshold"]  # share of all 6 rows, the blank one never kept (as icc filter counts)
    assert kept["0.3"] == 2 / 6 and kept["0.5"] == 1 / 6 and kept["0.9"] == 0.0
    assert set(result["spearman"]) == {"length vs lite"}
    markdown = distribution_markdown(result, "Pool")
    assert "| length | " in markdown and "| 0.100 | a dog |" in markdown
    assert plot_histograms(result, tmp_path / "hist.png", "Pool").read_bytes()[:4] == b"\x89PNG"

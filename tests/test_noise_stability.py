"""Label-free noise stability: how far each noise type moves a scorer's scores and its keep decisions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from modeling_icc.evaluation.bootstrap import Bootstrap
from modeling_icc.evaluation.noise_stability import noise_stability, plot_stability, stability_markdown
from modeling_icc.scoring.base import ConcretenessScorer
from modeling_icc.utils.caption_noise import NOISE_TYPES

ROOT = Path(__file__).resolve().parents[1]
CAPTIONS = [
    "a dog running on the beach",
    "a red car parked in front of a house",
    "two cats sleeping on a sofa",
    "an old man reading a newspaper in the park",
    "a bowl of soup with bread",
    "children playing football in the street",
]


class ExclaimScorer(ConcretenessScorer):
    """Concrete (0.6-0.8, shorter is higher) unless the text has a "!": then 0.2, so the decisions are known."""

    model_id = "exclaim"

    def _score_valid(self, texts):
        return np.array([0.2 if "!" in text else 0.8 - len(text) / 1000 for text in texts], dtype=np.float32)


def test_flips_and_changes_follow_the_scores_of_each_copy(tmp_path):
    result = noise_stability(
        CAPTIONS, {"exclaim": ExclaimScorer()}, noise_types=("punctuation", "emoji"), bootstrap=Bootstrap(100)
    )
    summary = result["scorers"]["exclaim"]
    assert result["n_captions"] == 6 and result["threshold"] == 0.5 and summary["kept_clean"] == 1.0
    punctuation = summary["noise"]["punctuation"]  # every copy ends in "!!"-like marks: all dropped
    assert punctuation["decision_flips"] == 1.0 and punctuation["kept_clean_dropped_noisy"] == 1.0
    assert punctuation["mean_change"] < -0.5 and punctuation["mean_abs_change"] == -punctuation["mean_change"]
    assert punctuation["versus_clean"]["spearman"]["value"] is None  # constant noisy scores: undefined, not 0
    emoji = summary["noise"]["emoji"]  # emoji only lengthen the text: every caption stays kept
    assert emoji["decision_flips"] == 0.0 and emoji["mean_change"] < 0
    assert emoji["versus_clean"]["spearman"]["value"] is not None
    markdown = stability_markdown(result, "Pool")
    assert "| punctuation | n/a / 100.0% / 100.0% |" in markdown
    assert "Clean captions kept at 0.5: exclaim 100.0%." in markdown
    assert plot_stability(result, tmp_path / "stability.png", "Pool").read_bytes()[:4] == b"\x89PNG"


def test_the_cc3m_script_writes_its_results_and_refuses_the_published_scores(tmp_path):
    script = ROOT / "benchmarks" / "quality" / "cc3m_noise_stability.py"
    command = [sys.executable, str(script), "--scorers", "lite", "--n", "30", "--out-dir", str(tmp_path)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    data = json.loads((tmp_path / "cc3m_noise_stability.json").read_text(encoding="utf-8"))
    assert data["n_captions"] == 30 and "30 of 15" in data["captions"]["selection"]
    assert list(data["scorers"]["lite"]["noise"]) == list(NOISE_TYPES) and data["environment"]["versions"]["torch"]
    assert (tmp_path / "cc3m_noise_stability.png").is_file()
    refused = subprocess.run([*command[:3], "published"], capture_output=True, text=True)
    assert refused.returncode == 2 and "dev captions only" in refused.stderr

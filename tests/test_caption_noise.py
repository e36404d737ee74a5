"""Seeded web noise (training and benchmark vocabularies apart) and the noisy_captions benchmark."""

import json
from dataclasses import fields

import pytest

from modeling_icc.cli.main import main
from modeling_icc.evaluation.data import noisy_caption_benchmarks
from modeling_icc.utils.caption_noise import BENCHMARK_NOISE, NOISE_TYPES, TRAINING_NOISE, add_noise
from modeling_icc.utils.caption_text import normalize_caption
from modeling_icc.utils.shipped_data import dev_split

CAPTION = "Two dogs running on a beach at sunset"


def test_noise_is_deterministic_in_text_kind_and_seed():
    for kind in NOISE_TYPES:
        first = add_noise(CAPTION, kind, BENCHMARK_NOISE, seed=3)
        assert first == add_noise(CAPTION, kind, BENCHMARK_NOISE, seed=3)
        if kind != "casing":
            assert first != CAPTION
    assert add_noise(CAPTION, "social", BENCHMARK_NOISE, 0) != add_noise(CAPTION, "social", BENCHMARK_NOISE, 1)
    with pytest.raises(ValueError, match="unknown noise type"):
        add_noise(CAPTION, "typos", BENCHMARK_NOISE)


def test_training_and_benchmark_vocabularies_share_no_string():
    for field in fields(TRAINING_NOISE):
        assert set(getattr(TRAINING_NOISE, field.name)).isdisjoint(getattr(BENCHMARK_NOISE, field.name)), field.name


def test_lead_noise_puts_the_description_last():
    noisy = add_noise(CAPTION, "seo_lead", BENCHMARK_NOISE)
    assert noisy.endswith(f" - {CAPTION}") and noisy.count(",") >= 3
    social = add_noise(CAPTION, "social_lead", BENCHMARK_NOISE)
    assert social.startswith("@") and social.rstrip("!?").split()[-2:] == ["at", "sunset"]
    assert normalize_caption(social).lower().rstrip("!?").endswith("beach at sunset")


def test_noise_that_normalization_removes_is_removed():
    for kind in ("handles", "urls", "emoji"):
        assert normalize_caption(add_noise(CAPTION, kind, BENCHMARK_NOISE)).replace(" via", "") == CAPTION
    assert "dogs" in normalize_caption(add_noise(CAPTION, "hashtags", BENCHMARK_NOISE)).split(CAPTION)[1].lower()


def test_noisy_caption_benchmarks_are_the_frozen_captions_with_their_labels():
    sets = noisy_caption_benchmarks(["hashtags", "long"])
    clean, hashtags, long = sets
    frozen = dev_split("frozen")
    assert clean.texts == [row["caption"] for row in frozen] and "published" in clean.reference_scores
    assert hashtags.clean_of == long.clean_of == clean.name and not hashtags.reference_scores
    assert (hashtags.labels == clean.labels).all() and len(long) == 100
    assert all(text.startswith(caption.strip()) for text, caption in zip(hashtags.texts, clean.texts, strict=True))


def test_bench_noisy_captions_reports_stability_against_clean_scores(tmp_path, capsys):
    code = main(
        ["bench", "--benchmarks", "noisy_captions", "--scorers", "lite,published",
         "--n-bootstrap", "20", "--output-dir", str(tmp_path), "--name", "noisy"]
    )  # fmt: skip
    assert code == 0
    payload = json.loads((tmp_path / "noisy.json").read_text())
    rows = {(row["benchmark"], row["scorer"]): row for row in payload["results"]}
    assert ("noisy_captions:clean", "published") in rows and ("noisy_captions:emoji", "published") not in rows
    assert "versus_clean" not in rows["noisy_captions:clean", "lite"]
    assert rows["noisy_captions:emoji", "lite"]["versus_clean"]["spearman"]["value"] == 1.0  # emoji are dropped
    assert rows["noisy_captions:hashtags", "lite"]["versus_clean"]["spearman"]["value"] < 1.0
    assert {skip["benchmark"] for skip in payload["skipped"]} == {f"noisy_captions:{kind}" for kind in NOISE_TYPES}
    table = (tmp_path / "noisy.md").read_text()
    assert "| hashtags | " in table and " / " in table
    assert (tmp_path / "noisy_noisy_captions.png").is_file()

"""Web junk: alt-text that is no caption scores 0.0 with ICC's scorers, real captions are never taken for it,
and ``icc bench --benchmarks web_junk`` reports what a filter at 0.5 keeps."""

import csv
import json
import re
import unicodedata

import numpy as np
import pytest

from modeling_icc import load_scorer
from modeling_icc.cli.main import main
from modeling_icc.evaluation.baselines.registry import build_scorer
from modeling_icc.evaluation.web_junk import REAL_KINDS, web_junk_benchmark
from modeling_icc.utils.shipped_data import LAION_JUNK_FILE, cc3m_distinct_captions, data_path, dev_split
from modeling_icc.utils.web_junk import MAX_JUNK_CHARS, is_web_junk

#: What the issue's audit found kept at 0.5, and more of each kind.
JUNK = [
    "nan", "None", "null", "N/A", "#N/A", "undefined",
    "http://www.example.com/img/12345.jpg", "www.shop.com", "shop.com", "alimentary.co.nz", "joe@example.com",
    "<img src=x>", "<br/>", "&nbsp;", '<a href="http://x.org/p"></a>',
    "...", "!!!", "-", "\U0001f4f7\u2728",
    "DSC_0001.JPG", "IMG_2034.jpeg", "IMG_2034", "Red-wool-coat.jpg", "AR-140909846.jpg&maxh=400",
    "800x600", "1920 × 1080", "0.32893747091293335", "d41d8cd98f00b204e9800998ecf8427e",
    "356b433d-cf17-c5a7-8b03-ad3f0fcb6def", "KVJQBJJXCKB", "41DHKD2S",
]  # fmt: skip
#: Short, odd, but captions: the model reads them.
NOT_JUNK = [
    "a dog on a beach", "dog", "Splatterhouse", "Man_with_Horse_Head_Mask_in_the_Stands", "iPhone12 case",
    "4K TV", "狗在海滩上", "собака на пляже", "<b>red car</b>", "IMG_2034 dog on a beach", "NYC", "e.g. a dog",
    "Madison-Carver-Wedding-by-Stephen-Masker-Photography-0041", "photo of www.shop.com's storefront at night",
]  # fmt: skip


@pytest.mark.parametrize("model", ["mini", "lite"])
def test_web_junk_scores_zero_and_captions_are_read(model):
    scorer = load_scorer(model)
    junk = scorer.score(JUNK)
    assert junk.tolist() == [0.0] * len(JUNK), [text for text, score in zip(JUNK, junk, strict=True) if score]
    scores = scorer.score(NOT_JUNK)  # Chinese and Russian are not junk, but not read by an English model: NaN
    assert (scores[[6, 7]] != 0.0).all() and (np.delete(scores, [6, 7]) > 0.0).all()
    assert np.isnan(scorer.score(["", "\u200b"])).all()  # blank stays NaN: it has no text at all


def test_student_zeroes_web_junk_and_baselines_do_not(tiny_student_dir):
    assert load_scorer(str(tiny_student_dir), dtype="float32").score(["DSC_0001.JPG"])[0] == 0.0
    lexical = build_scorer("lexical").scorer
    assert not lexical.zeroes_web_junk and not lexical.web_junk_mask(["DSC_0001.JPG"]).any()


def test_no_real_caption_is_taken_for_junk():
    """Every distinct CC3M validation caption and every dev caption goes to the model (so the dev Spearman
    of every model is what it was before the rule)."""
    captions = cc3m_distinct_captions() + [row["caption"] for row in dev_split("all")]
    assert [text for text in captions if is_web_junk(text)] == []


def test_the_verdict_does_not_depend_on_unicode_form_or_length():
    for text in ["ｎａｎ", "ＤＳＣ＿０００１．ＪＰＧ", unicodedata.normalize("NFD", "café.jpg")]:
        assert is_web_junk(text), text
    assert not is_web_junk(unicodedata.normalize("NFD", "un café au lait"))
    long_text = "<a " * (MAX_JUNK_CHARS // 3 + 1)
    assert len(long_text) > MAX_JUNK_CHARS and not is_web_junk(long_text)  # long text goes to the model


def test_shipped_laion_junk_rows_are_what_their_attribution_says():
    """One URL or one image file name each, as the selection rule in ATTRIBUTION.md states."""
    with open(data_path(LAION_JUNK_FILE), encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    rule = re.compile(r"(?:https?://|www\.)\S+|\S+\.(?:jpe?g|png|gif|webp|bmp|svg)", re.IGNORECASE)
    assert len(rows) == 15 and all(rule.fullmatch(row["text"].strip()) for row in rows)


def test_bench_web_junk_reports_what_a_filter_at_half_keeps(tmp_path, capsys):
    code = main(
        ["bench", "--benchmarks", "web_junk", "--scorers", "lite,lexical", "--n-bootstrap", "0",
         "--output-dir", str(tmp_path), "--name", "junk"]
    )  # fmt: skip
    assert code == 0
    payload = json.loads((tmp_path / "junk.json").read_text())
    kept = {row["scorer"]: row["kept_fraction"] for row in payload["results"]}
    benchmark = web_junk_benchmark()
    assert set(kept["lite"]) == set(benchmark.groups)
    assert all(value == 0.0 for kind, value in kept["lite"].items() if kind not in REAL_KINDS)
    assert kept["lite"][REAL_KINDS[1]] > 0.5
    assert max(value for kind, value in kept["lexical"].items() if kind not in REAL_KINDS) > 0.5
    assert payload["benchmarks"]["web_junk"]["keep_threshold"] == 0.5
    assert (tmp_path / "junk_web_junk.png").stat().st_size > 0
    assert "| camera file names | 100 |" in capsys.readouterr().out


def test_the_one_search_fast_path_agrees_with_the_token_rule():
    """Most captions are decided by one regex search (a plain word that is no vowel-less code); on random
    strings of words, codes, quotes and punctuation it finds a word exactly when the token-by-token rule does."""
    from modeling_icc.utils import web_junk

    rng = np.random.default_rng(0)
    alphabet = [*"bcdfgkvjqxzBCDFGaeiouyAEY019 \"'()[].,;:!?*_-/#éжЖ中", "  ", "\t", "KVJQB", "rhythm"]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet, size=rng.integers(1, 20)))
        tokens = text.split()
        by_tokens = any(web_junk._spells_a_word(token.strip(web_junk._TOKEN_EDGES)) for token in tokens)
        if web_junk._PLAIN_WORD.search(text):
            assert by_tokens, text

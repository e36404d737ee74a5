"""load_scorer and the batched neural scorer: order, padding, bad input, errors."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch

from modeling_icc import LiteScorer, ModelNotAvailableError, NeuralScorer, load_scorer
from modeling_icc.evaluation.baselines.lexical import LexicalNormScorer
from modeling_icc.scoring.devices import resolve_dtype
from modeling_icc.scoring.hardware import FORCE_FP32_ENV, cpu_has_native_bf16, fp32_forced
from modeling_icc.scoring.load import CheckpointError
from modeling_icc.scoring.runner import torch_threads
from modeling_icc.testing import tiny_tokenizer

CAPTIONS = [
    "a man with a white shirt",
    "keep an eye on the ball when it comes to investments",
    "dog",
    "small blue and white airplane parked on the ramp with a control tower in the distance, seen from afar",
    "A sandwich sits on a small blue plate",
    "ox",
]


def _one_by_one(scorer: NeuralScorer, texts: list[str]) -> np.ndarray:
    """Reference: each caption alone, no padding, no sorting."""
    out = []
    with torch.inference_mode():
        for text in texts:
            batch = scorer.tokenizer([text], return_tensors="pt", truncation=True, max_length=scorer.max_length)
            out.append(scorer.model(**batch).raw_scores.item())
    return np.array(out, dtype=np.float32)


def test_batched_scores_match_unbatched_in_input_order(tiny_student_dir):
    scorer = load_scorer(tiny_student_dir, device="cpu", dtype="float32", batch_size=2, max_batch_tokens=64)
    texts = [f"{caption} {i}" for i, caption in enumerate(CAPTIONS * 5)]
    got = scorer.score(texts, raw=True)
    np.testing.assert_allclose(got, _one_by_one(scorer, texts), atol=1e-5)
    assert got.dtype == np.float32 and got.shape == (len(texts),)


def test_batch_settings_do_not_change_scores(tiny_student_dir):
    texts = [f"{caption} {i}" for i, caption in enumerate(CAPTIONS * 7)]
    small = load_scorer(tiny_student_dir, dtype="float32", batch_size=1).score(texts)
    large = load_scorer(tiny_student_dir, dtype="float32", batch_size=512, max_batch_tokens=100_000).score(texts)
    np.testing.assert_allclose(small, large, atol=1e-5)


def test_score_is_clipped_and_raw_is_not(tiny_student_dir):
    scorer = load_scorer(tiny_student_dir)
    with torch.no_grad():
        scorer.model.classifier.out_proj.bias.fill_(5.0)
    raw = scorer.score(CAPTIONS, raw=True)
    clipped = scorer.score(CAPTIONS)
    assert (raw > 1).all()
    assert (clipped == 1.0).all()


def test_published_format_directory_loads(published_format_dir):
    scorer = load_scorer(published_format_dir)
    assert isinstance(scorer, NeuralScorer)
    assert np.isfinite(scorer.score(CAPTIONS)).all()


def test_blank_captions_are_nan_and_none_raises_with_index(tiny_student_dir):
    scorer = load_scorer(tiny_student_dir)
    scores = scorer.score(["a cat", "", "   \n", "a dog"])
    assert np.isnan(scores[[1, 2]]).all() and np.isfinite(scores[[0, 3]]).all()
    with pytest.raises(TypeError, match="index 1"):
        scorer.score(["a cat", None])
    with pytest.raises(TypeError, match="index 0"):
        scorer.score([b"bytes are not text"])
    lenient = scorer.score(["a cat", None, 3.5], errors="nan")
    assert np.isfinite(lenient[0]) and np.isnan(lenient[1:]).all()
    with pytest.raises(TypeError, match="list of captions"):
        scorer.score("a single string")


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ("a dog", "not a single string"),
        (b"a dog", "got bytes: decode it"),
        (bytearray(b"a dog"), "got bytearray: decode it"),
        ({"a dog": 1}, "got a mapping"),
        ({"a dog", "a cat"}, "has no order"),
        (frozenset({"a dog"}), "has no order"),
        ({"a dog": 1}.keys(), "has no order"),
        (np.array([["a dog", "a cat"]]), "one-dimensional"),
        (pd.DataFrame({"caption": ["a dog"]}), "one-dimensional"),
        (7, "got int"),
    ],
)
def test_containers_that_are_not_an_ordered_list_of_captions_are_refused_by_every_scorer(
    tiny_student_dir, texts, message
):
    for scorer in (LiteScorer(), load_scorer(tiny_student_dir), LexicalNormScorer()):
        for errors in ("raise", "nan"):
            with pytest.raises(TypeError, match=message):
                scorer.score(texts, errors=errors)
        with pytest.raises(TypeError, match=message):
            scorer.explain_many(texts)


def test_ordered_containers_of_captions_are_scored_in_order():
    scorer = LiteScorer()
    captions = ["a dog on a beach", "the meaning of life", "a red car"]
    expected = scorer.score(captions)
    containers = [
        tuple(captions),
        np.array(captions),
        pd.Series(captions),
        pa.array(captions),
        pa.chunked_array([captions[:1], captions[1:]]),
        (caption for caption in captions),
        dict(enumerate(captions)).values(),
    ]
    for container in containers:
        np.testing.assert_array_equal(scorer.score(container), expected)


def test_empty_input_gives_empty_array(tiny_student_dir):
    assert load_scorer(tiny_student_dir).score([]).shape == (0,)


def test_overlong_captions_are_truncated_to_the_model_maximum(tiny_student_dir):
    scorer = load_scorer(tiny_student_dir, dtype="float32")
    long_caption = "a red car parked on a street " * 500
    prefix_only = tiny_tokenizer().decode(
        scorer.tokenizer(long_caption, truncation=True, max_length=scorer.max_length)["input_ids"][1:-1]
    )
    got = scorer.score([long_caption, prefix_only], raw=True)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got[0], got[1], atol=1e-5)


def test_unicode_emoji_and_non_english(tiny_student_dir):
    texts = ["un chat sur le toit 🐈", "東京タワーの夜景", "Ελληνικά γράμματα", "\u200b\ufeffzero width"]
    scorer = load_scorer(tiny_student_dir)
    assert np.isnan(scorer.score(texts)[:3]).all()  # French, Japanese, Greek: a student reads English only
    scorer.languages = None  # read anyway: the model itself takes any text
    assert np.isfinite(scorer.score(texts)).all()


def test_default_dtype_is_bf16_only_where_the_hardware_multiplies_bf16(tiny_student_dir):
    expected = torch.bfloat16 if cpu_has_native_bf16() else torch.float32
    assert resolve_dtype(None, torch.device("cpu")) == expected
    assert load_scorer(tiny_student_dir, device="cpu").model.dtype == expected
    assert load_scorer(tiny_student_dir, dtype="fp32").model.dtype == torch.float32
    with pytest.raises(ValueError, match="unknown dtype"):
        load_scorer(tiny_student_dir, dtype="int3")


def test_icc_force_fp32_makes_fp32_the_default_everywhere_but_honours_an_explicit_dtype(tiny_student_dir, monkeypatch):
    monkeypatch.setenv(FORCE_FP32_ENV, "1")
    assert fp32_forced() and not cpu_has_native_bf16()
    for device in ("cpu", "cuda", "mps"):
        assert resolve_dtype(None, torch.device(device)) == torch.float32
    assert resolve_dtype("bf16", torch.device("cpu")) == torch.bfloat16
    assert load_scorer(tiny_student_dir, device="cpu").model.dtype == torch.float32
    monkeypatch.setenv(FORCE_FP32_ENV, "0")
    assert not fp32_forced()


def test_lite_is_available_by_name():
    assert isinstance(load_scorer("lite"), LiteScorer)


def test_the_published_model_offline_raises_with_instructions():
    with pytest.raises(ModelNotAvailableError) as info:
        load_scorer("moranyanuka/icc")
    message = str(info.value)
    assert "moranyanuka/icc" in message and "hf download" in message and "lite" in message


def test_missing_local_directory_and_corrupt_checkpoint(tmp_path, tiny_student_dir):
    with pytest.raises(ModelNotAvailableError, match=r"no config\.json"):
        load_scorer(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    for item in tiny_student_dir.iterdir():
        (broken / item.name).write_bytes(item.read_bytes())
    (broken / "model.safetensors").write_bytes(b"this is not a safetensors file")
    with pytest.raises((CheckpointError, ModelNotAvailableError), match="broken"):
        load_scorer(broken)


def test_repeated_captions_are_scored_once_and_share_one_score(tiny_student_dir, monkeypatch):
    scorer = load_scorer(tiny_student_dir, dtype="float32")
    scored_batches = []
    score_valid = scorer._score_valid
    monkeypatch.setattr(scorer, "_score_valid", lambda texts: scored_batches.append(texts) or score_valid(texts))
    texts = ["a dog", "  ", "a cat on a mat", "a dog", None, "a cat on a mat", "a dog"]
    got = scorer.score(texts, errors="nan", raw=True)
    assert scored_batches == [["a dog", "a cat on a mat"]]
    np.testing.assert_array_equal(np.isnan(got), [False, True, False, False, True, False, False])
    assert got[0] == got[3] == got[6] and got[2] == got[5]
    np.testing.assert_allclose(got[[0, 2]], _one_by_one(scorer, ["a dog", "a cat on a mat"]), atol=1e-5)


def test_chunked_pipeline_keeps_order_across_chunks(tiny_student_dir, monkeypatch):
    import modeling_icc.scoring.chunks as chunks

    scorer = load_scorer(tiny_student_dir, dtype="float32", batch_size=3)
    texts = [f"{caption} {i}" for i, caption in enumerate(CAPTIONS * 6)]
    whole = scorer.score(texts, raw=True)
    monkeypatch.setattr(chunks, "CHUNK_SIZE", 5)
    np.testing.assert_allclose(scorer.score(texts, raw=True), whole, atol=1e-6)


@pytest.mark.parametrize("tokenize_workers", [0, 2])
def test_score_stream_gives_each_piece_the_scores_of_its_own_call(tiny_student_dir, monkeypatch, tokenize_workers):
    """A job's pieces through one stream: bit-for-bit the scores of one call per piece (the same batches), in
    order, with blank, repeated, junk and empty pieces; the pieces are read only a few ahead of the scores."""
    import modeling_icc.scoring.chunks as chunks

    monkeypatch.setattr(chunks, "CHUNK_SIZE", 4)  # pieces of several chunks, tokenized ahead across pieces
    monkeypatch.setattr(chunks, "POOL_MIN_CAPTIONS", 1)
    scorer = load_scorer(tiny_student_dir, dtype="float32", batch_size=3, tokenize_workers=tokenize_workers)
    texts = [f"{caption} {i % 7}" for i, caption in enumerate(CAPTIONS * 9)]
    pieces = [texts[:11], [], ["", None, "DSC_0001.JPG"], texts[11:30], texts[:5] + texts[:5], texts[30:]]
    pieces += [texts[start : start + 6] for start in range(0, len(texts), 6)]
    pulled = []

    def reading() -> object:
        for index, piece in enumerate(pieces):
            pulled.append(index)
            yield piece

    stream = scorer.score_stream(reading(), errors="nan", raw=True)
    first = next(stream)
    # Read ahead by what the tokenizer works on (two tasks per worker process, here one chunk each), not to the end.
    assert len(pulled) <= 2 * max(tokenize_workers, 1) + 2 < len(pieces)
    got = [first, *stream]
    expected = [scorer.score(piece, errors="nan", raw=True) for piece in pieces]
    assert len(got) == len(expected)
    for piece_scores, piece_expected in zip(got, expected, strict=True):
        np.testing.assert_array_equal(piece_scores, piece_expected)
    assert got[2][2] == 0.0 and np.isnan(got[2][:2]).all()


@pytest.mark.dtype_free
def test_compiled_scorer_matches_eager(tiny_student_dir):
    # Two captions of each length: every batch (one width each on a CPU) holds several rows, so batches of five
    # shapes run through one dynamic graph, compiled once. One torch thread runs them one after another (batches
    # in threads at once, or of one row, each cost dynamo a compile of its own: seconds, proving nothing more).
    texts = [f"{caption} {i}" for caption in CAPTIONS for i in (1, 2)]
    with torch_threads(1):
        eager = load_scorer(tiny_student_dir, dtype="float32").score(texts, raw=True)
        compiled = load_scorer(tiny_student_dir, dtype="float32", compile=True).score(texts, raw=True)
    np.testing.assert_allclose(compiled, eager, atol=1e-4)

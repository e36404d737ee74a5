"""Caption sets for the teachers: tables, LLaVA's chat.json, ids, blanks and bad input."""

import json

import pytest

from modeling_icc.teachers import count_words, load_captions
from modeling_icc.utils.errors import UserInputError


def test_llava_chat_json_takes_the_assistant_turn(tmp_path):
    rows = [
        {
            "id": "GCC_train_000",
            "image": "GCC_train_000.jpg",
            "conversations": [
                {"from": "human", "value": "Give a brief description of the image.\n<image>"},
                {"from": "gpt", "value": "a dog running on the beach"},
            ],
        },
        {
            "id": "GCC_train_001",
            "conversations": [{"from": "human", "value": "<image>"}, {"from": "gpt", "value": " "}],
        },
    ]
    (tmp_path / "chat.json").write_text(json.dumps(rows), encoding="utf-8")
    captions = load_captions(tmp_path / "chat.json")
    assert captions.ids == ["GCC_train_000"] and captions.captions == ["a dog running on the beach"]


def test_tables_keep_order_ids_and_drop_blank_captions(tmp_path):
    lines = [{"key": "b", "text": " two red apples "}, {"key": "a", "text": ""}, {"key": "c", "text": "a cat"}]
    (tmp_path / "captions.jsonl").write_text("\n".join(json.dumps(r) for r in lines), encoding="utf-8")
    captions = load_captions(tmp_path / "captions.jsonl", column="text", id_column="key")
    assert captions.ids == ["b", "c"] and captions.captions == ["two red apples", "a cat"]
    assert load_captions(tmp_path / "captions.jsonl", column="text", max_samples=1).ids == ["0"]


def test_duplicate_ids_and_unknown_sources_are_refused(tmp_path):
    (tmp_path / "dup.csv").write_text("id,caption\n1,a dog\n1,a cat\n", encoding="utf-8")
    with pytest.raises(UserInputError, match="not unique"):
        load_captions(tmp_path / "dup.csv", id_column="id")
    with pytest.raises(UserInputError, match="neither a local file nor a loadable Hub dataset"):
        load_captions(tmp_path / "missing.parquet")


def test_count_words_splits_on_any_whitespace():
    assert count_words("a  dog\ton\na beach") == 5
    assert count_words("") == 0

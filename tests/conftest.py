"""Shared fixtures: no network, tiny models built offline."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json
from importlib import resources
from pathlib import Path

import pytest

from modeling_icc import testing


@pytest.fixture(scope="session")
def tiny_student_dir(tmp_path_factory) -> Path:
    return testing.save_tiny_student(tmp_path_factory.mktemp("tiny_student"))


@pytest.fixture(scope="session")
def published_format_dir(tmp_path_factory) -> Path:
    return testing.save_published_format_checkpoint(tmp_path_factory.mktemp("published_format"))


@pytest.fixture(scope="session")
def paper_examples() -> list[dict]:
    text = (resources.files("modeling_icc") / "data" / "paper_examples.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines()]

"""Shared fixtures: no network, tiny models built offline."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path

import pytest

from modeling_icc import testing
from modeling_icc.models.mini.onnx_graph import CACHE_DIR_ENV
from modeling_icc.utils import shipped_data

#: Modules whose tests compare neural or mini scores, or the dtype a scorer resolves: their results depend on
#: the numeric path (bf16 or fp32), so `make test` runs them again with ICC_FORCE_FP32=1 where bf16 is the
#: default. Single tests elsewhere carry ``@pytest.mark.dtype`` themselves.
DTYPE_MODULES = frozenset(
    {
        "test_cuts_in_passes",
        "test_explain_matches_score",
        "test_fast_encoder",
        "test_icc_metric",
        "test_load_scorer",
        "test_mini",
        "test_neural_scorer",
        "test_shard_precision",
        "test_tokenize_workers",
    }
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "dtype_free: in a module of DTYPE_MODULES, a test whose result does not depend on the numeric path (an "
        "explicit float32 student, a fresh process's imports): not marked dtype, so the fp32 pass does not repeat it",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        in_dtype_module = item.module is not None and item.module.__name__.rpartition(".")[2] in DTYPE_MODULES
        if in_dtype_module and item.get_closest_marker("dtype_free") is None:
            item.add_marker(pytest.mark.dtype)


@pytest.fixture(scope="session", autouse=True)
def graph_cache(tmp_path_factory) -> Path:
    """mini's ONNX graph is built once per test session, in a folder of its own (never the user's cache)."""
    folder = tmp_path_factory.mktemp("icc_cache")
    os.environ[CACHE_DIR_ENV] = str(folder)  # the CLI's subprocesses inherit it
    return folder


@pytest.fixture(scope="session")
def tiny_student_dir(tmp_path_factory) -> Path:
    return testing.save_tiny_student(tmp_path_factory.mktemp("tiny_student"))


@pytest.fixture(scope="session")
def published_format_dir(tmp_path_factory) -> Path:
    return testing.save_published_format_checkpoint(tmp_path_factory.mktemp("published_format"))


@pytest.fixture(scope="session")
def paper_examples() -> list[dict]:
    return shipped_data.paper_examples()


@pytest.fixture(scope="module")
def single_thread():
    """Tiny models are latency-bound: one thread avoids oversubscribing a shared 2-core CPU."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def tiny_vba_pipeline(tmp_path_factory):
    """The tiny VBA teacher (SD-style UNet/VAE, BLIP-2, BERTScore), built once per session."""
    from modeling_icc.testing.teachers import tiny_vba

    return tiny_vba(tmp_path_factory.mktemp("tiny_vba"), num_inference_steps=4, max_new_tokens=8)

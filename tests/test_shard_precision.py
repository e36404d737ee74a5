"""A sharded job records the dtype and device it actually used, and a resume on other ones is refused (issue 25)."""

import json

import pytest

from modeling_icc.cli.main import main
from modeling_icc.scoring import devices, hardware
from modeling_icc.scoring.load import clear_scorer_cache


@pytest.fixture
def shards(tmp_path):
    directory = tmp_path / "pool"
    directory.mkdir()
    for index, caption in enumerate(["a dog on a red sofa", "an idea about freedom", "a cat"]):
        (directory / f"{index:05d}.txt").write_text(f"{caption}\nsome words\n")
    return directory


def test_resume_with_another_effective_dtype_is_refused(shards, tmp_path, tiny_student_dir, monkeypatch, capsys):
    out = tmp_path / "out"
    command = ["score", "--model", str(tiny_student_dir), "--input", f"{shards}/*.txt", "--output-dir", str(out)]
    monkeypatch.delenv(hardware.FORCE_FP32_ENV, raising=False)
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: True)  # bf16 by default, on any CPU
    clear_scorer_cache()
    assert main(command) == 0
    settings = json.loads((out / "_run.json").read_text())
    assert settings["dtype"] == "bfloat16"
    assert settings["device"] == str(devices.resolve_device(None))
    (out / "00001.stats.json").unlink()  # as if the job had been killed before finishing that shard
    output = (out / "00001.tsv").read_bytes()
    capsys.readouterr()

    monkeypatch.setenv(hardware.FORCE_FP32_ENV, "1")
    clear_scorer_cache()
    assert main(command) == 2
    err = capsys.readouterr().err
    assert "holds shards scored with dtype bfloat16; this run would use dtype float32" in err, err
    assert "ICC_FORCE_FP32" in err and "new --output-dir" in err and "Traceback" not in err
    assert err.count("icc: error:") == 1
    assert not (out / "00001.stats.json").exists() and (out / "00001.tsv").read_bytes() == output

    assert main([*command, "--dtype", "bfloat16"]) == 0  # the same settings resume it
    assert (out / "00001.stats.json").is_file()
    clear_scorer_cache()


def test_lite_records_no_device_or_dtype(shards, tmp_path):
    out = tmp_path / "out"
    assert main(["score", "--model", "lite", "--input", f"{shards}/*.txt", "--output-dir", str(out)]) == 0
    settings = json.loads((out / "_run.json").read_text())
    assert settings["device"] is None and settings["dtype"] is None

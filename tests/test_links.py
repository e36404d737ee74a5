"""Nothing the package writes on its own follows a link (issue 48, item 1 and its siblings).

A lock, a temporary or work file, a run record, a marker, a cache entry: each is created new (``O_EXCL``),
renamed over whatever stands at its name (a link there is replaced), or opened without following a link
(``O_NOFOLLOW``), so a link planted at one of these names never has its target truncated or written. Where a
link cannot simply be replaced (a lock file, a work folder), the job is refused in one line that says to
remove it, and following that advice gives a run that finishes. The one link written through on purpose is
the user's own ``--output`` file (tests/test_output_safety.py).
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import numpy as np
import pytest
from cli_run import icc, icc_process, jsonl_shards, one_line_error, written

from modeling_icc.curation.engines.spill import SpilledArrays
from modeling_icc.curation.engines.unit_scores import SavedScores
from modeling_icc.utils.atomic_files import files_moved_into, open_work_file, write_text
from modeling_icc.utils.errors import UserInputError
from modeling_icc.utils.resumable import LOCK_FILE, RUN_FILE, locked

ROWS = "".join(f'{{"caption": "a dog number {i} on a red sofa"}}\n' for i in range(12))
PRECIOUS = "precious bytes that are not icc's\n"


@pytest.fixture
def victim(tmp_path) -> Path:
    """A file that a link planted at one of icc's names points at: it must keep its bytes."""
    return written(tmp_path / "victim.txt", PRECIOUS)


@pytest.fixture
def shards(tmp_path) -> Path:
    return jsonl_shards(tmp_path / "in", ROWS, 2)


def single_file_job(tmp_path: Path, *rule: str) -> list[object]:
    pool = written(tmp_path / "pool.jsonl", ROWS)
    return ["filter" if rule else "score", "--model", "lite", "-i", pool, "-o", tmp_path / "out.jsonl", *rule]


@pytest.mark.parametrize("rule", [(), ("--top-fraction", "0.5")], ids=["score", "top-fraction"])
def test_a_link_at_a_single_file_jobs_lock_is_refused_and_its_target_kept(tmp_path, victim, rule, capsys):
    lock = tmp_path / ".out.jsonl.icc.lock"
    lock.symlink_to(victim)
    command = single_file_job(tmp_path, *rule)
    assert icc(*command) == 2
    one_line_error(capsys.readouterr().err, f"{lock} is a symbolic link, where icc keeps a file of its own")
    assert victim.read_text() == PRECIOUS and not (tmp_path / "out.jsonl").exists()
    lock.unlink()  # the advice: remove it and run the command again
    assert icc(*command) == 0
    assert victim.read_text() == PRECIOUS and len((tmp_path / "out.jsonl").read_text().splitlines()) > 0
    assert not lock.exists()


def test_a_link_at_an_output_directorys_lock_is_refused_and_its_target_kept(tmp_path, victim, shards, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_FILE).symlink_to(victim)
    command = ["score", "--model", "lite", "-i", shards / "*.jsonl", "--output-dir", out]
    assert icc(*command) == 2
    one_line_error(capsys.readouterr().err, f"{out / LOCK_FILE} is a symbolic link, where icc keeps a file")
    assert victim.read_text() == PRECIOUS
    (out / LOCK_FILE).unlink()
    assert icc(*command) == 0
    assert victim.read_text() == PRECIOUS and not (out / LOCK_FILE).exists()


def test_a_dangling_link_at_a_lock_creates_nothing_at_its_target(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / LOCK_FILE).symlink_to(tmp_path / "nowhere")
    with pytest.raises(UserInputError, match="is a symbolic link"), locked(tmp_path / "out"):
        pass
    assert not (tmp_path / "nowhere").exists()


def test_a_fifo_or_a_folder_at_a_lock_is_refused_at_once(tmp_path):
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / LOCK_FILE)  # opening it to write would wait for a reader
    (tmp_path / "dir" / LOCK_FILE).mkdir(parents=True)
    for folder, what in (("fifo", "is not a regular file"), ("dir", "is a directory")):
        with pytest.raises(UserInputError, match=what), locked(tmp_path / folder):
            pass


def test_a_hard_link_at_a_lock_is_never_emptied(tmp_path, victim):
    """A lock file is opened without truncation: one that is another file's second name keeps its bytes."""
    (tmp_path / "out").mkdir()
    os.link(victim, tmp_path / "out" / LOCK_FILE)
    with locked(tmp_path / "out"):
        pass
    assert victim.read_text() == PRECIOUS and not (tmp_path / "out" / LOCK_FILE).exists()


def test_teacher_scoring_shares_the_lock(tmp_path, victim):
    """Teacher scoring's output folder is held by the same lock (utils/resumable.py)."""
    from modeling_icc.teachers import CaptionSet, score_to_shards

    out = tmp_path / "teacher"
    out.mkdir()
    (out / LOCK_FILE).symlink_to(victim)
    with pytest.raises(UserInputError, match="is a symbolic link"):
        score_to_shards(object(), CaptionSet(["a"], ["a dog"]), out, seed=0, shard_size=1, batch_size=1)
    assert victim.read_text() == PRECIOUS


def test_links_at_a_jobs_records_are_replaced_never_written_through(tmp_path, shards):
    """``_run.json``, ``NAME.stats.json`` and ``_summary.json`` are renamed into place over a link there."""
    out = tmp_path / "out"
    command = ["score", "--model", "lite", "-i", shards / "*.jsonl", "--output-dir", out, "--no-progress"]
    assert icc(*command) == 0
    (out / "s0.jsonl").unlink()  # redone by the next run: its stats and the summary are written again
    targets = {}
    for name in (RUN_FILE, "s0.stats.json", "_summary.json"):
        target = tmp_path / f"kept-{name}"
        target.write_bytes((out / name).read_bytes())  # the same record, so the run reads it as its own
        (out / name).unlink()
        (out / name).symlink_to(target)
        targets[name] = target.read_bytes()
    assert icc(*command) == 0
    for name, before in targets.items():
        assert (tmp_path / f"kept-{name}").read_bytes() == before, name
    for name in ("s0.stats.json", "_summary.json"):  # written again: replaced (a matching _run.json is only read)
        assert not (out / name).is_symlink() and (out / name).is_file(), name
    assert json.loads((out / "_summary.json").read_text())["rows"] == 24
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / RUN_FILE).symlink_to(tmp_path / f"kept-{RUN_FILE}")
    assert icc(*command[:-3], "--output-dir", fresh) == 0
    assert (tmp_path / f"kept-{RUN_FILE}").read_bytes() == targets[RUN_FILE] and not (fresh / RUN_FILE).is_symlink()


def test_a_link_at_the_work_folder_is_refused(tmp_path, shards, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / ".icc-work").symlink_to(elsewhere)
    command = ["filter", "--model", "lite", "-i", shards / "*.jsonl", "--output-dir", out, "--top-k", "5"]
    assert icc(*command) == 2
    one_line_error(capsys.readouterr().err, f"{out / '.icc-work'} is a symbolic link")
    assert list(elsewhere.iterdir()) == []
    (out / ".icc-work").unlink()
    assert icc(*command) == 0
    assert list(elsewhere.iterdir()) == []


def test_a_shards_saved_scores_replace_a_link_at_their_name(tmp_path, victim):
    path = tmp_path / ".icc-work" / "s0.raw.npz"
    path.parent.mkdir()
    path.symlink_to(victim)
    SavedScores(path).save([(np.ones(3, np.float32), {"icc": np.ones(3, np.float32)}, "digest", np.array(["en"] * 3))])
    assert victim.read_text() == PRECIOUS and not path.is_symlink()
    assert SavedScores(path).saved(["icc"])


def test_a_shards_kept_uids_replace_a_link_at_their_name(tmp_path, victim):
    from modeling_icc.curation.engines.job import Job, Unit
    from modeling_icc.curation.engines.shard_files import ShardFiles, commit_unit
    from modeling_icc.curation.engines.unit_result import UnitResult

    (tmp_path / "out").mkdir()
    source, output = written(tmp_path / "s0.jsonl", ROWS), written(tmp_path / "out" / "s0.jsonl", ROWS)
    unit = Unit(source, "jsonl", output, "jsonl", "s0")
    job = Job((unit,), output_dir=tmp_path / "out", datacomp_subset=tmp_path / "subset.npy")
    uids = ShardFiles.of(job, unit).kept_uids
    uids.parent.mkdir()
    uids.symlink_to(victim)
    commit_unit(job, unit, UnitResult("lite"))
    assert victim.read_text() == PRECIOUS and not uids.is_symlink()


@pytest.mark.parametrize("mode", ["rb", "wb", "ab"])
def test_work_files_are_never_opened_through_a_link(tmp_path, victim, mode):
    """A single-file job's work files (first-pass scores, stdin copied) are opened again only as the regular
    file the job made: a symlink or a second name of another file in their place is an error, not a write."""
    link = tmp_path / ".out.jsonl.icc-abc.tmp"
    link.symlink_to(victim)
    with pytest.raises(OSError):
        open_work_file(link, mode)
    link.unlink()
    os.link(victim, link)
    with pytest.raises(OSError, match="not the work file this job made"):
        open_work_file(link, mode)
    assert victim.read_text() == PRECIOUS


def test_spilled_first_pass_scores_refuse_a_link(tmp_path, victim):
    link = tmp_path / "spill"
    link.symlink_to(victim)
    with pytest.raises(OSError):
        SpilledArrays(link)
    assert victim.read_text() == PRECIOUS
    spilled = SpilledArrays(tmp_path / "fresh")
    spilled.append(np.arange(3, dtype=np.float32))
    assert [list(values) for values in spilled] == [[0, 1, 2]]


def test_stdin_copied_for_a_second_pass_still_gives_the_rows(tmp_path):
    """The copy of stdin goes through the same work-file opening (``open_work_file``)."""
    result = icc_process(
        "filter", "--model", "lite", "-i", "-", "--format", "jsonl", "-o", tmp_path / "kept.jsonl", "--top-k", "3",
        input=ROWS,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert len((tmp_path / "kept.jsonl").read_text().splitlines()) == 3


def test_a_link_at_minis_graph_lock_is_refused_then_links_at_its_files_are_replaced(tmp_path, victim, monkeypatch):
    """The graph cache's lock (filelock>=3.20.3 opens it with O_NOFOLLOW) and its three files (atomic writes)."""
    from modeling_icc.models.mini import onnx_export, onnx_graph
    from modeling_icc.models.mini.files import read_heads_payload, recorded_base_sha, sha256_prefix, shipped_heads_path

    def fake_export(heads_path, base_path, graph, weights_name):  # the files' writing, not torch's export
        Path(graph).write_bytes(b"graph")
        (Path(graph).parent / weights_name).write_bytes(b"weights")

    monkeypatch.setattr(onnx_export, "save_graph", fake_export)
    monkeypatch.setenv(onnx_graph.CACHE_DIR_ENV, str(tmp_path / "cache"))
    heads = shipped_heads_path()
    name = f"mini-v{onnx_graph.GRAPH_VERSION}-{sha256_prefix(heads)}-{recorded_base_sha(read_heads_payload(heads))}"
    files = onnx_graph.GraphFiles.named(tmp_path / "cache", name)
    lock = files.graph.with_suffix(".lock")
    lock.parent.mkdir()
    lock.symlink_to(victim)
    with pytest.raises(UserInputError, match=f"{lock} is a symbolic link, where icc keeps a file of its own"):
        onnx_graph.mini_graph(heads)
    assert victim.read_text() == PRECIOUS
    lock.unlink()  # the advice
    for path in (files.graph, files.weights, files.record):
        path.symlink_to(victim)
    graph, _ = onnx_graph.mini_graph(heads)
    assert victim.read_text() == PRECIOUS and graph == files.graph and graph.read_bytes() == b"graph"
    assert not any(path.is_symlink() for path in (files.graph, files.weights, files.record))


def test_files_saved_by_a_library_are_renamed_into_place_over_links(tmp_path, victim):
    """``icc convert`` saves with transformers' ``save_pretrained`` (files written by name) through a scratch folder."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").symlink_to(victim)
    with files_moved_into(folder) as scratch:
        (scratch / "config.json").write_text("{}")
        (scratch / "sub").mkdir()
        (scratch / "sub" / "file.txt").write_text("x")
    assert victim.read_text() == PRECIOUS
    assert (folder / "config.json").read_text() == "{}" and (folder / "sub" / "file.txt").read_text() == "x"
    assert sorted(path.name for path in folder.iterdir()) == ["config.json", "sub"]  # no scratch folder left


def test_lite_models_and_lexicons_are_saved_atomically(tmp_path, victim):
    from modeling_icc.models.lite.modeling_lite import LiteModel, default_lite_model
    from modeling_icc.training.build_lite_lexicon import write_lexicon

    (tmp_path / "model.json").symlink_to(victim)
    default_lite_model().save(tmp_path / "model.json")
    assert isinstance(LiteModel.load(tmp_path / "model.json"), LiteModel) and victim.read_text() == PRECIOUS
    lexicon = tmp_path / "lexicon"
    lexicon.mkdir()
    for name in ("lexicon.tsv.gz", "lexicon_sources.json"):
        (lexicon / name).symlink_to(victim)
    row = {"concreteness": 4.5, "visual": 4.0, "concreteness_source": "test"}
    write_lexicon({"dog": row}, lexicon, include_mrc=False)
    assert victim.read_text() == PRECIOUS
    assert not any(path.is_symlink() for path in lexicon.iterdir())


def test_the_spaces_downloads_go_to_private_fresh_folders():
    """The Space writes each download into a new folder of its own (``mkdtemp``: mode 0700) inside one
    ``TemporaryDirectory``: no one else can plant a link there."""
    from modeling_icc.apps import gradio as space

    folder = Path(space.download_folder().name)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_two_threads_never_hold_one_lock(tmp_path):
    """The lock is still a lock: while one holder has it, another is refused as busy."""
    held, refused = threading.Event(), []

    def second():
        held.wait()
        try:
            with locked(tmp_path / "out"):
                pass
        except UserInputError as error:
            refused.append(str(error))

    thread = threading.Thread(target=second)
    thread.start()
    with locked(tmp_path / "out"):
        held.set()
        thread.join()
    assert refused and "another icc job is writing to" in refused[0]
    write_text(tmp_path / "out" / "after.txt", "ok")  # the folder is usable once released


def test_fitted_heads_are_saved_atomically(tmp_path, victim):
    """Weights saved with safetensors (mini's heads, the ridge baseline's head) are serialized, then written
    atomically: ``save_file`` opened the path by name, through a link there."""
    from modeling_icc.evaluation.baselines.embedding_ridge import RidgeHead

    link = tmp_path / "head.safetensors"  # mini's heads: models/mini/modeling_mini.py::save_heads, the same way
    link.symlink_to(victim)
    RidgeHead(np.ones(4, np.float32), 0.5, alpha=1.0, n_train=3).save(link)
    assert victim.read_text() == PRECIOUS and not link.is_symlink()
    assert RidgeHead.load(link).n_train == 3

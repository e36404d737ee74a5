"""The Spaces demo: paste or upload captions, see scores, a chart, word contributions, and a filter.

All logic lives here so that ``hub_cards/space/app.py`` stays a three-line launcher and
tests drive the same functions with ``gradio_client`` and a real browser. Needs the
``space`` extra (gradio).

A Space is public: it loads only the models its owner lists (:func:`model_choices`), and every
request is held to the caps below before any scoring, so no visitor can probe the server's
files or hold its CPU.
"""

from __future__ import annotations

import html
import lzma
import os
import shutil
import tempfile
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

from ..curation.io import compression
from ..curation.io.tables import TEXT_COLUMN, CaptionTable, infer_format, iter_tables, read_table, write_table
from ..curation.selection import KeepRule, keep_mask
from ..scoring.base import ConcretenessScorer
from ..scoring.languages import caption_languages
from ..scoring.load import (
    DEFAULT_MODEL_ID,
    LITE_MODEL_ID,
    MINI_MODEL_ID,
    PUBLISHED_MODEL_ID,
    CheckpointError,
    ModelNotAvailableError,
    fallback_notices,
    load_scorer,
)
from ..utils.citation import PAPER_URL
from ..utils.errors import UserInputError
from ..utils.extras import GRADIO
from ..utils.shipped_data import paper_examples

try:
    import gradio as gr
except ModuleNotFoundError as error:  # the demo is the one part of the package that needs gradio
    if error.name != "gradio":
        raise
    raise ModuleNotFoundError(f"the ICC Space needs gradio: {GRADIO.command}", name="gradio") from error

#: Largest upload gradio takes (bytes; refused while it arrives): a 1,000-row caption table is far
#: smaller, even with other columns; larger files belong to `icc score`.
MAX_UPLOAD_BYTES = 5_000_000
#: Largest upload once decompressed (bytes; Parquet: its uncompressed data), read as a stream and
#: stopped here: a small gzip file can expand a thousandfold.
MAX_FILE_BYTES = 10_000_000
#: Most captions scored per request: the demo is interactive; large files belong to `icc score`.
MAX_ROWS = 1_000
#: Longest caption read (characters), 4x CC3M's longest; a longer one is refused, not cut, since a cut
#: caption would get a score for a text nobody wrote.
MAX_CAPTION_CHARS = 1_000
#: Most characters per request (the text box as sent; a file's captions): what one request may cost.
MAX_REQUEST_CHARS = 100_000
#: Captions whose words are coloured by contribution (students' occlusion costs one pass per word).
HIGHLIGHT_ROWS = 10
#: Bytes read at a time while an upload's decompressed size is counted.
_READ_BLOCK = 1 << 20
#: Bars drawn in the chart (the table holds every row).
CHART_ROWS = 50
#: Seconds a download file stays in the Space's own folder (gradio serves its copy from its cache).
DOWNLOAD_LIFETIME_S = 3600
ORDERS = ("input order", "most concrete first")
MINI_CHOICE = "mini (MiniLM + heads, no download)"
LITE_CHOICE = "lite (embedded, no download)"
PUBLISHED_CHOICE = f"{PUBLISHED_MODEL_ID} (published student; lite where it cannot be loaded)"
#: The model the published choice falls back to (with a notice) where it cannot be loaded:
#: lite, which starts at once and cannot fail to load.
PUBLISHED_FALLBACK = LITE_MODEL_ID
#: Model id -> its selector label, for the models a Space offers unless its owner lists others.
MODEL_LABELS = {MINI_MODEL_ID: MINI_CHOICE, LITE_MODEL_ID: LITE_CHOICE, PUBLISHED_MODEL_ID: PUBLISHED_CHOICE}
#: More models a Space offers after those (comma-separated Hub ids or server folders), set by its owner.
MODELS_ENV = "ICC_SPACE_MODELS"
#: The one answer to a model that is not offered: the same whatever was sent, so it tells nothing of the server.
REFUSED_MODEL = "That model is not offered here: choose one from the model list."
_USE_THE_CLI = "For large files use the command line: `icc score --input FILE --output scored.csv`."
#: The selector's initial choice: the package's default model (mini, no download).
DEFAULT_CHOICE = MODEL_LABELS[DEFAULT_MODEL_ID]
TABLE_HEADERS = ["#", "ICC", "kept", "language", "caption"]


@dataclass
class ScoredRows:
    """One scoring request, kept in the session so the threshold slider needs no rescoring."""

    table: CaptionTable
    scores: np.ndarray
    model_id: str
    source: str
    #: Why another model than the selected one scored the rows (empty when none did).
    notice: str = ""

    @property
    def captions(self) -> list[str]:
        return ["" if caption is None else str(caption) for caption in self.table.captions]

    @cached_property
    def languages(self) -> list[str | None]:
        """Each caption's language code, as the scorer named it (``None``: blank)."""
        return caption_languages(self.table.captions)

    @property
    def not_read(self) -> np.ndarray:
        """Rows without a score because the model does not read their caption's language (not blank ones)."""
        named = np.array([language is not None for language in self.languages], dtype=bool)
        return np.isnan(self.scores) & named


def captions_from_text(text: str | None) -> CaptionTable:
    """One caption per non-blank line of the paste box, within the request's caps."""
    text = text or ""
    if len(text) > MAX_REQUEST_CHARS:
        raise UserInputError(
            f"{len(text):,} characters in the text box: the demo reads at most {MAX_REQUEST_CHARS:,} "
            f"characters per request. {_USE_THE_CLI}"
        )
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise UserInputError("Nothing to score: paste captions (one per line) or upload a CSV/JSONL file.")
    if len(lines) > MAX_ROWS:
        raise _too_many_rows(f"{len(lines):,} lines pasted")
    _check_captions(lines, "caption {}")
    return CaptionTable(
        "txt", TEXT_COLUMN, lines, records=[{TEXT_COLUMN: line} for line in lines], fieldnames=[TEXT_COLUMN]
    )


def captions_from_file(path: str | os.PathLike, column: str = TEXT_COLUMN) -> CaptionTable:
    """Captions of an uploaded CSV/TSV/JSONL/TXT/Parquet file, other columns kept for the download.

    Its decompressed size and its rows are checked while it is read as a stream, before it is read
    whole: a small upload can hold gigabytes of text or millions of rows.
    """
    path, name, column = Path(path), Path(path).name, column or TEXT_COLUMN
    with _reading(path, name):
        fmt = infer_format(path)
    _check_upload(path, fmt, column, name)
    with _reading(path, name):
        table = read_table(path, fmt, column=column)
    if len(table) == 0:
        raise UserInputError(f"{name} holds no rows.")
    _check_captions(["" if caption is None else str(caption) for caption in table.captions], f"row {{}} of {name}")
    return table


def _check_upload(path: Path, fmt: str, column: str, name: str) -> None:
    """Refuse an upload over :data:`MAX_FILE_BYTES` decompressed or :data:`MAX_ROWS` rows, reading no further."""
    with _reading(path, name):
        unpacked = _unpacked_bytes(path, fmt)
    if unpacked > MAX_FILE_BYTES:
        raise UserInputError(
            f"{name} holds more than {_megabytes(MAX_FILE_BYTES)} once decompressed: the demo reads at most "
            f"that much. {_USE_THE_CLI}"
        )
    with _reading(path, name):
        rows = _rows_up_to(path, fmt, column, MAX_ROWS + 1)
    if rows > MAX_ROWS:
        raise _too_many_rows(f"more than {MAX_ROWS:,} rows in {name}")


@contextmanager
def _reading(path: Path, name: str) -> Iterator[None]:
    """Read errors name the upload as the user knows it, not by its temporary path."""
    try:
        yield
    except UserInputError as error:
        reason = str(error).replace(f"{os.fspath(path)}: ", "").replace(os.fspath(path), name)
        raise UserInputError(f"Could not read {name}: {reason}") from None


def _unpacked_bytes(path: Path, fmt: str) -> int:
    """The upload's decompressed size, counted no further than just past :data:`MAX_FILE_BYTES`."""
    if fmt == "parquet":
        return _parquet_bytes(path)
    counted = 0
    with path.open("rb") as raw, compression.decompressed(raw) as stream:
        while counted <= MAX_FILE_BYTES and (block := _read_block(stream)):
            counted += len(block)
    return counted


def _read_block(stream: BinaryIO) -> bytes:
    try:
        return stream.read(_READ_BLOCK)
    except (EOFError, OSError, ValueError, zlib.error, lzma.LZMAError) as error:  # zstd: ArrowInvalid, a ValueError
        raise UserInputError(f"its compressed data is damaged ({error})") from None


def _parquet_bytes(path: Path) -> int:
    """A Parquet file's uncompressed size from its footer (0 where it has none: the reader says why)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_metadata(path)
    except (pa.ArrowException, OSError):
        return 0
    return sum(metadata.row_group(index).total_byte_size for index in range(metadata.num_row_groups))


def _rows_up_to(path: Path, fmt: str, column: str, limit: int) -> int:
    """The upload's rows, counted no further than ``limit``: a file of a million rows is not read whole."""
    counted = 0
    with closing(iter_tables(path, fmt, column, rows=limit)) as tables:
        for table in tables:
            counted += len(table)
            if counted >= limit:
                break
    return counted


def _megabytes(n_bytes: int) -> str:
    return f"{n_bytes / 1_000_000:g} MB"


def _too_many_rows(what: str) -> UserInputError:
    return UserInputError(f"{what}: the demo scores at most {MAX_ROWS:,} captions at a time. {_USE_THE_CLI}")


def _check_captions(captions: list[str], where: str) -> None:
    """Refuse a request with a caption over :data:`MAX_CAPTION_CHARS` or over :data:`MAX_REQUEST_CHARS` in all."""
    for number, caption in enumerate(captions, start=1):
        if len(caption) > MAX_CAPTION_CHARS:
            raise UserInputError(
                f"{where.format(number)} has {len(caption):,} characters: the demo reads captions of at most "
                f"{MAX_CAPTION_CHARS:,} characters (longer ones are refused, not cut). {_USE_THE_CLI}"
            )
    total = sum(map(len, captions))
    if total > MAX_REQUEST_CHARS:
        raise UserInputError(
            f"{total:,} characters of captions: the demo reads at most {MAX_REQUEST_CHARS:,} characters per "
            f"request. {_USE_THE_CLI}"
        )


def model_choices(models: Mapping[str, str] | Iterable[str] | None = None) -> dict[str, str]:
    """Selector label -> model id: the models a Space offers, and the only ones it loads.

    ``models`` is the owner's list: model ids (Hub ids, ``"mini"``, ``"lite"``, server folders) or
    label -> id. Without it: mini, lite and the published student, then the ids in :data:`MODELS_ENV`.
    """
    if models is None:
        extra = [entry.strip() for entry in os.environ.get(MODELS_ENV, "").split(",") if entry.strip()]
        models = [*MODEL_LABELS, *extra]
    choices = dict(models) if isinstance(models, Mapping) else {MODEL_LABELS.get(m, m): m for m in models}
    if not choices:
        raise ValueError("a Space offers at least one model")
    return choices


def resolve_model(choice: object, choices: Mapping[str, str]) -> str:
    """The model id of a listed ``choice``; any other value, whatever it names, gets :data:`REFUSED_MODEL`.

    Checked here, not only by the selector: a client can send any value through the API.
    """
    if not isinstance(choice, str) or choice not in choices:
        raise UserInputError(REFUSED_MODEL)
    return choices[choice]


def score_table_rows(table: CaptionTable, model_id: str, source: str) -> ScoredRows:
    """Score with ``model_id`` (the published student falls back to lite, with a notice, where it cannot load)."""
    fallback = PUBLISHED_FALLBACK if model_id == PUBLISHED_MODEL_ID else None
    with fallback_notices() as notices:
        scorer = load_scorer(model_id, fallback=fallback, cache=True)
    return ScoredRows(table, scorer.score(table.captions, errors="nan"), scorer.model_id, source, " ".join(notices))


def results_frame(rows: ScoredRows, threshold: float, order: str) -> pd.DataFrame:
    """The score table: input row number, score, whether the filter keeps it, caption."""
    kept = keep_mask(rows.scores, KeepRule(threshold=threshold))
    frame = pd.DataFrame(
        {
            "#": np.arange(1, len(rows.scores) + 1),
            "ICC": np.round(rows.scores.astype(np.float64), 3),
            "kept": np.where(kept, "yes", "no"),
            "language": rows.languages,
            "caption": rows.captions,
        }
    )
    if order == ORDERS[1]:
        frame = frame.sort_values("ICC", ascending=False, na_position="last", kind="stable")
    return frame.reset_index(drop=True)


def chart_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The first rows of the table as bars, labelled by row number and the caption's start."""
    shown = frame.head(CHART_ROWS).dropna(subset=["ICC"])
    labels = [f"#{n} {_shorten(caption, 28)}" for n, caption in zip(shown["#"], shown["caption"], strict=True)]
    return pd.DataFrame({"caption": labels, "ICC": shown["ICC"].to_numpy(), "kept": shown["kept"].to_numpy()})


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def filter_summary(rows: ScoredRows, threshold: float) -> str:
    kept = int(keep_mask(rows.scores, KeepRule(threshold=threshold)).sum())
    n = len(rows.scores)
    not_read = int(rows.not_read.sum())
    blank = int(np.isnan(rows.scores).sum()) - not_read
    notes = []
    if blank:
        notes.append(f"{blank} blank")
    if not_read:
        notes.append(f"{not_read} in a language `{rows.model_id}` does not read")
    note = f" ({'; '.join(notes)}, never kept)" if notes else ""
    summary = (
        f"Scored **{n}** captions from {rows.source} with `{rows.model_id}`{note}. "
        f"A filter at ICC ≥ {threshold:.2f} keeps **{kept} of {n}** ({kept / n:.0%})."
    )
    return summary + (f"\n\nℹ️ {rows.notice}" if rows.notice else "")


def highlights_html(scorer: ConcretenessScorer, frame: pd.DataFrame) -> str:
    """The first rows' words coloured by contribution (green: more concrete, red: less).

    Uses ``scorer.explain_many`` (exact terms for lite, occlusion for students), so the
    colours show what the selected model itself responds to.
    """
    shown = frame.head(HIGHLIGHT_ROWS)
    shown = shown[[isinstance(caption, str) and bool(caption.strip()) for caption in shown["caption"]]]
    if shown.empty:
        return ""
    explanations = scorer.explain_many(list(shown["caption"]))
    lines = []
    for (number, score), explanation in zip(shown[["#", "ICC"]].itertuples(index=False), explanations, strict=True):
        scale = max((abs(value) for _, value in explanation), default=0.0) or 1.0
        spans = "".join(
            html.escape(piece) if value is None else _word_span(piece, value, scale)
            for piece, value in explanation.segments()
        )
        head = f'<b>#{number}</b> <code class="icc-score">{score:.3f}</code>'
        lines.append(f'<div class="icc-caption">{head} {spans}</div>')
    return '<div class="icc-highlights">' + "\n".join(lines) + "</div>"


def _word_span(word: str, value: float, scale: float) -> str:
    strength = min(abs(value) / scale, 1.0)
    rgb = "22,163,74" if value >= 0 else "220,38,38"
    return (
        f'<span class="icc-word" data-contribution="{value:.4f}" title="{value:+.3f}" '
        f'style="background: rgba({rgb},{0.15 + 0.6 * strength:.2f}); padding: 0 2px; border-radius: 3px">'
        f"{html.escape(word)}</span>"
    )


@lru_cache(maxsize=1)
def download_folder() -> tempfile.TemporaryDirectory:
    """The one folder of this server process's downloads, removed with everything in it when the process exits."""
    return tempfile.TemporaryDirectory(prefix="icc-space-")


def write_download(rows: ScoredRows, threshold: float) -> str:
    """The scored rows as a file in the upload's format (CSV for pasted text), every column kept.

    Gradio copies the file into its own cache when it answers; ours is kept :data:`DOWNLOAD_LIFETIME_S`
    (removed by a later request), so that a long-running Space does not fill its disk."""
    fmt = "csv" if rows.table.fmt == "txt" else rows.table.fmt
    folder = Path(download_folder().name)
    expired = time.time() - DOWNLOAD_LIFETIME_S
    for old in folder.iterdir():
        if old.stat().st_mtime < expired:
            shutil.rmtree(old, ignore_errors=True)
    path = Path(tempfile.mkdtemp(dir=folder)) / f"icc_scored.{fmt}"
    kept = keep_mask(rows.scores, KeepRule(threshold=threshold))
    columns = {
        "icc_score": rows.scores,
        "icc_model": [rows.model_id] * len(rows.scores),
        "icc_language": rows.languages,
        "icc_kept": kept.tolist(),
    }
    write_table(rows.table, path, fmt, columns)
    return str(path)


def _error(message: str) -> str:
    return f"⚠️ **{message}**"


def limits_markdown(uploads: bool = True) -> str:
    """The caps, stated on the page: a visitor should not learn them from a refusal."""
    limits = (
        f"Limits per request: at most {MAX_ROWS:,} captions, {MAX_CAPTION_CHARS:,} characters per caption "
        f"(a longer caption is refused, not cut) and {MAX_REQUEST_CHARS:,} characters in all"
    )
    if uploads:
        limits += (
            f"; uploads up to {_megabytes(MAX_UPLOAD_BYTES)}, {_megabytes(MAX_FILE_BYTES)} once "
            f"decompressed. Word contributions: the first {HIGHLIGHT_ROWS} rows of the table (at most "
            f"{HIGHLIGHT_ROWS * MAX_CAPTION_CHARS:,} characters)"
        )
    return limits + ". Larger jobs: `icc score` on your own machine."


def launch_space(demo: gr.Blocks, **options) -> tuple:
    """``demo.launch(**options)`` with :data:`MAX_UPLOAD_BYTES`: gradio refuses a larger upload as it arrives."""
    return demo.launch(max_file_size=MAX_UPLOAD_BYTES, **options)


def _initial(choices: Mapping[str, str], preferred: str) -> str:
    """``preferred`` if the owner listed it, else the first listed choice."""
    return preferred if preferred in choices else next(iter(choices))


def build_demo(models: Mapping[str, str] | Iterable[str] | None = None) -> gr.Blocks:
    """The Gradio Blocks app, offering ``models`` only (see :func:`model_choices`; default: mini, lite,
    the published student and those in :data:`MODELS_ENV`). Serve it with :func:`launch_space`."""
    choices = model_choices(models)
    examples = paper_examples()

    def score(text, upload, choice, column, order, threshold):
        try:
            model_id = resolve_model(choice, choices)
            if upload:
                table, source = captions_from_file(upload, column), f"`{Path(upload).name}`"
            else:
                table, source = captions_from_text(text), "the text box"
            rows = score_table_rows(table, model_id, source)
        except (UserInputError, ModelNotAvailableError, CheckpointError) as error:
            empty = pd.DataFrame(columns=TABLE_HEADERS)
            return _error(str(error)), empty, chart_frame(empty), "", None, None
        frame = results_frame(rows, threshold, order)
        highlights = highlights_html(load_scorer(rows.model_id, cache=True), frame)
        return (
            filter_summary(rows, threshold),
            frame,
            chart_frame(frame),
            highlights,
            write_download(rows, threshold),
            rows,
        )

    def refilter(rows, order, threshold):
        if rows is None:
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        frame = results_frame(rows, threshold, order)
        return filter_summary(rows, threshold), frame, chart_frame(frame), write_download(rows, threshold)

    with gr.Blocks(title="ICC: Image Caption Concreteness", analytics_enabled=False) as demo:
        gr.Markdown(
            "# ICC: Image Caption Concreteness\n"
            "How visually concrete is a caption? ICC scores text alone on [0, 1] (higher = easier to picture), "
            "to keep captions an image model can learn from. "
            f"[Paper]({PAPER_URL})"
        )
        with gr.Row():
            with gr.Column(scale=3):
                text = gr.Textbox(
                    label="Captions (one per line)",
                    lines=8,
                    max_lines=20,
                    placeholder="a man with a white shirt\na great method of quantifying concreteness",
                    elem_id="icc-captions",
                )
                upload = gr.File(
                    label=f"…or upload CSV / TSV / JSONL / Parquet (≤ {MAX_ROWS:,} rows, "
                    f"≤ {_megabytes(MAX_UPLOAD_BYTES)}; used instead of the box)",
                    file_types=[".csv", ".tsv", ".jsonl", ".json", ".txt", ".parquet"],
                    elem_id="icc-upload",
                )
                column = gr.Textbox(value=TEXT_COLUMN, label="caption column (files)", max_lines=1)
            with gr.Column(scale=2):
                choice = gr.Dropdown(
                    list(choices), value=_initial(choices, DEFAULT_CHOICE), label="model", elem_id="icc-model"
                )
                order = gr.Radio(list(ORDERS), value=ORDERS[0], label="table order")
                threshold = gr.Slider(0.0, 1.0, value=0.5, step=0.01, label="keep threshold (ICC ≥)")
                button = gr.Button("Score", variant="primary", elem_id="icc-score-button")
                paste_all = gr.Button("Paste all paper examples", size="sm")
        gr.Markdown(limits_markdown(), elem_id="icc-limits")
        gr.Examples(
            [[row["caption"]] for row in examples],
            inputs=[text],
            label="Captions from the ICC paper (click one to load it)",
            examples_per_page=12,
        )
        status = gr.Markdown(elem_id="icc-status")
        table = gr.Dataframe(headers=TABLE_HEADERS, label="scores", interactive=False, wrap=True, elem_id="icc-table")
        chart = gr.BarPlot(
            pd.DataFrame(columns=["caption", "ICC", "kept"]),
            x="caption",
            y="ICC",
            color="kept",
            color_map={"yes": "#16a34a", "no": "#9ca3af"},
            y_lim=[0, 1],
            x_label_angle=-40,
            label=f"ICC per caption (first {CHART_ROWS} rows of the table)",
            elem_id="icc-chart",
        )
        gr.Markdown(f"**Word contributions** (first {HIGHLIGHT_ROWS} rows of the table; green = more concrete)")
        highlights = gr.HTML(elem_id="icc-highlights")
        download = gr.File(label="scored file", interactive=False, elem_id="icc-download")
        state = gr.State()

        button.click(
            score,
            [text, upload, choice, column, order, threshold],
            [status, table, chart, highlights, download, state],
            api_name="score",
        )
        for control in (threshold, order):
            control.change(
                refilter,
                [state, order, threshold],
                [status, table, chart, download],
                api_name=False,
                show_progress="hidden",
            )
        paste_all.click(lambda: "\n".join(row["caption"] for row in examples), None, text, api_name=False)
    return demo


def build_metric_demo(measurement, models: Mapping[str, str] | Iterable[str] | None = None) -> gr.Blocks:
    """The evaluate module's own Space: captions in, the measurement's JSON out.

    ``measurement`` is the loaded ``evaluate`` module (evaluate's built-in widget does
    not run on current Gradio, hence this small app); ``models`` as for :func:`build_demo`,
    offered by model id. Serve it with :func:`launch_space`.
    """
    offered = {model_id: model_id for model_id in model_choices(models).values()}

    def compute(text, model_id, aggregation, threshold):
        try:
            chosen = resolve_model(model_id, offered)
            return measurement.compute(
                predictions=captions_from_text(text).captions,  # blank lines dropped: no NaN for JSON
                model_id=chosen,
                aggregation=None if aggregation == "none" else aggregation,
                threshold=threshold,
            )
        except (UserInputError, ModelNotAvailableError, CheckpointError) as error:
            return {"error": str(error)}

    with gr.Blocks(title="ICC evaluate module", analytics_enabled=False) as demo:
        gr.Markdown(
            "# ICC measurement (`evaluate`)\n"
            '`evaluate.load("<this Space>", "lite").compute(predictions=captions, aggregation="all")`; '
            f"without a configuration name the module scores with `{DEFAULT_MODEL_ID}`.\n\n"
            + limits_markdown(uploads=False)
        )
        text = gr.Textbox(label="predictions (one caption per line)", lines=6)
        model_id = gr.Dropdown(list(offered), value=_initial(offered, LITE_MODEL_ID), label="model_id")
        aggregation = gr.Radio(["none", "mean", "median", "quantiles", "all"], value="all", label="aggregation")
        threshold = gr.Slider(0.0, 1.0, value=0.5, step=0.01, label="threshold (kept_fraction)")
        output = gr.JSON(label="result")
        gr.Button("Compute", variant="primary").click(
            compute, [text, model_id, aggregation, threshold], output, api_name="compute"
        )
    return demo

"""The Spaces demo: paste or upload captions, see scores, a chart, word contributions, and a filter.

All logic lives here so that ``hub_cards/space/app.py`` stays a three-line launcher and
tests drive the same functions with ``gradio_client`` and a real browser. Needs the
``space`` extra (gradio).
"""

from __future__ import annotations

import html
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..curation.io.tables import TEXT_COLUMN, CaptionTable, infer_format, read_table, write_table
from ..curation.selection import KeepRule, keep_mask
from ..scoring.base import ConcretenessScorer
from ..scoring.load import (
    DEFAULT_MODEL_ID,
    LITE_MODEL_ID,
    MINI_MODEL_ID,
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

#: Most captions scored per request: the demo is interactive; large files belong to `icc score`.
MAX_ROWS = 1_000
#: Captions whose words are coloured by contribution (explanations cost one pass per word).
HIGHLIGHT_ROWS = 10
#: Bars drawn in the chart (the table holds every row).
CHART_ROWS = 50
ORDERS = ("input order", "most concrete first")
MINI_CHOICE = "mini (MiniLM + heads, no download)"
LITE_CHOICE = "lite (embedded, no download)"
PUBLISHED_CHOICE = f"{DEFAULT_MODEL_ID} (published student; lite where it cannot be loaded)"
#: The model the published choice falls back to (with a notice) where it cannot be loaded:
#: lite, which starts at once and cannot fail to load.
PUBLISHED_FALLBACK = LITE_MODEL_ID
LOCAL_CHOICE = "local path"
TABLE_HEADERS = ["#", "ICC", "kept", "caption"]


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


def captions_from_text(text: str | None) -> CaptionTable:
    """One caption per non-blank line of the paste box."""
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if not lines:
        raise UserInputError("Nothing to score: paste captions (one per line) or upload a CSV/JSONL file.")
    _check_size(len(lines), "lines pasted")
    return CaptionTable(
        "txt", TEXT_COLUMN, lines, records=[{TEXT_COLUMN: line} for line in lines], fieldnames=[TEXT_COLUMN]
    )


def captions_from_file(path: str | os.PathLike, column: str = TEXT_COLUMN) -> CaptionTable:
    """Captions of an uploaded CSV/TSV/JSONL/TXT/Parquet file, other columns kept for the download."""
    name = Path(path).name
    try:
        table = read_table(path, infer_format(path), column=column or TEXT_COLUMN)
    except UserInputError as error:
        # The upload sits under a temporary path; the user knows it by its name.
        reason = str(error).replace(f"{os.fspath(path)}: ", "").replace(os.fspath(path), name)
        raise UserInputError(f"Could not read {name}: {reason}") from None
    if len(table) == 0:
        raise UserInputError(f"{name} holds no rows.")
    _check_size(len(table), f"rows in {name}")
    return table


def _check_size(n: int, what: str) -> None:
    if n > MAX_ROWS:
        raise UserInputError(
            f"{n:,} {what}: the demo scores at most {MAX_ROWS:,} captions at a time. "
            "For large files use the command line: `icc score --input FILE --output scored.csv`."
        )


def model_choices(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Selector label -> model id: the published student, the zero-download models, ``extra``, a local path."""
    return {
        PUBLISHED_CHOICE: DEFAULT_MODEL_ID,
        MINI_CHOICE: MINI_MODEL_ID,
        LITE_CHOICE: LITE_MODEL_ID,
        **(extra or {}),
        LOCAL_CHOICE: "",
    }


def resolve_model(choice: str, local_path: str | None, choices: dict[str, str]) -> str:
    if choice == LOCAL_CHOICE:
        path = (local_path or "").strip()
        if not path:
            raise UserInputError("Type the folder of a saved ICC student in 'local path'.")
        if not Path(path).expanduser().is_dir():
            raise UserInputError(f"No such folder: {path}")
        return path
    if choice not in choices:
        raise UserInputError(f"Unknown model {choice!r}; choose one of: {', '.join(choices)}")
    return choices[choice]


def score_table_rows(table: CaptionTable, model_id: str, source: str) -> ScoredRows:
    """Score with ``model_id`` (the published student falls back to lite, with a notice, where it cannot load)."""
    fallback = PUBLISHED_FALLBACK if model_id == DEFAULT_MODEL_ID else None
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
    blank = int(np.isnan(rows.scores).sum())
    note = f" ({blank} blank, never kept)" if blank else ""
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
        spans = " ".join(_word_span(word, value, scale) for word, value in explanation)
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


def write_download(rows: ScoredRows, threshold: float) -> str:
    """The scored rows as a file in the upload's format (CSV for pasted text), every column kept."""
    fmt = "csv" if rows.table.fmt == "txt" else rows.table.fmt
    path = Path(tempfile.mkdtemp(prefix="icc-space-")) / f"icc_scored.{fmt}"
    kept = keep_mask(rows.scores, KeepRule(threshold=threshold))
    columns = {"icc_score": rows.scores, "icc_model": [rows.model_id] * len(rows.scores), "icc_kept": kept.tolist()}
    write_table(rows.table, path, fmt, columns)
    return str(path)


def _error(message: str) -> str:
    return f"⚠️ **{message}**"


def build_demo(extra_models: dict[str, str] | None = None) -> gr.Blocks:
    """The Gradio Blocks app; ``extra_models`` adds selector entries (label -> Hub id or folder)."""
    choices = model_choices(extra_models)
    examples = paper_examples()

    def score(text, upload, choice, local_path, column, order, threshold):
        try:
            model_id = resolve_model(choice, local_path, choices)
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
                    label=f"…or upload CSV / TSV / JSONL / Parquet (≤ {MAX_ROWS:,} rows; used instead of the box)",
                    file_types=[".csv", ".tsv", ".jsonl", ".json", ".txt", ".parquet"],
                    elem_id="icc-upload",
                )
                column = gr.Textbox(value=TEXT_COLUMN, label="caption column (files)", max_lines=1)
            with gr.Column(scale=2):
                choice = gr.Dropdown(list(choices), value=PUBLISHED_CHOICE, label="model", elem_id="icc-model")
                local_path = gr.Textbox(label="local path (folder of a saved student)", max_lines=1)
                order = gr.Radio(list(ORDERS), value=ORDERS[0], label="table order")
                threshold = gr.Slider(0.0, 1.0, value=0.5, step=0.01, label="keep threshold (ICC ≥)")
                button = gr.Button("Score", variant="primary", elem_id="icc-score-button")
                paste_all = gr.Button("Paste all paper examples", size="sm")
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
            [text, upload, choice, local_path, column, order, threshold],
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


def build_metric_demo(measurement) -> gr.Blocks:
    """The evaluate module's own Space: captions in, the measurement's JSON out.

    ``measurement`` is the loaded ``evaluate`` module (evaluate's built-in widget does
    not run on current Gradio, hence this small app).
    """

    def compute(text, model_id, aggregation, threshold):
        try:
            return measurement.compute(
                predictions=captions_from_text(text).captions,  # blank lines dropped: no NaN for JSON
                model_id=model_id.strip() or None,  # empty: the model the module was loaded with
                aggregation=None if aggregation == "none" else aggregation,
                threshold=threshold,
            )
        except (UserInputError, ModelNotAvailableError, CheckpointError) as error:
            return {"error": str(error)}

    with gr.Blocks(title="ICC evaluate module", analytics_enabled=False) as demo:
        gr.Markdown(
            "# ICC measurement (`evaluate`)\n"
            '`evaluate.load("<this Space>", "lite").compute(predictions=captions, aggregation="all")`; '
            f"without a configuration name the module scores with `{DEFAULT_MODEL_ID}`."
        )
        text = gr.Textbox(label="predictions (one caption per line)", lines=6)
        model_id = gr.Textbox(
            value=LITE_MODEL_ID, label=f"model_id (lite, a Hub id; empty: the module's model, {DEFAULT_MODEL_ID})"
        )
        aggregation = gr.Radio(["none", "mean", "median", "quantiles", "all"], value="all", label="aggregation")
        threshold = gr.Slider(0.0, 1.0, value=0.5, step=0.01, label="threshold (kept_fraction)")
        output = gr.JSON(label="result")
        gr.Button("Compute", variant="primary").click(
            compute, [text, model_id, aggregation, threshold], output, api_name="compute"
        )
    return demo

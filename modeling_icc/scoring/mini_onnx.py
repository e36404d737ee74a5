"""mini on ONNX Runtime, in fp32: its runtime on CPUs without native bf16, and wherever torch is not
installed (``execution.py`` decides).

The same graph as the torch path (``models/mini/onnx_export.py`` traces it): the shipped mini runs the graph
the package ships, on the installed base weights, both checked against the package's sha256
(``models/mini/shipped_graph.py``); mini with other heads or base weights runs a graph built once per machine
from torch and cached (``onnx_graph.py``). Both are read the same way (``mini_reading.py``), with no torch
import: start-up is that of NumPy, ``tokenizers`` and ONNX Runtime. Batches run side by side, one per core,
each on one ONNX Runtime thread, as the torch runner does on CPUs (short captions make products too small for
several threads to share well).

The shipped mini explains on the explanation graph it ships. ``model`` and ``tokenizer`` need torch (the
``torch`` extra), and so does ``explain`` with other heads: they are served by a torch mini built on first use.
Once ``model`` has been asked for (it can be changed in place), ``score`` and ``explain`` go through that torch
mini too, so scores follow the model's weights as they do with the torch runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import onnxruntime

from ..models.mini.files import base_model_path, read_heads_payload, shipped_heads_path
from ..models.mini.onnx_graph import mini_graph
from ..models.mini.onnx_signature import ATTENTION_MASK, INPUT_IDS, LOGITS, PER_TOKEN, TERMS_BIAS
from ..models.mini.shipped_graph import verified_graph
from ..utils import extras
from .base import BATCH_SETTINGS
from .batching import pad_packed
from .chunks import Tokenize, caption_progress, sorted_chunks
from .mini_reading import TOKENIZER_FILE, MiniReading, default_batch_limits
from .threads import cpu_threads

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from ..models.mini.modeling_mini import MiniICCModel
    from .mini import MiniScorer


def cpu_session(
    graph: str | bytes, initializers: dict[str, onnxruntime.OrtValue] | None = None
) -> onnxruntime.InferenceSession:
    """An ONNX Runtime CPU session that runs one batch per thread that calls it; ``initializers``: the graph's
    tensors declared without data (ONNX Runtime reads them in place: the caller keeps them alive)."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    if initializers:
        options.add_external_initializers(list(initializers), list(initializers.values()))
    return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


class ShippedGraphs:
    """The shipped graphs on the base weights at ``base_path`` (default: the pip package's), all checked against
    the package's sha256 (``shipped_graph.py``): the scoring session at once, the explanation session on first
    use. The base tensors stay referenced here, as ONNX Runtime reads them in place."""

    def __init__(self, base_path: Path | None = None) -> None:
        verified = verified_graph(base_path)
        self._arrays = verified.initializers
        self._weights = {name: onnxruntime.OrtValue.ortvalue_from_numpy(array) for name, array in self._arrays.items()}
        self._terms_graph = verified.terms
        self.scoring = cpu_session(verified.graph, self._weights)

    @cached_property
    def terms(self) -> onnxruntime.InferenceSession:
        return cpu_session(self._terms_graph, self._weights)


def batch_threads() -> int:
    """Batches run at once: one per CPU thread of this process (the data engines set that to each worker
    process's share of the cores: ``threads.py``)."""
    return cpu_threads()


def probability(logits: np.ndarray) -> np.ndarray:
    """``sigmoid(logits)`` as float32, computed in float64 (as the torch heads compute it)."""
    return (1.0 / (1.0 + np.exp(-logits.astype(np.float64)))).astype(np.float32)


class MiniOnnxScorer(MiniReading):
    """mini (see :class:`~modeling_icc.scoring.mini.MiniScorer`) on ONNX Runtime's CPU provider, in fp32."""

    device = "cpu"
    dtype = "float32"

    def __init__(
        self,
        heads_path: Path | None = None,
        base_path: Path | None = None,
        *,
        torch_mini: Callable[[], MiniScorer] | None = None,
        batch_size: int | None = None,
        max_batch_tokens: int | None = None,
        progress: bool | None = None,
        tokenize_workers: int | None = None,
    ) -> None:
        """``heads_path`` and ``base_path``: mini's heads and base encoder (default: the shipped heads on the
        pip base); ``torch_mini``: builds the same mini on torch, for what needs torch (default: the shipped mini)."""
        rows, tokens = default_batch_limits(self.device, "onnxruntime")
        self.batch_size = batch_size or rows
        self.max_batch_tokens = max(max_batch_tokens or tokens, 8)
        self.progress = progress
        self.tokenize_workers = tokenize_workers
        self._shipped: ShippedGraphs | None = None
        if heads_path is None and base_path is None:  # the shipped mini: the shipped graphs, no build, no torch
            base_path = base_model_path()
            self._shipped = ShippedGraphs(base_path)
            self._session, payload = self._shipped.scoring, read_heads_payload(shipped_heads_path())
        else:
            base_path = base_path or base_model_path()
            graph, payload = mini_graph(heads_path or shipped_heads_path(), base_path)
            self._session = cpu_session(str(graph))
        self._set_reading(payload["config"], (base_path / TOKENIZER_FILE).read_text(encoding="utf-8"))
        self._build_torch_mini = torch_mini
        self._follows_model = False

    # --- what needs torch ----------------------------------------------------------------------------------

    @cached_property
    def _torch_mini(self) -> MiniScorer:
        extras.require([("mini's model and tokenizer (and explain() with other heads)", extras.TORCH)])
        if self._build_torch_mini is not None:
            return self._build_torch_mini()
        from .mini import MiniScorer

        return MiniScorer(device=self.device, dtype=self.dtype, progress=self.progress)

    @property
    def model(self) -> MiniICCModel:
        """The ``transformers`` model (built on first use); from then on, scores follow its weights."""
        self._follows_model = True
        return self._torch_mini.model

    @property
    def tokenizer(self) -> PreTrainedTokenizerBase:
        """The ``transformers`` tokenizer of the base encoder (built on first use)."""
        return self._torch_mini.tokenizer

    def _token_terms(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> tuple[np.ndarray, ...]:
        """On the shipped explanation graph; on torch for other heads, and once ``model`` was asked for (its
        weights may have changed). ``explain``'s ``score`` may differ from ``score()``'s by float32 rounding
        (about 1e-6): the graphs add a row's terms up in different orders."""
        if self._shipped is None or self._follows_model:
            return self._torch_mini._token_terms(input_ids, attention_mask)
        inputs = {INPUT_IDS: input_ids, ATTENTION_MASK: attention_mask}
        return tuple(self._shipped.terms.run([PER_TOKEN, TERMS_BIAS, LOGITS], inputs))

    # --- scoring --------------------------------------------------------------------------------------------

    def _score_valid(self, texts: list[str]) -> np.ndarray:
        if not self._follows_model:
            return super()._score_valid(texts)
        torch_mini = self._torch_mini
        for setting in BATCH_SETTINGS:
            setattr(torch_mini, setting, getattr(self, setting))
        return torch_mini._score_valid(texts)

    def _probability(self, logits: np.ndarray) -> np.ndarray:
        return probability(logits)

    def _default_tokenize_workers(self) -> int:
        return 0  # the cores run the model (see runner.default_tokenize_workers)

    def _run(self, rows: list, tokenize: Tokenize, output: str, workers: int = 0) -> np.ndarray:
        logits = np.empty(len(rows), dtype=np.float32)
        with caption_progress(len(rows), self.progress) as advance, ThreadPoolExecutor(batch_threads()) as pool:
            for chunk in sorted_chunks(rows, tokenize, workers, self.batch_size, self.max_batch_tokens, 1):

                def run(batch: slice, chunk=chunk) -> np.ndarray:
                    packed = chunk.packed
                    input_ids, mask = pad_packed(
                        packed.ids, packed.starts, packed.lengths, chunk.order[batch], self.pad_id, 1
                    )
                    (values,) = self._session.run([LOGITS], {INPUT_IDS: input_ids, ATTENTION_MASK: mask})
                    advance(batch.stop - batch.start)
                    return values

                if chunk.batches:  # none for no rows
                    logits[chunk.positions] = np.concatenate(list(pool.map(run, chunk.batches)))
        return logits if output == "logits" else probability(logits)

"""ICC (Image Caption Concreteness) as an ``evaluate`` measurement.

The logic lives in ``modeling_icc.hub.measurement``; this file only declares the module,
so that ``evaluate.load`` on a folder, a path or a Space finds one class to build.
"""

import datasets
import evaluate

from modeling_icc.hub.measurement import (
    as_prediction,
    as_predictions,
    compute_icc,
    model_for_config,
    refuse_references,
)
from modeling_icc.utils.citation import CITATION, PAPER_URL

_DESCRIPTION = """\
Image Caption Concreteness (ICC) scores how visually concrete a caption is, from the text
alone, on [0, 1] (higher = more concrete). It is used to curate image-caption datasets:
keep captions a reader could picture, drop abstract or off-image text.
"""

_KWARGS_DESCRIPTION = """
The model is chosen when the module is loaded, by its configuration name:
`evaluate.load(MODULE)` (or config "default") scores with "mini", the package's default model, as
`load_scorer()` and the `icc` command do: it ships in the package, so this works offline;
`evaluate.load(MODULE, "lite")` with the other zero-download model; any other name is a Hub id
(the published student: `evaluate.load(MODULE, "moranyanuka/icc")`, downloaded once). The module
never switches models: one that cannot be loaded raises an error that names the offline models.
Args:
    predictions (`list` of `str`): captions to score. Blank or missing captions, items
        that are not strings, and captions in a language the model does not read (mini, lite
        and the student read English) score NaN; a single string (not in a list) is refused.
    model_id (`str`, optional): overrides the configuration's model for this call: a Hub id,
        a local directory, or a model shipped in the package ("mini", "lite").
    batch_size (`int`, optional): rows per batch for neural students.
    device (`str`, optional): "cpu", "cuda", "cuda:1", "mps" (default: best available).
    dtype (`str`, optional): "float32", "bfloat16" or "float16" (default: fp32 on CPU, also on CPUs
        with native bf16, so every CPU gives the same numbers; bf16 on GPU).
    aggregation (`str`, optional): "mean", "median", "quantiles" or "all" to add summaries
        over the scored captions.
    threshold (`float`, optional): adds `kept_fraction`, the share of all captions with
        score >= threshold.
Returns:
    icc_scores (`list` of `float`): one score per caption, in input order.
    icc_model (`str`): the model that produced the scores.
    icc_languages (`list`): each caption's language code ("und": too short or unsure to name,
        scored), None for a blank or non-string caption.
    icc_mean, icc_median, icc_std, icc_quantiles: with `aggregation`.
    kept_fraction (`float`): with `threshold`.
Examples:
    >>> icc = evaluate.load("icc_metric", "lite")
    >>> result = icc.compute(predictions=["a man with a white shirt", "a great method"])
    >>> result["icc_scores"][0] > result["icc_scores"][1]
    True
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ImageCaptionConcreteness(evaluate.Measurement):
    """Caption -> visual concreteness in [0, 1]."""

    def _info(self):
        model_for_config(self.config_name)  # refuse a bad name before evaluate makes a cache folder of it
        return evaluate.MeasurementInfo(
            module_type="measurement",
            description=_DESCRIPTION,
            citation=CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string")}),
            reference_urls=[PAPER_URL],
        )

    # evaluate appends the inputs description to these two docstrings, so each needs one.
    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add captions; ICC's input rules run before evaluate casts them to strings (see ``as_predictions``)."""
        refuse_references(references)
        if predictions is not None:
            predictions = as_predictions(predictions)
        return super().add_batch(predictions=predictions, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one caption; a non-string is stored as a blank caption, which scores NaN."""
        refuse_references(reference)
        return super().add(prediction=as_prediction(prediction), **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score the captions; ICC reads no references, so passing some is an error rather than ignored."""
        refuse_references(references)
        return super().compute(predictions=predictions, **kwargs)

    def _compute(
        self,
        predictions,
        model_id=None,
        batch_size=None,
        device=None,
        aggregation=None,
        dtype=None,
        threshold=None,
    ):
        return compute_icc(
            predictions,
            model_id=model_id or model_for_config(self.config_name),
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            aggregation=aggregation,
            threshold=threshold,
        )

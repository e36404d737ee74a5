"""ICC (Image Caption Concreteness) as an ``evaluate`` measurement.

The logic lives in ``modeling_icc.hub.measurement``; this file only declares the module,
so that ``evaluate.load`` on a folder, a path or a Space finds one class to build.
"""

import datasets
import evaluate

from modeling_icc.hub.measurement import as_prediction, as_predictions, compute_icc

_CITATION = """\
@inproceedings{yanuka-etal-2024-icc,
    title = "{ICC}: Quantifying Image Caption Concreteness for Multimodal Dataset Curation",
    author = "Yanuka, Moran and Alper, Morris and Averbuch-Elor, Hadar and Giryes, Raja",
    booktitle = "Findings of the Association for Computational Linguistics: ACL 2024",
    year = "2024",
    url = "https://aclanthology.org/2024.findings-acl.592/",
}
"""

_DESCRIPTION = """\
Image Caption Concreteness (ICC) scores how visually concrete a caption is, from the text
alone, on [0, 1] (higher = more concrete). It is used to curate image-caption datasets:
keep captions a reader could picture, drop abstract or off-image text.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): captions to score. Blank or missing captions, and items
        that are not strings, score NaN; a single string (not in a list) is refused.
    model_id (`str`, optional): Hub id, local directory or "lite" (the embedded,
        zero-download model). Default: the published student "moranyanuka/icc", falling
        back to "lite" with a warning when it cannot be loaded.
    batch_size (`int`, optional): rows per batch for neural students.
    device (`str`, optional): "cpu", "cuda", "cuda:1", "mps" (default: best available).
    dtype (`str`, optional): "float32", "bfloat16" or "float16" (default: bf16 on GPU).
    aggregation (`str`, optional): "mean", "median", "quantiles" or "all" to add summaries
        over the scored captions.
    threshold (`float`, optional): adds `kept_fraction`, the share of all captions with
        score >= threshold.
Returns:
    icc_scores (`list` of `float`): one score per caption, in input order.
    icc_model (`str`): the model that produced the scores.
    icc_mean, icc_median, icc_std, icc_quantiles: with `aggregation`.
    kept_fraction (`float`): with `threshold`.
Examples:
    >>> icc = evaluate.load("icc_metric")
    >>> result = icc.compute(predictions=["a man with a white shirt", "a great method"], model_id="lite")
    >>> result["icc_scores"][0] > result["icc_scores"][1]
    True
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ImageCaptionConcreteness(evaluate.Measurement):
    """Caption -> visual concreteness in [0, 1]."""

    def _info(self):
        return evaluate.MeasurementInfo(
            module_type="measurement",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string")}),
            reference_urls=["https://aclanthology.org/2024.findings-acl.592/"],
        )

    # evaluate appends the inputs description to these two docstrings, so each needs one.
    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add captions; ICC's input rules run before evaluate casts them to strings (see ``as_predictions``)."""
        if predictions is not None:
            predictions = as_predictions(predictions)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one caption; a non-string is stored as a blank caption, which scores NaN."""
        return super().add(prediction=as_prediction(prediction), reference=reference, **kwargs)

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
            model_id=model_id,
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            aggregation=aggregation,
            threshold=threshold,
        )

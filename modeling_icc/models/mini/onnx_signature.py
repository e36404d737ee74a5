"""The names of mini's ONNX graph's inputs and output: set by the export that writes the graph and read by
the runtimes that feed it, so they live apart from both (torch-free, no ONNX import)."""

INPUT_IDS, ATTENTION_MASK, LOGITS = "input_ids", "attention_mask", "logits"
#: Outputs of the explanation graph (``token_terms``): each token's share of the logit, and what the tokens leave.
PER_TOKEN, TERMS_BIAS = "per_token", "bias"

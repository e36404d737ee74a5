"""Scoring runtime: the ConcretenessScorer interface, the batched neural scorer, the lite
scorer, explanations and load_scorer."""

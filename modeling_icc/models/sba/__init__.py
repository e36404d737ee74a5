"""The SBA teacher model: CLIP text tower (frozen) -> linear projector -> causal LM (frozen)."""

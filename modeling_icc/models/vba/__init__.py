"""The VBA teacher's settings (its components are pretrained diffusers and transformers models)."""

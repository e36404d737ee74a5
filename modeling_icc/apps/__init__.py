"""Applications built on the library: the Gradio Space."""

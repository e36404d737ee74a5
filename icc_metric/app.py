"""The evaluate module's Space: evaluate's built-in widget does not run on current Gradio, so this is our own."""

from pathlib import Path

import evaluate

from modeling_icc.measurement import module_script
from modeling_icc.space_app import build_metric_demo

demo = build_metric_demo(evaluate.load(str(module_script(Path(__file__).parent))))

if __name__ == "__main__":
    demo.launch()

"""The evaluate module's Space: evaluate's built-in widget does not run on current Gradio, so this is our own."""

from pathlib import Path

import evaluate

from modeling_icc.apps.gradio import build_metric_demo, launch_space
from modeling_icc.hub.measurement import module_script

demo = build_metric_demo(evaluate.load(str(module_script(Path(__file__).parent))))

if __name__ == "__main__":
    launch_space(demo)  # with the upload cap

"""ICC Spaces demo: the app lives in modeling_icc.apps.gradio (shipped next to this file by `icc push`)."""

from modeling_icc.apps.gradio import build_demo, launch_space

demo = build_demo()

if __name__ == "__main__":
    launch_space(demo)  # with the upload cap

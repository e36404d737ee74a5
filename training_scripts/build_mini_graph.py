"""Build mini's shipped ONNX graph (without the base weights) and its manifest, at release time.

    python training_scripts/build_mini_graph.py              # rewrites modeling_icc/models/mini/data/mini_graph.*
    python training_scripts/build_mini_graph.py --out /tmp/graph

Needs the `torch` extra (the graph is traced from torch); users never run it. Rerun after refitting the heads
(training_scripts/fit_mini.py) or changing the export: tests/test_shipped_graph.py refuses a graph whose
manifest does not match the shipped heads.
"""

import argparse
import json
from pathlib import Path

from modeling_icc.models.mini.files import base_model_path, shipped_heads_path
from modeling_icc.models.mini.graph_release import build_shipped_graph
from modeling_icc.models.mini.shipped_graph import GRAPH_FILE, shipped_graph_folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None, help="folder to write to (default: the package's)")
    args = parser.parse_args()
    folder = args.out or shipped_graph_folder()
    folder.mkdir(parents=True, exist_ok=True)
    manifest = build_shipped_graph(shipped_heads_path(), base_model_path(), folder)
    print(json.dumps(manifest["sha256"], indent=2))
    print(f"wrote {folder / GRAPH_FILE} ({(folder / GRAPH_FILE).stat().st_size} bytes)")


if __name__ == "__main__":
    main()

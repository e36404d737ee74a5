"""Cost of scoring common caption pools, from the measured throughput JSON files.

Reads ``benchmarks/speed/results/{lite_throughput,mini_throughput_cpu,student_throughput_cpu,student_throughput_cuda}``
``.json`` (whichever exist; mini's rates on the synthetic captions the student was timed on) and
writes ``benchmarks/speed/results/cost_tables.{json,md}``. Nothing is
estimated that was not measured: a model/device without a results file gets no row.

    python benchmarks/speed/cost_tables.py
"""

from __future__ import annotations

import json
from pathlib import Path

from modeling_icc.utils.provenance import write_json

RESULTS = Path(__file__).resolve().parent / "results"
POOLS = {
    "CC3M": 3.3e6,
    "DataComp small": 12.8e6,
    "DataComp medium": 128e6,
    "LAION-400M": 400e6,
    "DataComp large": 1.28e9,
    "DataComp xlarge": 12.8e9,
}


def _load(name: str) -> dict | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.is_file() else None


def measured_rates() -> list[dict]:
    """One row per measured (model, device, dtype): captions/s and the resource it is per."""
    rows = []
    lite = _load("lite_throughput.json")
    if lite:
        rows.append(
            {
                "model": "lite",
                "device": "1 CPU core",
                "unit": "CPU-core-hours",
                "captions_per_s": lite["results"]["captions_per_cpu_second"],
                "units_per_device": 1,
            }
        )
    mini = _load("mini_throughput_cpu.json")
    if mini:
        threads = mini["environment"].get("torch_threads") or mini["environment"].get("cpu_count") or 1
        for dtype in ("bfloat16", "float32"):
            result = mini["results"]["synthetic"].get(f"mini_{dtype}")
            if result:
                rows.append(
                    {
                        "model": f"mini ({dtype})",
                        "device": f"{threads} CPU cores",
                        "unit": "CPU-core-hours",
                        "captions_per_s": result["captions_per_s"],
                        "units_per_device": threads,
                    }
                )
    for device in ("cpu", "cuda"):
        student = _load(f"student_throughput_{device}.json")
        if not student:
            continue
        env = student["environment"]
        for name, result in student["results"].items():
            # The default scorer per dtype only ("load_scorer_<dtype>"), not the comparison variants.
            if name.removeprefix("load_scorer_") not in ("float32", "bfloat16", "float16"):
                continue
            if device == "cpu":
                threads = env.get("torch_threads") or env.get("cpu_count") or 1
                rows.append(
                    {
                        "model": f"student ({name.removeprefix('load_scorer_')})",
                        "device": f"{threads} CPU cores",
                        "unit": "CPU-core-hours",
                        "captions_per_s": result["captions_per_s"],
                        "units_per_device": threads,
                    }
                )
            else:
                rows.append(
                    {
                        "model": f"student ({name.removeprefix('load_scorer_')})",
                        "device": env.get("gpu", "GPU"),
                        "unit": "GPU-hours",
                        "captions_per_s": result["captions_per_s"],
                        "units_per_device": 1,
                    }
                )
    return rows


def main() -> None:
    rows = measured_rates()
    table = []
    for row in rows:
        hours = {pool: size / row["captions_per_s"] / 3600 * row["units_per_device"] for pool, size in POOLS.items()}
        table.append({**row, "hours": hours})
    write_json(RESULTS / "cost_tables.json", {"pools": POOLS, "rows": table})
    header = "| model | measured on | captions/s | unit | " + " | ".join(POOLS) + " |"
    lines = [header, "|" + "---|" * (4 + len(POOLS))]
    for row in table:
        cells = [f"{row['hours'][pool]:,.2f}" for pool in POOLS]
        lines.append(
            f"| {row['model']} | {row['device']} | {row['captions_per_s']:,.0f} | {row['unit']} | "
            + " | ".join(cells)
            + " |"
        )
    markdown = "\n".join(lines) + "\n"
    (RESULTS / "cost_tables.md").write_text(markdown, encoding="utf-8")
    print(markdown)


if __name__ == "__main__":
    main()

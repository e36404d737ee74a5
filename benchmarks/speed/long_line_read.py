"""Reading one very long line: seconds to read a file holding one line of N MB, and a whole ``icc score`` of it.

Issue 48, item 7: a 10 MB line took 4.8 s and a 100 MB line 133 s, because the text reader searched and copied
the text it carried again for every 64 KB block that extended the line. Read in linear time, the seconds
should grow with N, not with N squared. For each size: a ``.txt`` and a ``.jsonl`` file of one caption of N MB
(``dog dog ...``) read through the format's reader (``iter_tables``, in this process, median of ``--repeats``),
and ``icc score --model lite`` of the ``.txt`` file to a TSV file (one fresh process: wall seconds and peak RSS).

    python benchmarks/speed/long_line_read.py --sizes-mb 10 40 100 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from child_process import run_child
from result_file import write_result

from modeling_icc.curation.io.tables import iter_tables

RESULTS = Path(__file__).resolve().parent / "results"


def read_seconds(path: Path, fmt: str) -> float:
    start = time.perf_counter()
    captions = [caption for table in iter_tables(path, fmt) for caption in table.captions]
    seconds = time.perf_counter() - start
    assert len(captions) == 1, len(captions)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes-mb", type=int, nargs="+", default=[10, 40, 100])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "long_line_read.json")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for size in args.sizes_mb:
            caption = "dog " * (size * (1 << 20) // 4)
            txt, jsonl = Path(scratch) / f"line{size}.txt", Path(scratch) / f"line{size}.jsonl"
            txt.write_text(caption + "\n")
            jsonl.write_text(json.dumps({"caption": caption}) + "\n")
            del caption
            read_seconds(txt, "txt")  # warm-up: imports, the OS file cache
            row = {}
            for fmt, path in (("txt", txt), ("jsonl", jsonl)):
                runs = [read_seconds(path, fmt) for _ in range(args.repeats)]
                row[f"read_{fmt}_median_s"] = round(statistics.median(runs), 3)
            command = [sys.executable, "-m", "modeling_icc", "score", "--model", "lite", "-i", str(txt)]
            run = run_child([*command, "-o", str(Path(scratch) / "scores.tsv")])
            row["icc_score_lite_wall_s"] = round(run.wall_s, 2)
            row["icc_score_lite_peak_rss_mb"] = round(run.peak_rss_mb, 1)
            results[f"{size} MB"] = row
            print(f"{size} MB: {row}")
    write_result("long_line_read", args.out, results, repeats=args.repeats)


if __name__ == "__main__":
    main()

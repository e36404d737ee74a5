"""The web-junk rule's two kinds of error: real captions it takes for junk, and junk it leaves to the model.

False positives (real captions scored 0.0 without being read): every distinct CC3M validation caption, the 303
dev captions, the LAION-400M sample the package ships (``modeling_icc/data/laion_alttext_sample.tsv``; each row the rule
flags is counted a false positive unless it is in :data:`LAION_JUNK_ROWS`, the flagged rows read and judged junk
by a person), and the short captions written for the rule (one word, names, models, numbers, other scripts,
captions inside a wrapper: ``modeling_icc/evaluation/web_junk_cases.py``). Misses (junk that goes to the model):
the generated junk of that module, by kind, and the junk the issue named (:data:`ISSUE_JUNK`). With
``--scorers``, the share of the issue's texts each scorer keeps at 0.5. With ``--compare-with DIR`` (another
checkout's source tree, e.g. ``git archive BASE modeling_icc | tar -x -C DIR``), the same counts for that tree's
rule, so a change of rule is measured before and after on the same texts.

    python benchmarks/quality/web_junk_rule.py --scorers mini,lite --compare-with DIR
"""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from modeling_icc.evaluation.web_junk_cases import generated_junk, short_real_captions
from modeling_icc.utils import web_junk
from modeling_icc.utils.provenance import environment, write_json
from modeling_icc.utils.shipped_data import LAION_SAMPLE_FILE, cc3m_distinct_captions, dev_split, laion_sample_texts

RESULTS = Path(__file__).resolve().parent  # the quality results sit beside this script
#: Rows of the shared LAION sample flagged by this rule or the one before it, read and judged junk. Any other
#: flagged row counts as a false positive (a descriptive file name too: it is a caption in a wrapper).
LAION_JUNK_ROWS = {
    155: "a domain",
    1622: "a URL",
    1632: "a domain",
    2212: "a URL",
    3050: "a domain",
    4674: "a number written by a scraper",
}
#: Short real captions the issue named among those taken for junk.
ISSUE_CAPTIONS = ("猫", "猫 と 犬", "我 的 猫", "한 개", "山", "R2-D2", "747", "F-16", "A380", "WD-40", "E=mc2")
#: Junk the issue named among that left to the model.
ISSUE_JUNK = (
    "[img]http://x.com/a.jpg[/img]", "&lt;img src=&quot;x.jpg&quot;&gt;", "file.mp3", "archive.zip", "file.txt",
    "doc.docx", "image.jpg:large", "foo.jpg_large", "example.app", "my.blog", "thumbnail", "click here",
    "image001", "image may contain: 1 person",
)  # fmt: skip
#: Wrapped captions the issue named: read without the wrapper.
ISSUE_WRAPPED = ("Fox Crochet Hat.jpg", "Orchid Jungle<br>Hawaiian Dresses<br>")

Check = Callable[[str], bool]


def other_check(tree: Path) -> Check:
    """``is_web_junk`` of the checkout at ``tree`` (its ``web_junk`` module, with this tree's helpers)."""
    spec = importlib.util.spec_from_file_location(
        "modeling_icc.utils.web_junk_compared", tree / "modeling_icc" / "utils" / "web_junk.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.is_web_junk


def laion_rows() -> list[tuple[int, str]]:
    """The shipped LAION sample's rows with text, by row number (the numbers :data:`LAION_JUNK_ROWS` uses)."""
    return [(row, text) for row, text in enumerate(laion_sample_texts()) if text.strip()]


def count(texts: list[str], check: Check, junk: bool) -> dict:
    """How many of ``texts`` the rule gets wrong: flagged real captions, or junk left to the model."""
    wrong = [text for text in texts if check(text) != junk]
    return {"count": len(wrong), "total": len(texts), "texts": sorted(set(wrong))}


def measure(check: Check, laion: list[tuple[int, str]]) -> dict:
    real = {"CC3M validation (distinct)": cc3m_distinct_captions(), "dev split": [r["caption"] for r in dev_split()]}
    real.update(short_real_captions())
    result: dict = {
        "false_positives": {name: count(texts, check, junk=False) for name, texts in real.items()},
        "misses": {name: count(texts, check, junk=True) for name, texts in generated_junk().items()},
    }
    flagged = {row: text for row, text in laion if check(text)}
    result["false_positives"]["LAION-400M shared sample"] = {
        "count": sum(row not in LAION_JUNK_ROWS for row in flagged),
        "total": len(laion),
        "flagged": len(flagged),
        "texts": [text for row, text in flagged.items() if row not in LAION_JUNK_ROWS],
    }
    generated = result["misses"].values()
    result["misses"]["all generated junk"] = {
        "count": sum(kind["count"] for kind in generated),
        "total": sum(kind["total"] for kind in generated),
    }
    result["issue"] = {
        "captions taken for junk": count(list(ISSUE_CAPTIONS), check, junk=False),
        "junk left to the model": count(list(ISSUE_JUNK), check, junk=True),
        "wrapped captions taken for junk": count(list(ISSUE_WRAPPED), check, junk=False),
    }
    return result


def kept_by_scorers(names: list[str]) -> dict:
    """Per scorer, each of the issue's texts' score and whether 0.5 keeps it."""
    from modeling_icc import load_scorer

    texts = [*ISSUE_CAPTIONS, *ISSUE_JUNK, *ISSUE_WRAPPED]
    kept = {}
    for name in names:
        scores = load_scorer(name).score(texts)
        kept[name] = {
            "junk kept at 0.5": sum(float(scores[texts.index(text)]) >= 0.5 for text in ISSUE_JUNK),
            "scores": {text: round(float(score), 3) for text, score in zip(texts, scores, strict=True)},
        }
    return kept


def summary(result: dict) -> str:
    rows = [f"{name}: {value['count']}/{value['total']}" for name, value in result["false_positives"].items()]
    rows += [f"missed, {name}: {value['count']}/{value['total']}" for name, value in result["misses"].items()]
    rows += [f"issue, {name}: {value['count']}/{value['total']}" for name, value in result["issue"].items()]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scorers", default="", help="comma-separated load_scorer names to score the issue's texts")
    parser.add_argument("--compare-with", type=Path, default=None, help="another checkout's source tree")
    parser.add_argument("--out", type=Path, default=RESULTS / "web_junk_rule.json")
    args = parser.parse_args()
    laion = laion_rows()
    results = {"this tree": measure(web_junk.is_web_junk, laion)}
    if args.compare_with is not None:
        results["compared tree"] = measure(other_check(args.compare_with), laion)
    payload = {
        "benchmark": "web_junk_rule",
        "command": "python benchmarks/quality/web_junk_rule.py " + shlex.join(sys.argv[1:]),
        "laion_sample": f"modeling_icc/data/{LAION_SAMPLE_FILE}",
        "environment": environment("cpu"),
        "results": results,
    }
    if args.scorers:
        payload["scorers"] = kept_by_scorers(args.scorers.split(","))
    write_json(args.out, payload)
    for tree, result in results.items():
        print(f"{tree}:\n{summary(result)}\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

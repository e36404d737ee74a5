"""Naming each caption's language (issue 51): the identifiers compared, the policy chosen, and what it declines.

1. Identifiers that ship their model in their wheel, on the translations written for this package and on
   English captions: top-1 accuracy per language, how often English captions are named another language, speed,
   installed size (none is a dependency: `pip install py3langid pycld2 lingua-language-detector whatlang-pyo3`).
2. The package's policy (``modeling_icc.scoring.languages.LanguagePolicy``) chosen by 5-fold cross-validation on
   the dev split's fitting captions, CC3M and the translations of both (``modeling_icc.evaluation.languages``).
3. The chosen policy, once, on the frozen partition's captions and their translations; on short English captions;
   and on the unlabelled LAION sample (captions per language, the share an English model declines).

    python benchmarks/quality/language_id.py
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from modeling_icc.evaluation.languages import (
    MAX_FALSE_NAN,
    POLICY_GRID,
    Seen,
    compare_identifiers,
    cross_validate,
    laion_rates,
)
from modeling_icc.scoring.languages import POLICY, LanguagePolicy
from modeling_icc.utils.provenance import environment, write_json
from modeling_icc.utils.shipped_data import laion_sample_texts

RESULTS = Path(__file__).resolve().parent  # the quality results sit beside this script


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each identifier (median)")
    parser.add_argument("--out", type=Path, default=RESULTS / "language_id.json")
    args = parser.parse_args()
    identifiers = compare_identifiers(args.repeats)
    validation = cross_validate(Seen.of("fit"))
    chosen = LanguagePolicy(**validation["chosen"])
    if chosen != POLICY:
        print(f"warning: cross-validation chose {chosen}, the package ships {POLICY}")
    payload = {
        "benchmark": "language_id",
        "command": "python benchmarks/quality/language_id.py",
        "identifiers": identifiers,
        "policy_grid": POLICY_GRID,
        "max_english_false_nan": MAX_FALSE_NAN,
        "cross_validation": validation,
        "shipped_policy": asdict(POLICY),
        "frozen": Seen.of("frozen").rates(POLICY),
        "short_english": Seen.of("short").rates(POLICY),
        "laion_sample": laion_rates(POLICY, laion_sample_texts()),
        "environment": environment("cpu"),
    }
    write_json(args.out, payload)
    for name, result in identifiers.items():
        if "skipped" in result:
            print(f"{name}: skipped, {result['skipped']}")
            continue
        accuracy = ", ".join(f"{code} {value:.2f}" for code, value in result["accuracy_by_language"].items())
        print(
            f"{name}: {accuracy}; English named other {result['english_named_other']:.2%}, short "
            f"{result['short_english_named_other']:.0%}; {result['captions_per_second']:,.0f}/s; "
            f"{result['installed_mb']:.1f} MB"
        )
    rates = validation["chosen_rates"]
    print(f"chosen {chosen}: English declined {rates['english_declined']} of {rates['english_captions']}")
    print(f"frozen: {payload['frozen']}")
    short = payload["short_english"]
    print(f"short English: {short['english_declined']} of {short['english_captions']} declined")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

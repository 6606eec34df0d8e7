#!/usr/bin/env bash
# On the 16-core device machine (no GPU needed; a quiet machine for steady figures), in one call:
# what the staged compile saves: per-stage compile times (benchmarks/compile_stages.py) and cold
# check with/without the staged compile vs a bare triton.compile loop (benchmarks/staged_bench.py).
# Carry .whl. JSON goes to $OUT (copy it to benchmarks/results/compile_stages/h200/ and
# benchmarks/results/staged_bench/h200/). Scan vs its floor on the corpus is benchmarks/device/scan_bench.sh.
set -u
. benchmarks/device/env.sh
export AUTOTUNE_REWRITE_CACHE_DIR=/tmp/ar-cache
start=$(date +%s)
timeout 60 python3 benchmarks/compile_stages.py --out "$out/compile_stages.json" > /dev/null 2> "$out/compile_stages.err"
echo "compile_stages exit $? in $(( $(date +%s) - start )) s"
start=$(date +%s)
timeout 80 python3 benchmarks/staged_bench.py --rounds 2 --out "$out/staged_bench.json" > /dev/null 2> "$out/staged_bench.err"
echo "staged_bench exit $? in $(( $(date +%s) - start )) s"

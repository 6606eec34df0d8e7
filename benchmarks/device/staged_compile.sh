#!/usr/bin/env bash
# On the 16-core device machine (no GPU needed; a quiet machine for steady figures), in one call:
# per-stage compile times, cold check with/without the staged compile vs a bare triton.compile loop,
# and scan vs its floor on the corpus repositories. Carry .whl and build/corpus (a copy of
# ../shared/corpus). JSON goes to $OUT (copy it to benchmarks/results/h200/).
set -u
. benchmarks/device/env.sh
export AUTOTUNE_REWRITE_CACHE_DIR=/tmp/ar-cache
bash build/corpus/unpack.sh /tmp/corpus > "$out/unpack.log" 2>&1
start=$(date +%s)
timeout 60 python3 benchmarks/compile_stages.py --out "$out/compile_stages.json" > /dev/null 2> "$out/compile_stages.err"
echo "compile_stages exit $? in $(( $(date +%s) - start )) s"
start=$(date +%s)
timeout 80 python3 benchmarks/staged_bench.py --rounds 2 --out "$out/staged_bench.json" > /dev/null 2> "$out/staged_bench.err"
echo "staged_bench exit $? in $(( $(date +%s) - start )) s"
start=$(date +%s)
timeout 80 python3 benchmarks/scan_bench.py --corpus /tmp/corpus --repeat 2 --out "$out/scan_bench_corpus.json" > /dev/null 2> "$out/scan_bench.err"
echo "scan_bench exit $? in $(( $(date +%s) - start )) s"

#!/usr/bin/env bash
# On the device machine (16 cores), in one call: benchmarks/coverage.py over the corpus, cold
# cache. Carry .whl and build/corpus (a copy of ../shared/corpus). JSON to $OUT.
set -u
. benchmarks/h200_env.sh
bash build/corpus/unpack.sh /tmp/corpus > "$out/unpack.log" 2>&1
start=$(date +%s)
timeout 560 python3 benchmarks/coverage.py /tmp/corpus --jobs 16 --cache /tmp/ar-cov > "$out/coverage.json" 2> "$out/coverage.err"
echo "coverage exit $? in $(( $(date +%s) - start )) s"
tail -c 400 "$out/coverage.json"

#!/usr/bin/env bash
# On the device machine (16 cores), in one call: benchmarks/coverage.py over the corpus, cold
# cache, raw scan/check JSON kept (dumps/). Carry .whl and build/corpus (a copy of
# ../shared/corpus). REPOS="a b" limits it to those repos; LIMIT_S bounds the run, REPO_LIMIT_S
# one repo's check. JSON to $OUT.
set -u
. benchmarks/device/env.sh
bash build/corpus/unpack.sh /tmp/corpus > "$out/unpack.log" 2>&1
sel=()
for r in ${REPOS:-}; do sel+=(--repo "$r"); done
start=$(date +%s)
timeout "${LIMIT_S:-560}" python3 benchmarks/coverage.py /tmp/corpus "${sel[@]}" --jobs 16 --cache /tmp/ar-cov \
  --timeout "${REPO_LIMIT_S:-240}" --dump "$out/dumps" > "$out/coverage.json" 2> "$out/coverage.err"
echo "coverage exit $? in $(( $(date +%s) - start )) s"
tail -c 600 "$out/coverage.json"

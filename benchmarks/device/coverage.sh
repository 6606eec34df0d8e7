#!/usr/bin/env bash
# On the device machine, in one call: benchmarks/coverage.py over the corpus, cold cache, raw
# scan/check JSON kept (dumps/). Carry .whl and build/corpus (a copy of ../shared/corpus).
# REPOS="a b" limits it to those repos; STREAMS="a b|c d|e" runs those groups side by side instead
# (each its own coverage.py with -j JOBS and its own cache: a host of 4 x 16 cores measures four
# groups at once, each repository still judged by 16 workers). LIMIT_S bounds the run,
# REPO_LIMIT_S one repo's check. JSON to $OUT.
set -u
. benchmarks/device/env.sh
bash build/corpus/unpack.sh /tmp/corpus > "$out/unpack.log" 2>&1
start=$(date +%s)
IFS='|' read -r -a groups <<< "${STREAMS:-${REPOS:-}}"
[ ${#groups[@]} -eq 0 ] && groups=("")
i=0
for g in "${groups[@]}"; do
  sel=()
  for r in $g; do sel+=(--repo "$r"); done
  timeout "${LIMIT_S:-560}" python3 benchmarks/coverage.py /tmp/corpus "${sel[@]}" --jobs "${JOBS:-16}" \
    --cache "/tmp/ar-cov-$i" --timeout "${REPO_LIMIT_S:-240}" --dump "$out/dumps" \
    > "$out/coverage-$i.json" 2> "$out/coverage-$i.err" &
  i=$((i + 1))
done
wait
echo "coverage of ${#groups[@]} group(s) done in $(( $(date +%s) - start )) s"
cat "$out"/coverage-*.err | grep '^{' > "$out/coverage.jsonl"
wc -l "$out/coverage.jsonl"
(cd "$out" && tar czf dumps.tgz dumps && rm -rf dumps)

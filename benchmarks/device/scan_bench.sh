#!/usr/bin/env bash
# On the 16-core device machine (quiet, no GPU needed), in one call: scan vs its floor on the
# corpus repositories for an earlier locator and for this checkout's, one after the other.
# build/base holds the earlier one (ignored by git; made here, e.g. for stop 17's 6fcb9be:
#   git worktree add /tmp/base 6fcb9be && mkdir -p build/base/benchmarks &&
#   cp -r /tmp/base/autotune_rewrite build/base/ && cp /tmp/base/benchmarks/scan_bench.py build/base/benchmarks/).
# Carry .whl, build/corpus (a copy of ../shared/corpus) and build/base. JSON goes to $OUT
# (copy it to benchmarks/results/scan_bench/h200/).
set -u
. benchmarks/device/env.sh
bash build/corpus/unpack.sh /tmp/corpus > "$out/unpack.log" 2>&1
nproc > "$out/cpus.txt"
# The previous locator is slower: one round of it (best of 1), two of this one, within the call's 10 min.
for which in before after; do
  tree=$([ "$which" = before ] && echo build/base || echo .)
  repeat=$([ "$which" = before ] && echo 1 || echo 2)
  start=$(date +%s)
  (cd "$tree" && PYTHONPATH=/tmp/site:$PWD timeout 330 python3 benchmarks/scan_bench.py --corpus /tmp/corpus \
     --repeat "$repeat" --out "$out/scan_bench_corpus_$which.json" > /dev/null 2> "$out/scan_bench_$which.err")
  echo "$which: exit $? in $(( $(date +%s) - start )) s"
done

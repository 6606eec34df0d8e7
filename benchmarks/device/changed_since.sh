#!/usr/bin/env bash
# On the device machine, one call: benchmarks/changed_since.py on FBGEMM with one kernel file touched,
# on a quiet box (the 2-core figures were taken at load 7-10). Carry .whl and build/corpus. JSON to $OUT.
set -u
. benchmarks/device/env.sh
export AUTOTUNE_REWRITE_CACHE_DIR=/tmp/ar-changed
bash build/corpus/unpack.sh /tmp/corpus > "$out/unpack.log" 2>&1
timeout "${LIMIT_S:-420}" python3 benchmarks/changed_since.py --repo /tmp/corpus/pytorch__FBGEMM \
  --touch fbgemm_gpu/experimental/gen_ai/gen_ai/moe/gather_scatter.py --rounds 3 \
  --out "$out/changed_since.json" 2> "$out/changed_since.err"
echo "exit $?"; cat "$out/changed_since.json"; tail -5 "$out/changed_since.err"

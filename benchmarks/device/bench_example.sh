#!/usr/bin/env bash
# `autotune-rewrite bench` on the example's split kernel, on the GPU machine (an H200, sm_90).
#
#   benchmarks/device/bench_example.sh [OUT_DIR]        (default: benchmarks/results/bench_example)
#
# Times every config the variants would emit for the settings' target (sm_120: prune = w4,
# v1 = w8, v2/v3 = w4 + w8), the original configs (the two BLOCK_T=32 configs that cannot launch
# on sm_120 do launch on sm_90, so they count for the exhaustive best) and one extra config,
# BLOCK_T=16 w8 s3, at B = 1..96, with do_bench and CUDA graph replay. Writes to OUT_DIR:
#   _mma_sparse_decode_split_kernel.json   the full result (also printed by --format json)
#   _mma_sparse_decode_split_kernel.png    time vs batch per config (when matplotlib imports)
#   table.txt                              the tables and the recommendation (stderr)
# About 2 minutes on an H200 (most of it compiling and building inputs; 45 timed points).
# Needs torch, triton and, for the CLI, libcst and gitpython (carry them as wheels).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-benchmarks/results/bench_example}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export COLUMNS=${COLUMNS:-220}  # wide tables in table.txt
"${PYTHON:-python}" -m autotune_rewrite --color never bench examples/sm120_mla_decode \
    --kernel _mma_sparse_decode_split_kernel \
    --batch 1,2,4,8,16,32,48,64,96 \
    --also "BLOCK_T=16 w8 s3" \
    --out "$OUT" 2>&1 | tee "$OUT/table.txt"
exit "${PIPESTATUS[0]}"

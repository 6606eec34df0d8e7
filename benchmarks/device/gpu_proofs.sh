#!/usr/bin/env bash
# Every GPU proof for issues 2-4 in one go, as run on the H200 device machine (see the
# "Proof on a GPU" section of docs/numbers.md for the recorded output). Writes logs and JSON
# under $OUT (default ./out).
# Needs torch + triton + pytest; libcst/gitpython are only needed by the CLI, not by these.
set -u
out=${OUT:-out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  python -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"

echo "== GPU-marked tests"
python -m pytest -q -s -m gpu tests/test_example_reference.py tests/test_engine_gpu.py \
  tests/test_rewrite_interp_equivalence.py 2>&1 | tee "$out/gpu_tests.log" | tail -25

echo "== example against the torch reference, every config pinned"
python examples/sm120_mla_decode/drive.py --each-config > "$out/drive_fp8.jsonl" 2>&1; echo "drive fp8 exit $?"
python examples/sm120_mla_decode/drive.py --each-config --kv-dtype act > "$out/drive_act.jsonl" 2>&1; echo "drive act exit $?"

echo "== static sm_90 figures vs the driver and cuOccupancyMaxActiveBlocksPerMultiprocessor"
python benchmarks/device/driver_proof.py benchmarks/results/gpu_proofs/check_sm90_example.json \
  benchmarks/results/gpu_proofs/check_sm90_tiled_matmul.json > "$out/h200_driver_proof.json" 2> "$out/h200_driver_proof.err"
echo "driver proof exit $?"
python benchmarks/device/gpu_engine_proof.py > "$out/gpu_engine_proof.json" 2> "$out/gpu_engine_proof.err"
echo "engine proof exit $?"

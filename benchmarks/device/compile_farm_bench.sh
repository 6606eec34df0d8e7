#!/usr/bin/env bash
# On the device machine (16 cores), in one call under 5 minutes: compile throughput of the local
# pool vs the Dask farm (benchmarks/compile_farm_bench.py; extra arguments are passed on, e.g.
# `--count 400 --workers 1,16 --nodes 4x4 --no-e2e`; LIMIT_S sets the time limit). Carry .whl (libcst/gitpython/tomlkit
# and distributed with its dependencies, ~8 MB, for the image's Python 3.12). JSON and logs to $OUT.
set -u
. benchmarks/device/env.sh
export AUTOTUNE_REWRITE_CACHE_DIR=/tmp/ar-cache
python3 -c "import sys, triton, distributed; print('python', sys.version.split()[0], 'triton', triton.__version__, 'distributed', distributed.__version__)" | tee "$out/versions.txt"
nproc | tee -a "$out/versions.txt"
start=$(date +%s)
timeout "${LIMIT_S:-280}" python3 benchmarks/compile_farm_bench.py --budget-s "$(( ${LIMIT_S:-280} - 60 ))" "$@" --out "$out/compile_farm_bench.json" \
  > "$out/compile_farm_bench.stdout" 2> "$out/compile_farm_bench.err"
echo "bench exit $? in $(( $(date +%s) - start )) s"
grep -v -E "^(INFO|WARNING|DEBUG)|distributed\." "$out/compile_farm_bench.err" | tail -20
python3 - "$out/compile_farm_bench.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("jobs", d["jobs"], "skipped", d["skipped"])
for kind in ("pool", "dask", "nodes"):
    for r in d[kind]:
        print(kind, r["workers"], r["wall_s"], "eff", r.get("efficiency"), "over_pool", r.get("over_pool"),
              "ms/job", r["overhead_ms_per_job"], "inflation", r.get("compile_inflation"), "bound", r.get("efficiency_bound"))
for e in d.get("check_e2e", []):
    print("check_e2e", e["executor"], e["wall_s"], "compiled", e["compiled"])
PY

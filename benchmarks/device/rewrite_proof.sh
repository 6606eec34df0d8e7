#!/usr/bin/env bash
# On the H200 (sm_90), in one call: the autotuner before and after a prune of the device-filtered
# product (benchmarks/rewrite_proof/product_{before,after}.py, made by `diff --variant prune
# --arch sm_120 --arch sm_90` on the fleet fixture), twice, so a choice made by noise shows;
# then the GPU-marked tests. Carry .whl. JSON and logs to $OUT.
set -u
. benchmarks/device/env.sh
for i in 1 2; do
  timeout 120 python3 benchmarks/rewrite_proof/autotuner_same.py benchmarks/rewrite_proof/product_before.py \
    benchmarks/rewrite_proof/product_after.py > "$out/product_run$i.json" 2> "$out/product_run$i.err"
  echo "proof run $i exit $?"
done
python3 -c "import json; d=json.load(open('$out/product_run1.json')); print({k: v for k, v in d.items() if k != 'versions'})"
start=$(date +%s)
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu -n 4 tests > "$out/gpu_tests.log" 2>&1
echo "gpu tests exit $? in $(( $(date +%s) - start )) s"; tail -5 "$out/gpu_tests.log"

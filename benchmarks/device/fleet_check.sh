#!/usr/bin/env bash
# On the H200 device machine, in one call (well under 3 minutes): the fleet-safe prune for
# sm_120 + sm_90 patched into a copy of benchmarks/kernels/fleet/, check of both copies (CPU
# cross-compiles), then the original and patched kernels autotuned on the GPU: the configs
# timed must be the same and the outputs bit-identical; then the same with the kernel's configs
# written as a device-filtered product (--product, issue 21's shape). Carry .whl (libcst/gitpython/tomlkit
# wheels for the image's Python 3.12). JSON and logs go to $OUT.
set -u
. benchmarks/device/env.sh
export AUTOTUNE_REWRITE_CACHE_DIR=/tmp/ar-cache OUT="$out"
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
start=$(date +%s)
timeout 170 python3 benchmarks/device/fleet_check.py --work /tmp/fleet-work > "$out/fleet_check.stdout" 2> "$out/fleet_check.log"
rc=$?
echo "fleet check exit $rc in $(( $(date +%s) - start )) s" | tee -a "$out/fleet_check.log"
# The same matmul with its configs a device-filtered product (one condition + sm_120's guard).
mkdir -p "$out/product"
OUT="$out/product" timeout 170 python3 benchmarks/device/fleet_check.py --work /tmp/fleet-work-product \
  --product > "$out/fleet_check_product.stdout" 2> "$out/fleet_check_product.log"
echo "product fleet check exit $?" | tee -a "$out/fleet_check.log"
cp /tmp/fleet-work/patched/fleet_gemm.py "$out/fleet_gemm.patched.py" 2>/dev/null
grep -E '"(timed_identical|best_before|best_after|outputs_bit_identical|ok)"' "$out/fleet_check.stdout"
exit $rc

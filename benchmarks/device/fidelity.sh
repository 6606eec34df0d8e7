#!/usr/bin/env bash
# On the device machine, in one call: device/fidelity.py over every driver in
# benchmarks/fidelity/drivers (capture on the H200, then check zero-config and exact for sm_120
# and sm_90, then fidelity/compare.py). Carry .whl and build/corpus. Extra arguments go to
# fidelity.py (e.g. --repos NAME ...); LIMIT_S bounds the whole run. Results to $OUT.
set -u
. benchmarks/device/env.sh
bash build/corpus/unpack.sh /tmp/corpus > "$out/unpack.log" 2>&1
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
# FROM=DIR: start from captures kept in the checkout (with --skip-capture: only the checks run).
if [ -n "${FROM:-}" ]; then mkdir -p "$out/fidelity" && cp -r "$FROM"/. "$out/fidelity"/; fi
start=$(date +%s)
timeout "${LIMIT_S:-560}" python3 benchmarks/device/fidelity.py --corpus /tmp/corpus --out "$out/fidelity" "$@" \
  > "$out/fidelity.log" 2>&1
echo "fidelity exit $? in $(( $(date +%s) - start )) s"
# One archive: the device returns a limited number of files, and 19 drivers write about 90.
tar czf "$out/fidelity.tgz" -C "$out" fidelity && rm -rf "$out/fidelity"
tail -c 3000 "$out/fidelity.log"

#!/usr/bin/env bash
# Issue 9 item 7 on a GPU box: capture around one corpus repository's own test of its autotuned
# kernels, check the captured specs for sm_120 and sm_90, and the same from a tritonparse trace.
#   benchmarks/device/capture_corpus.sh WHEEL_DIR TARBALL FILE::FUNC [TARBALL2 PYTEST_NODEID]   (writes under $OUT)
# WHEEL_DIR holds what the GPU image lacks (libcst, GitPython + gitdb + smmap, tomlkit; tritonparse +
# zstandard for the trace part); torch, triton, typer, rich, jinja2 come with the image.
set -u
out=${OUT:-out}
mkdir -p "$out"
wheels=$1 tarball=$2 test=$3
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$wheels"/*.whl \
  || { echo "wheel install failed"; exit 2; }
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
python3 benchmarks/device/capture_corpus.py --tarball "$tarball" --test "$test" --out "$out" ${4:+--pytest "$4" "$5"}

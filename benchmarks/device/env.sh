# Sourced by the device-machine scripts (benchmarks/device/*.sh): the output folder ($out, from $OUT),
# the carried wheels (.whl) installed under /tmp/site, and this checkout on PYTHONPATH. A fresh
# machine is bare, so every script starts here.
out=${OUT:-out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1

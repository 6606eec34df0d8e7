"""Proof on a GPU: ``capture`` learns launch specs with which ``check`` reproduces the live kernels,
and ``inspect-cache`` on the cache that run wrote shows the same numbers.

Steps (all through the real CLI, ``python -m autotune_rewrite``):

1. copy ``examples/sm120_mla_decode`` to ``OUT/target`` and point ``TRITON_CACHE_DIR`` at a fresh
   ``OUT/triton_cache``;
2. ``capture --root OUT/target --out OUT/target/autotune-rewrite.toml --records OUT/capture_records.json
   -- bash -c "python drive.py ...; python drive.py --kv-dtype act ..."``: the real autotuner on the
   fp8 and the bf16 cache (two processes, one capture), the hooks reading each live kernel's
   ``metadata.shared`` and the driver's ``n_regs`` / ``n_spills``;
3. ``check OUT/target --arch sm_90 --format json`` with the captured file (an
   ``autotune-rewrite.toml`` at the root wins over the example's ``pyproject.toml`` specs);
4. ``inspect-cache OUT/triton_cache --arch sm_90 --arch sm_120 --format json``;
5. compare per compiled config: live vs check (SMEM, registers, spills) and live vs the cache
   entry of the same hash (SMEM, registers, spills).

Prints one JSON object; exit 0 when every number matches, 1 on a mismatch, 2 on a setup failure.

    python benchmarks/device/capture_proof.py --out out/capture            # on the H200
    python benchmarks/device/capture_proof.py --out out/capture --batch 1 8
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "sm120_mla_decode"
KERNEL = "_mma_sparse_decode_split_kernel"


def _cli(args: list[str], env: dict, log: Path) -> subprocess.CompletedProcess:
    res = subprocess.run([sys.executable, "-m", "autotune_rewrite", *args], env=env, capture_output=True, text=True)
    log.write_text(f"$ autotune-rewrite {' '.join(args)}\nexit {res.returncode}\n--- stdout\n{res.stdout}\n--- stderr\n{res.stderr}")
    return res


def _compare(live: dict, other: dict | None, fields: dict[str, str]) -> dict:
    if other is None:
        return {"found": False, "match": False}
    diffs = {k: {"live": live.get(k), "other": other.get(v)} for k, v in fields.items() if live.get(k) != other.get(v)}
    return {"found": True, "match": not diffs, "differences": diffs}


def _folder(key: str | None) -> str:
    """Triton's cache folder name for a kernel's hash (``runtime/cache.py``: base32 of the hex key)."""
    if not key:
        return ""
    return base64.b32encode(bytes.fromhex(key)).decode().rstrip("=")


def run_proof(out: Path, batches: list[str]) -> dict:
    out = out.resolve()
    if out.exists():
        shutil.rmtree(out)
    target, cache = out / "target", out / "triton_cache"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("__pycache__"))
    cache.mkdir(parents=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["TRITON_CACHE_DIR"] = str(cache)
    env.pop("TRITON_OVERRIDE_ARCH", None)
    batch = " ".join(batches)
    program = (f"{sys.executable} {target / 'drive.py'} --batch {batch} && "
               f"{sys.executable} {target / 'drive.py'} --batch {batch} --kv-dtype act")
    settings = target / "autotune-rewrite.toml"
    records = out / "capture_records.json"
    cap = _cli(["capture", "--root", str(target), "--out", str(settings), "--records", str(records),
                "--", "bash", "-c", program], env, out / "capture.log")
    report: dict = {"capture_exit": cap.returncode, "command": program}
    if not records.is_file() or not settings.is_file():
        report["error"] = "capture wrote no specs (see capture.log)"
        return report
    folded = json.loads(records.read_text())["folded"]
    report["triton"], report["targets"] = folded["triton"], folded["targets"]
    kernel = next((k for k in folded["kernels"] if k["ident"].endswith("::" + KERNEL)), None)
    if kernel is None:
        report["error"] = f"{KERNEL} not captured"
        return report
    report["spec_file"] = settings.read_text()
    report["key_values"] = kernel["key_values"]
    chk = _cli(["check", str(target), "--arch", "sm_90", "--format", "json", "--no-cache"], env, out / "check.log")
    (out / "check_sm90_captured.json").write_text(chk.stdout)
    ins = _cli(["inspect-cache", str(cache), "--arch", "sm_90", "--arch", "sm_120", "--format", "json"], env,
               out / "inspect.log")
    (out / "inspect_cache.json").write_text(ins.stdout)
    report["check_exit"], report["inspect_exit"] = chk.returncode, ins.returncode
    try:
        check = json.loads(chk.stdout)
        inspected = json.loads(ins.stdout)
    except json.JSONDecodeError:
        report["error"] = "check or inspect-cache printed no JSON (see check.log / inspect.log)"
        return report
    by_folder = {Path(k["folder"]).name: k for k in inspected["kernels"]}
    rows = []
    for spec in kernel["specs"]:
        reports = [k for k in check["kernels"] if k["kernel"] == KERNEL and k["spec"] == spec["name"]]
        for live in spec["compiles"]:
            meta = {k: v for k, v in live["meta"]}
            row_live = {"shared": live["shared"], "n_regs": live["n_regs"], "n_spills": live["n_spills"]}
            static = next((c for r in reports for c in r["configs"]
                           if c["arch"] == "sm_90" and c["params"] == meta and c["num_warps"] == live["num_warps"]
                           and c["num_stages"] == live["num_stages"]), None)
            cached = by_folder.get(_folder(live.get("hash")))
            rows.append({
                "spec": spec["name"], "config": {**meta, "num_warps": live["num_warps"], "num_stages": live["num_stages"]},
                "live": row_live,
                "check_sm90": _compare(row_live, static, {"shared": "shared_bytes", "n_regs": "registers",
                                                          "n_spills": "spills"}),
                "inspect_cache": _compare(row_live, cached, {"shared": "shared_bytes", "n_regs": "registers",
                                                             "n_spills": "spills"}),
            })
    report["rows"] = rows
    report["all_match"] = bool(rows) and all(r["check_sm90"]["match"] and r["inspect_cache"]["match"] for r in rows)
    return report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("out/capture"))
    ap.add_argument("--batch", nargs="+", default=["1", "8", "32", "96"])
    args = ap.parse_args()
    report = run_proof(args.out, args.batch)
    text = json.dumps(report, indent=1)
    (args.out / "h200_capture_proof.json").write_text(text + "\n")
    print(text)
    if "error" in report:
        return 2
    return 0 if report["all_match"] else 1


if __name__ == "__main__":
    sys.exit(main())

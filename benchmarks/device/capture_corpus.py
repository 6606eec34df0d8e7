"""GPU proof (issue 9, item 7): ``capture`` around a real repository's own test of its autotuned
kernels on one GPU gives specs that ``check`` cross-compiles for another GPU (sm_120), and a
tritonparse trace of the same run gives the same specs.

Steps, all through the real CLI (``python -m autotune_rewrite``):

1. unpack the corpus tarball into a fresh git repository (as ``unpack.sh`` does);
2. ``capture --root REPO -- python THIS --call REPO/FILE::FUNC``: the repo's own test function,
   loaded by path (pytest cannot import that file without the repo's other dependencies: its
   package ``__init__`` pulls them in), on the live GPU with a fresh Triton cache;
3. ``check REPO --arch sm_120 --arch sm_90 --format json`` with the captured file; per compile,
   the live kernel's SMEM / registers / spills against check's sm_90 numbers;
4. when tritonparse is importable: the same call under ``tritonparse.structured_logging.init(...,
   enable_trace_launch=True)`` (fresh cache), then ``capture --from-tritonparse`` on that trace:
   its tables must equal the live capture's;
5. the same for the test fixture kernel ``tests/fixtures/capture/scaled_copy.py`` (ours), whose
   trace (trimmed to 2 launch records per compile) and live-captured TOML come back for the tests.

    python benchmarks/device/capture_corpus.py --tarball T.tar.gz --test FILE::FUNC --out OUT
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "capture" / "scaled_copy.py"


def call(target: str, trace: str | None) -> None:
    """Load FILE by path and call FUNC (optionally under tritonparse's tracer)."""
    file, func = target.rsplit("::", 1)
    if trace:
        import tritonparse.structured_logging as tp

        tp.init(trace, enable_trace_launch=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(file)))
    spec = importlib.util.spec_from_file_location(Path(file).stem, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    getattr(module, func)()
    import torch

    torch.cuda.synchronize()
    if trace:
        tp.clear_logging_config()


def fixture_program() -> None:
    """Our own fixture kernel on the GPU: two launch shapes (n divisible by 16 and not)."""
    import torch

    from scaled_copy import scaled_copy_kernel

    for n in (4096, 4097):
        src = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        dst = torch.empty(n, device="cuda", dtype=torch.float32)
        scaled_copy_kernel[lambda meta: (triton_cdiv(n, meta["BLOCK"]),)](src, dst, 0.5, n, 1, 1, HEAD=8)
        torch.cuda.synchronize()
        assert torch.allclose(dst, src.float() * 4.0)


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _cli(args: list[str], env: dict, log: list, cwd: Path | None = None) -> subprocess.CompletedProcess:
    t = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "autotune_rewrite", *args], env=env, capture_output=True, text=True,
                         cwd=cwd)
    log.append(f"$ autotune-rewrite {' '.join(args)}\nexit {res.returncode} ({time.monotonic() - t:.1f} s)\n"
               f"--- stdout\n{res.stdout[-6000:]}\n--- stderr\n{res.stderr[-6000:]}\n")
    return res


def _env(cache: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["TRITON_CACHE_DIR"] = str(cache)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("TRITON_OVERRIDE_ARCH", None)
    return env


def unpack(tarball: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        tar.extractall(dest, filter="data")
    ident = {"GIT_AUTHOR_NAME": "corpus", "GIT_AUTHOR_EMAIL": "corpus@example.invalid",
             "GIT_COMMITTER_NAME": "corpus", "GIT_COMMITTER_EMAIL": "corpus@example.invalid",
             "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}
    env = {**os.environ, **ident}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "corpus", "--no-verify"]):
        subprocess.run(cmd, cwd=dest, env=env, check=True)
    return dest


def _tables(path: Path) -> list[dict]:
    """The ``[[kernels]]`` tables (``[[tool.autotune-rewrite.kernels]]`` in a file not named
    autotune-rewrite.toml)."""
    if not path.is_file():
        return []
    doc = tomllib.loads(path.read_text())
    tables = doc.get("kernels") or doc.get("tool", {}).get("autotune-rewrite", {}).get("kernels", [])
    return sorted(tables, key=lambda t: (t["kernel"], t["spec"]))


def _same_tables(a: list[dict], b: list[dict]) -> dict:
    key = lambda t: (t["kernel"], t["spec"])  # noqa: E731
    diffs = []
    for ta in a:
        tb = next((t for t in b if key(t) == key(ta)), None)
        if tb is None:
            diffs.append({"only_in_capture": key(ta)})
            continue
        for field in ("types", "constexprs", "values"):
            if ta.get(field) != tb.get(field):
                diffs.append({"table": key(ta), "field": field, "capture": ta.get(field), "tritonparse": tb.get(field)})
    diffs += [{"only_in_tritonparse": key(t)} for t in b if not any(key(t) == key(x) for x in a)]
    return {"equal": not diffs and bool(a), "differences": diffs}


def _live_vs_check(folded: dict, check: dict) -> tuple[list, dict]:
    rows, summary = [], {}
    for kernel in folded["kernels"]:
        name = kernel["ident"].split("::")[-1]
        for spec in kernel["specs"]:
            reports = [k for k in check.get("kernels", []) if k["kernel"] == name and k["spec"] == spec["name"]]
            for live in spec["compiles"]:
                meta = {k: v for k, v in live["meta"]}
                static = next((c for r in reports for c in r.get("configs", []) if c["arch"] == "sm_90"
                               and c["params"] == meta and c["num_warps"] == live["num_warps"]
                               and c["num_stages"] == live["num_stages"]), None)
                got = {"shared": live["shared"], "n_regs": live["n_regs"], "n_spills": live["n_spills"]}
                want = None if static is None else {"shared": static["shared_bytes"], "n_regs": static["registers"],
                                                    "n_spills": static["spills"]}
                rows.append({"kernel": name, "spec": spec["name"], "config": {**meta, "num_warps": live["num_warps"],
                             "num_stages": live["num_stages"]}, "live_h200": got, "check_sm90": want,
                             "match": got == want})
            for r in reports:
                for c in r.get("configs", []):
                    s = summary.setdefault(f"{name} [{spec['name']}]", {}).setdefault(
                        c["arch"], {"configs": 0, "launchable": 0, "cannot_launch": [], "compile_errors": 0})
                    s["configs"] += 1
                    if c.get("compile_error"):
                        s["compile_errors"] += 1
                    elif c.get("launchable"):
                        s["launchable"] += 1
                    else:
                        s["cannot_launch"].append(f"{c['label']}: {c.get('reason')}")
    return rows, summary


def _trim(trace_dir: Path, dest: Path, per_hash: int = 2) -> int:
    """Every compilation record, the first ``per_hash`` launch records of each compile."""
    kept, seen = [], {}
    for file in sorted(trace_dir.iterdir()):
        for line in file.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("event_type") == "launch":
                h = (rec.get("compilation_metadata") or {}).get("hash")
                seen[h] = seen.get(h, 0) + 1
                if seen[h] > per_hash:
                    continue
            kept.append(line)
    dest.write_bytes(gzip.compress(("\n".join(kept) + "\n").encode(), mtime=0))
    return len(kept)


def prove(tarball: Path, test: str, out: Path, work: Path) -> dict:
    log: list[str] = []
    report: dict = {"tarball": tarball.name, "test": test}
    try:
        import torch
        import triton

        report["gpu"] = torch.cuda.get_device_name(0)
        report["capability"] = list(torch.cuda.get_device_capability(0))
        report["torch"], report["triton"] = torch.__version__, triton.__version__
    except Exception as exc:  # noqa: BLE001
        report["gpu_error"] = repr(exc)
    repo = unpack(tarball, work / "repo")
    file = test.rsplit("::", 1)[0]
    target = f"{repo / file}::{test.rsplit('::', 1)[1]}"
    settings, records = repo / "autotune-rewrite.toml", out / "capture_records.json"
    t = time.monotonic()
    cap = _cli(["capture", "--root", str(repo), "--out", str(settings), "--records", str(records), "--",
                sys.executable, str(Path(__file__).resolve()), "--call", target], _env(work / "cache_capture"), log)
    report["capture"] = {"exit": cap.returncode, "seconds": round(time.monotonic() - t, 1)}
    if settings.is_file():
        report["capture"]["toml"] = settings.read_text()
        folded = json.loads(records.read_text())["folded"]
        report["capture"]["targets"] = folded["targets"]
        t = time.monotonic()
        _save(out, report, log)
        chk = _cli(["check", str(repo / file), "--arch", "sm_120", "--arch", "sm_90", "--format", "json", "--no-cache"],
                   _env(work / "cache_check"), log)
        report["check"] = {"exit": chk.returncode, "seconds": round(time.monotonic() - t, 1)}
        (out / "check_sm120_sm90.json").write_text(chk.stdout)
        try:
            rows, summary = _live_vs_check(folded, json.loads(chk.stdout))
            report["check"]["per_kernel"] = summary
            report["live_vs_check_sm90"] = {"rows": len(rows), "matching": sum(r["match"] for r in rows),
                                            "mismatches": [r for r in rows if not r["match"]][:20]}
        except json.JSONDecodeError:
            report["check"]["error"] = "no JSON on stdout (see run.log)"
    _save(out, report, log)
    if importlib.util.find_spec("tritonparse") is not None:
        report["fixture"] = _fixture(out, work, log)
        _save(out, report, log)
        report["tritonparse"] = _tritonparse(repo, target, settings, work, log)
    _save(out, report, log)
    return report


def _save(out: Path, report: dict, log: list) -> None:
    """After every step: a run stopped at its time limit still returns what it did."""
    (out / "summary.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / "run.log").write_text("\n".join(log))


def prove_pytest(tarball: Path, nodeid: str, out: Path, work: Path) -> dict:
    """``capture -- python -m pytest NODEID`` in the unpacked repository, then check both targets."""
    log: list[str] = []
    repo = unpack(tarball, work / "repo_pytest")
    settings = repo / "autotune-rewrite.toml"
    t = time.monotonic()
    cap = _cli(["capture", "--root", str(repo), "--", sys.executable, "-m", "pytest", "-x", "-q", "-p",
                "no:cacheprovider", nodeid], _env(work / "cache_pytest"), log, cwd=repo)
    report: dict = {"tarball": tarball.name, "pytest": nodeid,
                    "capture": {"exit": cap.returncode, "seconds": round(time.monotonic() - t, 1),
                                "toml": settings.read_text() if settings.is_file() else None}}
    if settings.is_file():
        chk = _cli(["check", str(repo), "--arch", "sm_120", "--arch", "sm_90", "--format", "json", "--no-cache"],
                   _env(work / "cache_check_pytest"), log)
        report["check"] = {"exit": chk.returncode}
        try:
            report["check"]["per_kernel"] = {
                f"{k['kernel']} [{k['spec']}]": {"status": k.get("status"), "configs": [
                    {"arch": c["arch"], "label": c["label"], "launchable": c.get("launchable"),
                     "compile_error": (c.get("compile_error") or "")[:200] or None} for c in k.get("configs", [])],
                    "skipped": k.get("skipped")} for k in json.loads(chk.stdout)["kernels"]}
        except json.JSONDecodeError:
            report["check"]["error"] = "no JSON on stdout"
    (out / "pytest_run.log").write_text("\n".join(log))
    return report


def _tritonparse(repo: Path, target: str, settings: Path, work: Path, log: list) -> dict:
    trace = work / "trace_repo"
    env = _env(work / "cache_capture")  # the capture's cache: compile records of cache hits, as a rerun has
    t = time.monotonic()
    res = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--call", target, "--trace", str(trace)],
                         env=env, capture_output=True, text=True)
    log.append(f"$ traced run\nexit {res.returncode}\n{res.stderr[-4000:]}\n")
    out_toml = work / "from_trace.toml"
    cap = _cli(["capture", "--root", str(repo), "--out", str(out_toml), "--from-tritonparse", str(trace)], env, log)
    events = sum(1 for f in trace.iterdir() for _ in f.open()) if trace.is_dir() else 0
    return {"traced_exit": res.returncode, "trace_records": events, "capture_exit": cap.returncode,
            "toml": out_toml.read_text() if out_toml.is_file() else None,
            "seconds": round(time.monotonic() - t, 1),
            "vs_live_capture": _same_tables(_tables(settings), _tables(out_toml))}


def _fixture(out: Path, work: Path, log: list) -> dict:
    root = work / "fixture"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    shutil.copy(FIXTURE, root / "scaled_copy.py")
    env = _env(work / "cache_fixture")
    live = root / "autotune-rewrite.toml"
    me = str(Path(__file__).resolve())
    cap = _cli(["capture", "--root", str(root), "--out", str(live), "--", sys.executable, me, "--fixture", str(root)], env, log)
    trace = work / "trace_fixture"
    res = subprocess.run([sys.executable, me, "--fixture", str(root), "--trace", str(trace)],
                         env=_env(work / "cache_fixture2"), capture_output=True, text=True)
    log.append(f"$ traced fixture\nexit {res.returncode}\n{res.stderr[-4000:]}\n")
    kept = _trim(trace, out / "tritonparse_scaled_copy.ndjson.gz") if trace.is_dir() else 0
    if live.is_file():
        shutil.copy(live, out / "scaled_copy_live_capture.toml")
    from_trace = root / "from_trace.toml"
    cap2 = _cli(["capture", "--root", str(root), "--out", str(from_trace), "--from-tritonparse",
                 str(out / "tritonparse_scaled_copy.ndjson.gz")], env, log)
    return {"capture_exit": cap.returncode, "traced_exit": res.returncode, "trace_records_kept": kept,
            "from_trace_exit": cap2.returncode, "vs_live_capture": _same_tables(_tables(live), _tables(from_trace))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tarball", type=Path)
    ap.add_argument("--test", help="FILE::FUNC inside the repository")
    ap.add_argument("--out", type=Path, default=Path("out"))
    ap.add_argument("--pytest", nargs=2, metavar=("TARBALL", "NODEID"),
                    help="also: capture around `python -m pytest NODEID` in that repository")
    ap.add_argument("--work", type=Path, default=Path("/tmp/h200_capture_corpus"))
    ap.add_argument("--call", help=argparse.SUPPRESS)
    ap.add_argument("--trace", help=argparse.SUPPRESS)
    ap.add_argument("--fixture", type=Path, help=argparse.SUPPRESS)  # the folder holding scaled_copy.py
    args = ap.parse_args()
    if args.fixture is not None:
        if args.trace:
            import tritonparse.structured_logging as tp

            tp.init(args.trace, enable_trace_launch=True)
        sys.path.insert(0, str(args.fixture.resolve()))
        fixture_program()
        if args.trace:
            tp.clear_logging_config()
        return 0
    if args.call:
        call(args.call, args.trace)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    report = prove(args.tarball.resolve(), args.test, args.out.resolve(), args.work)
    if args.pytest:
        report["pytest_repo"] = prove_pytest(Path(args.pytest[0]).resolve(), args.pytest[1], args.out.resolve(),
                                             args.work)
        (args.out / "summary.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "capture"}, indent=1)[:8000])
    return 0


if __name__ == "__main__":
    sys.exit(main())

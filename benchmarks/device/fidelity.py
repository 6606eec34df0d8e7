"""Fidelity on the device (issue 23, item 4): capture exact launch specs from live runs of corpus
repositories' own ops, then judge the same kernels with no configuration and with the captured
specs, for sm_120 and sm_90.

For every driver in ``benchmarks/fidelity/drivers/`` (ours: they only import a repository's ops
and call them with LLM-like shapes; each names ``REPO``, ``SOURCE_ROOT``, ``cases(load)`` and,
where its cases set environment variables the repository reads, ``ENV``):

1. ``capture --root REPO -- python THIS --drive DRIVER``: the driver's cases, each in its own
   process (a case that faults the GPU context cannot take the others with it), under the
   capture hooks, with a fresh Triton cache; ``cases.json`` says which ran;
2. ``check FILE --kernel PATH::NAME --arch sm_120 --arch sm_90 --format json`` for each captured kernel,
   once on the repository as it is (zero configuration) and once on a copy holding the captured
   table as its ``autotune-rewrite.toml`` (exact);
3. ``benchmarks/fidelity/compare.py`` over what 1 and 2 wrote (it also runs anywhere on the
   returned folder).

    python benchmarks/device/fidelity.py --corpus /tmp/corpus --out OUT [--repos A B] [--parallel 8]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DRIVERS = REPO / "benchmarks" / "fidelity" / "drivers"
sys.path.insert(0, str(REPO / "benchmarks" / "fidelity"))


def _driver(name: str):
    spec = importlib.util.spec_from_file_location(f"driver_{name}", DRIVERS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_case(corpus: Path, name: str, case: str) -> None:
    """In a child process: one case of one driver, on the GPU."""
    from load import loader

    import torch

    driver = _driver(name)
    cases = driver.cases(loader(corpus / driver.REPO, driver.SOURCE_ROOT))
    cases[case]()
    torch.cuda.synchronize()


def drive(corpus: Path, name: str, report: Path, timeout: float, deadline: float, parallel: int,
          skip: set[str]) -> None:
    """Under ``capture``: every case of a driver, one process each (``parallel`` at once), their
    outcomes to ``report``. No case runs past ``deadline`` (epoch seconds), so ``capture`` always
    gets to fold what was recorded before the device call's limit."""
    from load import loader

    try:
        driver = _driver(name)
        names = list(driver.cases(loader(corpus / driver.REPO, driver.SOURCE_ROOT)))
    except Exception as exc:  # noqa: BLE001 - a driver that cannot load is a row, not a stop
        report.write_text(json.dumps({"driver_error": f"{type(exc).__name__}: {exc}"[:2000]}, indent=1))
        return

    def one(case: str) -> dict:
        if f"{name}:{case}" in skip:
            return {"case": case, "exit": "skipped", "seconds": 0, "stderr_tail": "skipped by --skip"}
        left = min(timeout, deadline - time.time())
        if left < 20:
            return {"case": case, "exit": "not_started", "seconds": 0, "stderr_tail": "no time left"}
        start = time.monotonic()
        try:
            res = subprocess.run([sys.executable, __file__, "--case", name, case, "--corpus", str(corpus)],
                                 capture_output=True, text=True, timeout=left)
            rc, tail = res.returncode, res.stderr[-1500:]
        except subprocess.TimeoutExpired:
            rc, tail = "timeout", f"over {left:.0f} s"
        return {"case": case, "exit": rc, "seconds": round(time.monotonic() - start, 1),
                "stderr_tail": tail if rc != 0 else ""}

    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        rows = list(pool.map(one, names))
    report.write_text(json.dumps({"cases": rows}, indent=1))


def _cli(args: list[str], env: dict, log: Path, timeout: float | None = None) -> subprocess.CompletedProcess | None:
    start = time.monotonic()
    try:
        res = subprocess.run([sys.executable, "-m", "autotune_rewrite", *args], env=env, capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        with log.open("a") as f:
            f.write(f"$ autotune-rewrite {' '.join(args)}\ntimed out after {timeout:.0f} s\n")
        return None
    with log.open("a") as f:
        f.write(f"$ autotune-rewrite {' '.join(args)}\nexit {res.returncode} ({time.monotonic() - start:.1f} s)\n"
                f"--- stderr\n{res.stderr[-8000:]}\n")
    return res


def _env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("TRITON_OVERRIDE_ARCH", None)
    env.update(extra)
    return env


def capture(corpus: Path, name: str, out: Path, work: Path, args: argparse.Namespace) -> dict:
    driver = _driver(name)
    repo, dest = corpus / driver.REPO, out / name
    dest.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    res = _cli(["capture", "--root", str(repo), "--out", str(dest / "autotune-rewrite.toml"), "--records",
                str(dest / "records.json"), "--", sys.executable, __file__, "--drive", name, "--corpus", str(corpus),
                "--report", str(dest / "cases.json"), "--case-timeout", str(args.case_timeout),
                "--deadline", str(args.deadline), "--case-parallel", str(args.case_parallel),
                *[x for s in args.skip for x in ("--skip", s)]],
               _env(TRITON_CACHE_DIR=str(work / "triton" / name)), dest / "run.log",
               timeout=max(args.deadline - time.time(), 0) + 120)  # the cases end by the deadline; then the fold
    return {"driver": name, "capture_exit": res.returncode if res else "timeout",
            "capture_s": round(time.monotonic() - start, 1)}


def captured_kernels(toml: Path) -> list[str]:
    """The ``path::name`` of every kernel the capture wrote a spec for."""
    doc = tomllib.loads(toml.read_text())
    tables = doc.get("kernels") or doc.get("tool", {}).get("autotune-rewrite", {}).get("kernels", [])
    return sorted({t["kernel"] for t in tables})


def check(corpus: Path, name: str, out: Path, work: Path, jobs: int, timeout: float) -> dict:
    driver = _driver(name)
    dest = out / name
    toml = dest / "autotune-rewrite.toml"
    if not toml.is_file():
        return {"driver": name, "check": "nothing captured"}
    kernels = captured_kernels(toml)
    repo = corpus / driver.REPO
    exact_root = work / "exact" / driver.REPO
    if exact_root.exists():
        shutil.rmtree(exact_root)
    shutil.copytree(repo, exact_root, ignore=shutil.ignore_patterns(".git"), symlinks=True)
    shutil.copy(toml, exact_root / "autotune-rewrite.toml")
    env = _env(AUTOTUNE_REWRITE_CACHE_DIR=str(work / "ar-cache"))
    # The environment a driver's cases run in (``ENV``) is the deployment's: both checks are told it.
    told = [x for k, v in getattr(driver, "ENV", {}).items() for x in ("--env", f"{k}={v}")]
    row = {"driver": name, "kernels": kernels, "env": getattr(driver, "ENV", {})}
    for mode, root in (("zero_config", repo), ("exact", exact_root)):
        start, exits = time.monotonic(), []
        out = dest / f"check_{mode}.json"
        # Each kernel's result is kept as it comes (a run stopped at its time limit keeps what it
        # did), and a run over kept results checks only the kernels they lack.
        merged = json.loads(out.read_text()) if out.is_file() else {"kernels": [], "depends": [], "errors": []}
        done = {f"{k.get('path')}::{k.get('kernel')}" for k in merged["kernels"]}
        for ident in kernels:  # only the captured kernels, each its own check, the JSON merged
            path = ident.split("::")[0]
            if f"{path}::{ident.split('::')[1].split(':')[0]}" in done:  # ``path::name:LINE`` idents too
                continue
            res = _cli(["check", str(root / path), "--kernel", ident, "--arch", "sm_120", "--arch", "sm_90",
                        "--format", "json", "-j", str(jobs), *told], env, dest / "run.log", timeout)
            exits.append(res.returncode if res else "timeout")
            try:
                doc = json.loads(res.stdout) if res is not None else {}
            except json.JSONDecodeError:
                doc = {"errors": [{"path": path, "message": "no JSON on stdout"}]}
            for key in ("kernels", "depends", "errors"):
                merged[key] += doc.get(key) or []
            merged["triton_version"] = doc.get("triton_version", merged.get("triton_version"))
            out.write_text(json.dumps(merged, indent=1))
        row[f"{mode}_exits"] = exits
        row[f"{mode}_s"] = round(time.monotonic() - start, 1)
        out.write_text(json.dumps(merged, indent=1))
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=Path("/tmp/corpus"))
    ap.add_argument("--out", type=Path, default=Path("out"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/fidelity"))
    ap.add_argument("--repos", nargs="*", help="driver names (default: every driver)")
    ap.add_argument("--parallel", type=int, default=8, help="drivers captured at once; checks at once")
    ap.add_argument("--jobs", type=int, default=4, help="-j of each check")
    ap.add_argument("--case-timeout", type=float, default=240)
    ap.add_argument("--check-timeout", type=float, default=300)
    ap.add_argument("--skip-capture", action="store_true", help="reuse the captures already under --out")
    ap.add_argument("--capture-only", action="store_true", help="stop after the captures (check elsewhere)")
    ap.add_argument("--budget", type=float, default=480, help="seconds the captures may take in all")
    ap.add_argument("--case-parallel", type=int, default=3, help="cases of one driver run at once")
    ap.add_argument("--skip", action="append", default=[], metavar="DRIVER:CASE", help="a case not to run")
    ap.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--case", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--drive", help=argparse.SUPPRESS)
    ap.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        run_case(args.corpus, *args.case)
        return 0
    if args.drive:
        drive(args.corpus, args.drive, args.report, args.case_timeout, args.deadline, args.case_parallel,
              set(args.skip))
        return 0
    names = args.repos or sorted(p.stem for p in DRIVERS.glob("*.py") if not p.stem.startswith("_"))
    args.out.mkdir(parents=True, exist_ok=True)
    args.work.mkdir(parents=True, exist_ok=True)
    summary: dict = {"drivers": names}
    try:
        import torch
        import triton

        summary |= {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__}
    except Exception as exc:  # noqa: BLE001
        summary["gpu_error"] = repr(exc)
    args.deadline = time.time() + args.budget
    if not args.skip_capture:
        with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:  # the cases share the cores
            summary["captures"] = list(pool.map(lambda n: capture(args.corpus, n, args.out, args.work, args),
                                                names))
        (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    if args.capture_only:
        return 0
    with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
        summary["checks"] = list(pool.map(lambda n: check(args.corpus, n, args.out, args.work, args.jobs,
                                                          args.check_timeout), names))
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    res = subprocess.run([sys.executable, str(REPO / "benchmarks" / "fidelity" / "compare.py"), str(args.out)],
                         capture_output=True, text=True, timeout=300)
    (args.out / "fidelity.json").write_text(res.stdout)
    print(res.stdout[-6000:], res.stderr[-3000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())

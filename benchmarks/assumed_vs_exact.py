"""Zero-configuration verdicts against hand-written exact specs, config by config.

For each kernel named in ``benchmarks/coverage/exact/<repo>.toml``: ``check --kernel K`` on the
repository as it is, with the repo's ``assume`` table of the coverage benchmark
(``benchmarks/coverage/<repo>.toml``; the inferred spec and its listed assumptions), and on a copy
holding the exact file as its ``autotune-rewrite.toml`` (the exact spec). Prints JSON with every difference in
shared memory, registers, spills and the launch verdict, per config and target, and the
assumptions the zero-configuration verdict listed.

    python benchmarks/assumed_vs_exact.py [CORPUS_DIR] > results.json
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIELDS = ("launchable", "shared_bytes", "registers", "spills")


def check(root: Path, kernel: str, arch: str, assume: dict | None = None) -> list[dict]:
    flags = [f"--assume={name}={json.dumps(value)}" for name, value in (assume or {}).items()]
    proc = subprocess.run([sys.executable, "-m", "autotune_rewrite", "check", str(root), "--kernel", kernel,
                           "--arch", arch, "--format", "json", *flags], capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"check {kernel} on {root}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout)["kernels"]


def main() -> None:
    corpus = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/corpus")
    arch = "sm_120"
    rows, totals = [], {"configs": 0, "differences": 0, "verdict_differences": 0}
    for spec_file in sorted((HERE / "coverage" / "exact").glob("*.toml")):
        repo = corpus / spec_file.stem
        kernels = [t["kernel"] for t in tomllib.loads(spec_file.read_text())["kernels"]]
        table_file = HERE / "coverage" / spec_file.name
        table = tomllib.loads(table_file.read_text())["assume"] if table_file.exists() else {}
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / repo.name
            shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
            shutil.copy(spec_file, copy / "autotune-rewrite.toml")
            for kernel in kernels:
                assumed = [k for k in check(repo, kernel, arch, table)]
                exact = [k for k in check(copy, kernel, arch) if k["spec"] == "exact"]
                (e,) = exact
                exact_by = {c["label"]: c for c in e["configs"]}
                for a in assumed:
                    diffs = []
                    for c in a["configs"]:
                        x = exact_by.get(c["label"])
                        if x is None:
                            continue
                        totals["configs"] += 1
                        d = {f: [c[f], x[f]] for f in FIELDS if c[f] != x[f]}
                        if d:
                            totals["differences"] += 1
                            totals["verdict_differences"] += "launchable" in d
                            diffs.append({"config": c["label"], **d})
                    rows.append({"kernel": kernel, "assumed_spec": a["spec"], "assumed_status": a["status"],
                                 "exact_status": e["status"], "configs": len(a["configs"]),
                                 "differences (assumed, exact)": diffs,
                                 "assumptions": [f"{x['parameter']} = {x['value']}: {x['source']}"
                                                 for x in a["assumptions"]]})
                    print(json.dumps({k: rows[-1][k] for k in ("kernel", "assumed_spec", "configs")}
                                     | {"differences": len(diffs)}), file=sys.stderr)
    import triton

    print(json.dumps({"triton": triton.__version__, "target": arch, "totals": totals, "kernels": rows}, indent=1))


if __name__ == "__main__":
    main()

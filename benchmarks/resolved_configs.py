"""Sites whose configs the scan resolves statically, per corpus repository (scan only: no
compile, a few seconds a repo).

    python benchmarks/resolved_configs.py [CORPUS_DIR] [--repo NAME] [--reasons] > resolved.json

CORPUS_DIR: the unpacked ``../shared/corpus`` (``unpack.sh``; default /tmp/corpus). Runs the
real CLI (``scan --format json``) once per repo. A site counts as resolved when its configs are
known for every target of the run (``configs``, or each ``configs_by_target`` entry); a site
with some config fields marked unknown counts as resolved and, apart, as ``partly_unknown``.
``--reasons`` adds the unresolved reasons (first 90 characters) by count. Writes the JSON to
``$OUT/resolved_configs.json`` too when ``OUT`` is set.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
from pathlib import Path


def scan(repo: Path) -> dict:
    cmd = [sys.executable, "-m", "autotune_rewrite", "scan", str(repo), "--format", "json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]}
    return json.loads(proc.stdout)


def _configs(site: dict) -> list | None:
    if site.get("configs") is not None:
        return site["configs"]
    groups = site.get("configs_by_target") or []
    if groups and all(g.get("configs") is not None for g in groups):
        return [c for g in groups for c in g["configs"]]
    return None


def _reasons(site: dict) -> list[str]:
    if site.get("configs_by_target"):
        return [g["unresolved_reason"] for g in site["configs_by_target"] if g.get("unresolved_reason")]
    return [site.get("unresolved_reason") or "?"]


def tally(result: dict) -> dict:
    sites = result.get("sites", [])
    resolved = partly = 0
    reasons: collections.Counter = collections.Counter()
    for site in sites:
        configs = _configs(site)
        if configs is None:
            reasons.update(r[:90] for r in _reasons(site))
            continue
        resolved += 1
        if any(c.get("unknown") for c in configs):
            partly += 1
    return {"sites": len(sites), "resolved": resolved, "partly_unknown": partly,
            "unresolved": len(sites) - resolved, "reasons": reasons.most_common(15)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", nargs="?", default="/tmp/corpus")
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--reasons", action="store_true")
    args = parser.parse_args()
    repos = sorted(p for p in Path(args.corpus).iterdir() if (p / ".git").exists())
    if args.repo:
        repos = [p for p in repos if p.name in args.repo]
    out: dict = {"repos": {}, "totals": collections.Counter()}
    for repo in repos:
        result = scan(repo)
        row = {"error": result["error"]} if "error" in result else tally(result)
        if not args.reasons:
            row.pop("reasons", None)
        out["repos"][repo.name] = row
        for k in ("sites", "resolved", "partly_unknown", "unresolved"):
            out["totals"][k] += row.get(k, 0)
    text = json.dumps(out, indent=2)
    print(text)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "resolved_configs.json").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Zero-configuration verdicts against exact (captured) specs, and exact against the live kernels.

Reads the folder ``benchmarks/device/fidelity.py`` writes (one subfolder per driver:
``records.json`` from ``capture``, ``check_zero_config.json`` and ``check_exact.json``) and prints
JSON:

- ``judged``: of the captured kernels, how many zero-configuration ``check`` judged (every entry of
  the kernel ``judged``/``assumed``/``no_launchable``, the coverage benchmark's rule);
- ``pairs``: per (captured kernel, config, target) judged both ways, the exact verdict against the
  zero-configuration ones (one per inferred spec of the kernel):
  ``agree``; ``depends`` (the zero-configuration specs disagree among themselves, so no rewrite
  acts on the config; ``reported`` when check's ``depends`` block names it); ``unsafe`` (zero
  configuration says it launches at every spec, exact says it cannot: a rewrite would keep or pick
  a dead config); ``conservative`` (the reverse: a prune would drop a config that launches);
- ``fields``: per pair, whether some zero-configuration spec has the exact SMEM, registers, spills;
- ``live``: per live compile on the H200, whether exact's sm_90 SMEM, registers and spills equal it.

    python benchmarks/fidelity/compare.py OUT_DIR > fidelity.json
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

JUDGED = {"judged", "assumed", "no_launchable"}
FIELDS = ("shared_bytes", "registers", "spills")


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def _entries(check: dict | None, ident: str) -> list[dict]:
    """The check entries (one per launch spec) of the kernel ``path::name``."""
    path, name = ident.rsplit("::", 1)
    return [k for k in (check or {}).get("kernels", [])
            if k.get("kernel") == name and str(k.get("path", "")).endswith(path)]


def _same_site(site: str, ident: str) -> bool:
    """``path::name`` idents from two roots (the repository, a copy of it) name the same kernel."""
    a, b = site.rsplit("::", 1), ident.rsplit("::", 1)
    return len(a) == 2 and a[1] == b[1] and (a[0].endswith(b[0]) or b[0].endswith(a[0]))


def _rows(entries: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """Verdict rows by (config label, arch), from judged entries and compiled configs only."""
    out: dict[tuple[str, str], list[dict]] = {}
    for e in entries:
        if e.get("status") not in JUDGED:
            continue
        for c in e.get("configs", []):
            if c.get("compile_error") is None and c.get("launchable") is not None:
                out.setdefault((c["label"], c["arch"]), []).append(c | {"_family": e.get("spec_family")})
    return out


def classify(exact: dict, zero: list[dict]) -> str:
    said = {c["launchable"] for c in zero}
    if len(said) > 1:
        return "depends"
    (launches,) = said
    if launches == exact["launchable"]:
        return "agree"
    return "unsafe" if launches else "conservative"


def compare_kernel(ident: str, zero_check: dict | None, exact_check: dict | None) -> dict:
    zero_entries, exact_entries = _entries(zero_check, ident), _entries(exact_check, ident)
    zero_status = sorted({e.get("status") for e in zero_entries})
    row = {"kernel": ident, "zero_config_status": zero_status,
           "exact_status": sorted({e.get("status") for e in exact_entries}),
           "zero_config_judged": bool(zero_entries) and all(e.get("status") in JUDGED for e in zero_entries),
           "assumptions": sorted({f"{a['parameter']} = {a['value']}" for e in zero_entries
                                  for a in e.get("assumptions", [])}),
           "pairs": Counter(), "fields_equal": Counter(), "fields_compared": 0, "differences": []}
    reported = {(d["config"], d["arch"]) for d in (zero_check or {}).get("depends", [])
                if _same_site(d.get("kernel", ""), ident)}
    zero_rows = _rows(zero_entries)
    for (label, arch), exact_rows in _rows(exact_entries).items():
        zero = zero_rows.get((label, arch))
        if not zero:
            continue
        for x in exact_rows:
            kind = classify(x, zero)
            if kind == "depends":
                kind = "depends_reported" if (label, arch) in reported else "depends_across_launches"
            row["pairs"][kind] += 1
            row["fields_compared"] += 1
            for f in FIELDS:
                row["fields_equal"][f] += any(z[f] == x[f] for z in zero)
            row["fields_equal"]["all"] += any(all(z[f] == x[f] for f in FIELDS) for z in zero)
            if kind in ("unsafe", "conservative"):
                row["differences"].append({
                    "config": label, "arch": arch, "kind": kind,
                    "exact": {f: x[f] for f in FIELDS} | {"launchable": x["launchable"], "reason": x.get("reason")},
                    "zero_config": [{f: z[f] for f in FIELDS} | {"launchable": z["launchable"]} for z in zero]})
    return row


def live_vs_exact(folded: dict, exact_check: dict | None) -> list[dict]:
    """Each live compile on the H200 against exact's sm_90 row of the same spec and config."""
    rows = []
    for kernel in folded.get("kernels", []):
        entries = _entries(exact_check, kernel["ident"])
        for spec in kernel["specs"]:
            reports = [e for e in entries if e.get("spec") == spec["name"]]
            for live in spec["compiles"]:
                meta = {k: v for k, v in live["meta"]}
                static = next((c for r in reports for c in r.get("configs", []) if c["arch"] == "sm_90"
                               and c["params"] == meta and c["num_warps"] == live["num_warps"]
                               and c["num_stages"] == live["num_stages"]), None)
                got = [live["shared"], live["n_regs"], live["n_spills"]]
                want = None if static is None else [static[f] for f in FIELDS]
                rows.append({"kernel": kernel["ident"], "spec": spec["name"], "config": meta | {
                    "num_warps": live["num_warps"], "num_stages": live["num_stages"]},
                    "live_h200": got, "exact_sm90": want, "match": got == want})
    return rows


def compare(out: Path) -> dict:
    kernels, live, drivers = [], [], []
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        records = _load(folder / "records.json")
        cases = _load(folder / "cases.json") or {}
        folded = (records or {}).get("folded") or {"kernels": []}
        zero, exact = _load(folder / "check_zero_config.json"), _load(folder / "check_exact.json")
        idents = [k["ident"] for k in folded["kernels"]]
        drivers.append({"driver": folder.name, "cases": len(cases.get("cases", [])),
                        "cases_ok": sum(c["exit"] == 0 for c in cases.get("cases", [])),
                        "failed_cases": [c["case"] for c in cases.get("cases", []) if c["exit"] != 0],
                        "driver_error": cases.get("driver_error"), "captured_kernels": len(idents),
                        "skipped_by_capture": folded.get("skipped", [])})
        kernels += [compare_kernel(i, zero, exact) | {"driver": folder.name} for i in idents]
        live += live_vs_exact(folded, exact)
    pairs, fields = Counter(), Counter()
    compared = 0
    for k in kernels:
        pairs.update(k["pairs"])
        fields.update(k["fields_equal"])
        compared += k["fields_compared"]
    judged = sum(k["zero_config_judged"] for k in kernels)
    repos = {k["driver"] for k in kernels}
    return {
        "captured_kernels": len(kernels), "repositories": len(repos),
        "zero_config_judged": judged, "zero_config_judged_share": round(judged / len(kernels), 3) if kernels else None,
        "pairs": dict(pairs), "pairs_compared": compared,
        "fields_equal_share": {f: round(n / compared, 3) for f, n in fields.items()} if compared else {},
        "live_vs_exact_sm90": {"compiles": len(live), "matching": sum(r["match"] for r in live),
                               "not_compiled_by_exact": sum(r["exact_sm90"] is None for r in live),
                               "mismatches": [r for r in live if not r["match"]][:40]},
        "drivers": drivers,
        "kernels": [k | {"pairs": dict(k["pairs"]), "fields_equal": dict(k["fields_equal"])} for k in kernels],
    }


if __name__ == "__main__":
    print(json.dumps(compare(Path(sys.argv[1])), indent=1))

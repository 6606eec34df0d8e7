"""The package's layout stays the pipeline: no import circles, every import points to the same
stage or an earlier one, small modules and stage folders (issue 19).

Imports are read with ``ast`` from every module, those inside functions included: an import
moved into a function is still a dependency, so it may not close a circle either."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autotune_rewrite"
# The floors, lowest first: a module may import its own floor or a lower one. The top-level
# shared modules are the ground floor; the stage folders follow in the order data flows.
FLOORS = (
    "<shared>", "settings", "cache_admin", "evaluate", "wrapper", "locate", "spec", "isolate", "compile",
    "changed_inputs", "check", "timings", "gpu", "rewrite", "output", "bench", "apply", "cli_common", "cli_cache", "cli",
    "__main__",
)
MAX_MODULE_LINES = 400
MAX_STAGE_LINES = 4000


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The package's modules ``name`` imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                found.add(full if full in MODULES else node.module)
    return {m for m in found if m in MODULES and m != name}


EDGES = {name: _imports(name, path) for name, path in MODULES.items()}


def _floor(name: str) -> str:
    parts = name.split(".")
    if len(parts) == 1:
        return "<shared>"  # the package's own __init__
    if len(parts) == 2 and not MODULES[name].name == "__init__.py":
        return parts[1] if parts[1] in FLOORS else "<shared>"
    return parts[1]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(graph[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return out


def test_no_module_imports_in_a_circle():
    assert _cycles(EDGES) == []


def test_stages_import_only_their_own_floor_or_lower():
    unknown = sorted({_floor(m) for m in MODULES} - set(FLOORS))
    assert not unknown, f"stage folders missing from FLOORS: {unknown}"
    rank = {f: i for i, f in enumerate(FLOORS)}
    upward = sorted(f"{a} -> {b}" for a, targets in EDGES.items() for b in targets
                    if _floor(a) != _floor(b) and rank[_floor(b)] > rank[_floor(a)])
    assert upward == []


def test_no_deciding_stage_imports_the_words():
    deciding = {"evaluate", "wrapper", "locate", "spec", "isolate", "compile", "check", "rewrite"}
    found = sorted(f"{a} -> {b}" for a, targets in EDGES.items() if _floor(a) in deciding
                   for b in targets if _floor(b) == "output")
    assert found == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_stay_small(name):
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{name}: {lines} lines"


def test_stage_folders_stay_small():
    sizes: dict[str, int] = {}
    for name, path in MODULES.items():
        if path.parent != PACKAGE:
            stage = path.relative_to(PACKAGE).parts[0]
            sizes[stage] = sizes.get(stage, 0) + len(path.read_text(encoding="utf-8").splitlines())
    assert {s: n for s, n in sizes.items() if n > MAX_STAGE_LINES} == {}

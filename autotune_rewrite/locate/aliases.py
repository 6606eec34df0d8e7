"""What a module's names stand for beyond LibCST's qualified names: ``_AT = triton.autotune``.

LibCST's qualified names follow imports but stop at an assignment: after
``_AT = triton.autotune`` the decorator ``@_AT(...)`` names the module's own ``pkg.mod._AT``,
and after ``autotune = triton.autotune if HAS_TRITON else _noop`` it names ``pkg.mod.autotune``.
So each file records, as plain data, what its module-level names are bound to:

- ``aliases``: local name -> the absolute names it may stand for, from assignments whose value
  only names something (``a.b``; both branches of ``a if c else b``; ``d["k"]`` of a literal
  dict) and from imports, also under a top-level ``if``/``try`` (guarded imports and fallbacks);
- ``stars``: the modules it star-imports; ``exports``: its literal ``__all__``; ``defined``:
  every module-level name it binds itself (which a star import it makes does not provide).

``meanings`` follows one file's own aliases (``_B = _AT``); the linking pass follows the rest
across files (``linking.Project.origins``). Nothing is evaluated: a name bound to a call or
to anything computed stands for nothing here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from autotune_rewrite.locate.names import absolutize, module_level
from autotune_rewrite.triton_names import AUTOTUNE, is_triton_module

_MAX_DEPTH = 8


@dataclass(frozen=True)
class ModuleNames:
    aliases: dict[str, frozenset[str]] = field(default_factory=dict)
    stars: tuple[str, ...] = ()
    exports: tuple[str, ...] | None = None  # ``__all__`` when it is a literal list of strings
    defined: frozenset[str] = frozenset()  # every module-level name it binds itself

    def star_binds(self, name: str) -> bool:
        """Whether ``from <this module> import *`` binds ``name`` (Python's rule)."""
        return name in self.exports if self.exports is not None else not name.startswith("_")


def expr_names(pm, expr: cst.BaseExpression, depth: int = 0) -> frozenset[str]:
    """Absolute names a value expression may stand for, without evaluating anything."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return pm.names(expr)
    if isinstance(expr, cst.IfExp) and depth < _MAX_DEPTH:
        return expr_names(pm, expr.body, depth + 1) | expr_names(pm, expr.orelse, depth + 1)
    if isinstance(expr, cst.Subscript) and depth < _MAX_DEPTH:
        entry = _dict_entry(pm, expr)
        return expr_names(pm, entry, depth + 1) if entry is not None else frozenset()
    return frozenset()


def _dict_entry(pm, sub: cst.Subscript) -> cst.BaseExpression | None:
    """``TUNERS["x"]`` where ``TUNERS`` is bound once, at module level, to a literal dict with
    a literal key ``"x"``: that entry's value. Anything else (a registry filled at run time, a
    computed key) is not known statically."""
    if not (isinstance(sub.value, cst.Name) and len(sub.slice) == 1):
        return None
    index = sub.slice[0].slice
    if not (isinstance(index, cst.Index) and isinstance(index.value, (cst.SimpleString, cst.Integer))):
        return None
    found = pm.module_bindings().get(sub.value.value, [])
    if len(found) != 1 or not isinstance(found[0], cst.Dict):
        return None
    key = index.value.evaluated_value
    for el in found[0].elements:
        if isinstance(el, cst.DictElement) and isinstance(el.key, (cst.SimpleString, cst.Integer)) \
                and el.key.evaluated_value == key:
            return el.value
    return None


def module_names(pm) -> ModuleNames:
    aliases: dict[str, set[str]] = {}
    exports = None
    defined = set(pm.dropped)
    for stmt in module_level(pm.tree.body):
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            defined.add(stmt.name.value)
            continue
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                for local, target in _imported(pm, small):
                    aliases.setdefault(local, set()).add(target)
                    defined.add(local)
            elif isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                for t in targets:
                    if isinstance(t, cst.Name):
                        defined.add(t.value)
                    if isinstance(t, cst.Name) and t.value == "__all__":
                        exports = _literal_names(small.value)
                    elif isinstance(t, cst.Name):
                        names = expr_names(pm, small.value)
                        if names:
                            aliases.setdefault(t.value, set()).update(names)
    return ModuleNames({k: frozenset(v) for k, v in aliases.items()}, pm.stars, exports, frozenset(defined))


def _imported(pm, small):
    if isinstance(small, cst.Import):
        for alias in small.names:
            dotted = pm.code(alias.name)
            if alias.asname is not None:
                yield alias.asname.name.value, dotted
            else:
                yield dotted.split(".", 1)[0], dotted.split(".", 1)[0]  # ``import a.b`` binds ``a``
        return
    if isinstance(small.names, cst.ImportStar):
        return
    base = "." * len(small.relative) + (pm.code(small.module) if small.module else "")
    for alias in small.names:
        name = pm.code(alias.name)
        joined = f"{base}.{name}" if base and not base.endswith(".") else f"{base}{name}"
        local = alias.asname.name.value if alias.asname else name
        yield local, absolutize(joined, pm.module_name, pm.is_package)


def _literal_names(value) -> tuple[str, ...] | None:
    if not isinstance(value, (cst.List, cst.Tuple)):
        return None
    out = []
    for el in value.elements:
        if not isinstance(el, cst.Element) or not isinstance(el.value, cst.SimpleString):
            return None
        out.append(el.value.evaluated_value)
    return tuple(out)


def meanings(pm, names: frozenset[str], aliases: dict[str, frozenset[str]]) -> frozenset[str]:
    """``names`` with this file's own aliases followed: ``pkg.mod._AT`` -> ``triton.autotune``
    when ``_AT = triton.autotune``; both branches of a conditional alias. Names of other
    modules are left for the linking pass."""
    prefix = pm.module_name + "."
    out: set[str] = set()
    todo = [(n, 0) for n in names]
    while todo:
        name, depth = todo.pop()
        if name in out:
            continue
        out.add(name)
        if depth >= _MAX_DEPTH or not name.startswith(prefix):
            continue
        local, _, rest = name[len(prefix):].partition(".")
        for target in aliases.get(local, ()):
            todo.append((f"{target}.{rest}" if rest else target, depth + 1))
    return frozenset(out)


def alias_words(facts) -> frozenset[bytes]:
    """Names other than ``autotune`` that scanned modules bind to ``triton.autotune``
    (``tune = triton.autotune``, ``from triton import autotune as tune``), and the names that
    import those in turn: a file using one of them need not say "autotune" anywhere."""
    words: set[str] = set()
    while True:
        more = {local for f in facts.values() for local, targets in f.names.aliases.items()
                if local not in words and any(
                    t in AUTOTUNE or (not is_triton_module(t.split(".", 1)[0]) and t.rsplit(".", 1)[-1] in words)
                    for t in targets)}
        if not more:
            return frozenset(w.encode() for w in words if w != "autotune")
        words |= more


__all__ = ["ModuleNames", "alias_words", "expr_names", "meanings", "module_names"]

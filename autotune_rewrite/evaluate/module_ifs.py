"""Names bound under a module-level ``if``/``elif``/``else``.

``CONFIGS = CUDA_CONFIGS if ... `` is often written as a statement instead::

    if os.environ.get("FAST", "0") == "1":
        CONFIGS = [...]
    elif torch.version.hip is not None:
        CONFIGS = [...]
    else:
        CONFIGS = [...]

``branch_bindings`` gives the evaluator the chain of tests and, per branch, what binds the
name there; the evaluator decides the tests (per target when they ask the device) and takes
the binding of the branch in force. Only names with no plain module-level binding come here.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst


@dataclass(frozen=True)
class Branch:
    found: list  # what binds the name directly in this branch (value nodes or a def)
    nested: tuple | None  # else: the ``(test, taken, other)`` chain of an ``if`` inside it


def _direct(body, name: str) -> list:
    out: list = []
    for stmt in body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == name:
            out.append(stmt)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    out.extend(small.value for t in small.targets
                               if isinstance(t.target, cst.Name) and t.target.value == name)
                elif isinstance(small, cst.AnnAssign) and small.value is not None \
                        and isinstance(small.target, cst.Name) and small.target.value == name:
                    out.append(small.value)
    return out


def _branch(block, name: str) -> Branch:
    if block is None:
        return Branch([], None)
    body = list(block.body) if isinstance(block, cst.IndentedBlock) else []
    return Branch(_direct(body, name), branch_bindings(body, name))


def _chain(stmt: cst.If, name: str) -> tuple:
    orelse = stmt.orelse
    if isinstance(orelse, cst.If):  # elif: the else branch is the next test
        other = Branch([], _chain(orelse, name))
    else:
        other = _branch(orelse.body if orelse is not None else None, name)
    return stmt.test, _branch(stmt.body, name), other


def _binds(stmt: cst.If, name: str) -> bool:
    taken, other = _chain(stmt, name)[1:]
    return any(b.found or b.nested is not None for b in (taken, other))


def branch_bindings(body, name: str) -> tuple | None:
    """``(test, taken, other)`` for the one ``if`` statement of ``body`` that binds ``name`` in
    some branch (None when none does, or when several do: the binding in force is then not
    one ``if``'s)."""
    ifs = [s for s in body if isinstance(s, cst.If) and _binds(s, name)]
    return _chain(ifs[0], name) if len(ifs) == 1 else None

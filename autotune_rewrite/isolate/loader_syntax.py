"""What the kernel loader reads off a module's source: syntax only, nothing executed.

Module-level assignments by target (looking into if/try/with blocks as Python's global scope
does), the bindings of import statements, dotted names, which right-hand sides are static
(literals, arithmetic on other constants, ``tl.constexpr(...)``) and which are constexprs, the
global names a node reads (given the scope analysis' answers), the ``@triton.jit`` arguments a
compile needs, and the line a name is bound or read on (for messages at the user's file:line).
"""

from __future__ import annotations

import ast
import re

import libcst as cst

STATIC_CALLS = {"constexpr", "int", "float", "bool", "min", "max", "abs", "cdiv", "next_power_of_2"}


def def_line(text: str, name: str) -> int | None:
    """Line of the last module-level ``def name(`` (the one that wins when the module runs)."""
    found = list(re.finditer(rf"^(?:async[ \t]+)?def[ \t]+{re.escape(name)}[ \t]*\(", text, re.MULTILINE))
    return text.count("\n", 0, found[-1].start()) + 1 if found else None


def assignments(body) -> dict[int, cst.CSTNode]:
    """Module-level ``x = ...`` / ``x: T = ...`` statements by their target Name, looking into
    module-level if/try/with blocks (``if HAS_TRITON:``) as Python's global scope does."""
    out: dict[int, cst.CSTNode] = {}
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        if isinstance(target.target, cst.Name):
                            out[id(target.target)] = small
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    out[id(small.target)] = small
        elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
            blocks = [stmt.body]
            if isinstance(stmt, cst.If) and stmt.orelse is not None:
                blocks.append(stmt.orelse if isinstance(stmt.orelse, cst.Else) else cst.IndentedBlock([stmt.orelse]))
            if isinstance(stmt, cst.Try):
                blocks += [h.body for h in stmt.handlers] + [b.body for b in (stmt.orelse, stmt.finalbody) if b]
            for block in blocks:
                inner = block.body if hasattr(block, "body") else block
                out.update(assignments(inner.body if isinstance(inner, cst.IndentedBlock) else inner))
    return out


def imports_triton(node: cst.CSTNode, name: str) -> bool:
    """Whether an import statement binds ``name`` to Triton or one of its modules."""
    if isinstance(node, cst.Import):
        return any(bound_name(a, True) == name and dotted(a.name).split(".")[0] == "triton" for a in node.names)
    if isinstance(node, cst.ImportFrom) and not node.relative and node.module is not None:
        source = dotted(node.module)
        return (source == "triton" or source.startswith("triton.")) and not isinstance(node.names, cst.ImportStar) \
            and any(bound_name(a, False) == name for a in node.names)
    return False


def import_binding(line: str) -> tuple[str, str]:
    """(bound name, dotted target) of an import line this module emits."""
    words = line.split()
    if words[0] == "import":
        target = words[1]
        bound = words[3] if len(words) > 3 else target.split(".")[0]
        return bound, (target if len(words) > 3 else bound)
    target = f"{words[1]}.{words[3]}"  # from <module> import <name> [as <bound>]
    return (words[5] if len(words) > 5 else words[3]), target


def bound_name(alias: cst.ImportAlias, plain_import: bool) -> str:
    if alias.asname is not None:
        return alias.asname.name.value
    name = dotted(alias.name)
    return name.split(".")[0] if plain_import else name


def dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted(node.value)}.{node.attr.value}"
    return ""


def is_static(expr: cst.BaseExpression) -> bool:
    """True when evaluating ``expr`` needs nothing but literals and other module constants."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.Name):
        return True  # another constant (followed) or True/False/None
    if isinstance(expr, cst.Attribute):
        return isinstance(expr.value, cst.Name)  # tl.float16, tl.constexpr: module attributes
    if isinstance(expr, cst.UnaryOperation):
        return is_static(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return is_static(expr.left) and is_static(expr.right)
    if isinstance(expr, cst.BooleanOperation):
        return is_static(expr.left) and is_static(expr.right)
    if isinstance(expr, cst.Comparison):
        return is_static(expr.left) and all(is_static(c.comparator) for c in expr.comparisons)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and is_static(e.value) for e in expr.elements)
    if isinstance(expr, cst.Call):
        callee = expr.func.attr.value if isinstance(expr.func, cst.Attribute) else getattr(expr.func, "value", "")
        return callee in STATIC_CALLS and all(is_static(a.value) for a in expr.args)
    return False


def binding_line(text: str, name: str) -> int | None:
    """The line where the module binds ``name`` at module level (the last binding, as it wins
    when the module runs), else the first line that reads it; None when neither is found.
    Python's own parser (C, cheap): only asked when a name could not be provided."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    bound = [line for stmt in tree.body for line in _binds(stmt, name)]
    if bound:
        return max(bound)
    reads = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name]
    return min(reads) if reads else None


def _binds(stmt: ast.stmt, name: str):
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name == name:
        yield stmt.lineno
    elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
            yield stmt.lineno
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            bound = alias.asname or (alias.name.split(".")[0] if isinstance(stmt, ast.Import) else alias.name)
            if bound == name:
                yield stmt.lineno
    elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
        blocks = [stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])]
        blocks += [h.body for h in getattr(stmt, "handlers", [])]
        for block in blocks:
            for inner in block:
                yield from _binds(inner, name)


# @triton.jit arguments that only matter at launch or for printing; they usually name host-side
# Python functions (a FLOP counter for the profiler) that the bundle does not carry.
LAUNCH_ONLY_ARGS = {"launch_metadata", "repr"}


def compile_relevant(decorator: cst.Decorator) -> cst.Decorator:
    call = decorator.decorator
    if not isinstance(call, cst.Call):
        return decorator
    args = [a for a in call.args if not (a.keyword and a.keyword.value in LAUNCH_ONLY_ARGS)]
    if len(args) == len(call.args):
        return decorator
    if args:  # the last argument must not keep a dangling comma from a dropped one
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return decorator.with_changes(decorator=call.with_changes(args=args))


class Reads(cst.CSTVisitor):
    """Global names read inside a node, and ``base.attr`` pairs on them."""

    def __init__(self, global_refs: dict[int, str], unbound_refs: dict[int, str]):
        self.global_refs = global_refs
        self.unbound_refs = unbound_refs
        self.names: list[str] = []
        self.attributes: list[tuple[str, str]] = []

    def visit_Name(self, node: cst.Name) -> None:
        name = self.global_refs.get(id(node)) or self.unbound_refs.get(id(node))
        if name is not None and name not in self.names:
            self.names.append(name)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and id(node.value) in self.global_refs:
            pair = (node.value.value, node.attr.value)
            if pair not in self.attributes:
                self.attributes.append(pair)


def reads_constexpr(value: cst.BaseExpression) -> bool:
    """Whether a global's value is a ``tl.constexpr``: it calls ``constexpr`` (any spelling:
    ``tl.constexpr``, ``triton.language.constexpr``, an engine's re-export), as arithmetic on a
    constexpr is one too."""
    calls = _ConstexprCalls()
    value.visit(calls)
    return calls.found


class _ConstexprCalls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func.attr.value if isinstance(node.func, cst.Attribute) else dotted(node.func)
        self.found = self.found or func == "constexpr"

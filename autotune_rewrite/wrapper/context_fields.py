"""A launch argument read from a context object: ``kernel[grid](..., ctx.BLOCK_M, ...)``.

MoE and GEMM wrappers keep their tile sizes in a context object (a ``@dataclass`` with
defaults, a ``NamedTuple``, a plain class whose ``__init__`` stores its parameters) made by
the class call or a ``create_*_context(...)`` factory, and pass its fields to the kernel.
The static evaluator builds such an instance (``evaluate.classes``: fields, defaults,
``__post_init__``; every argument only known at run time stays ``Opaque``) and reads the
field; a field whose value is not fixed by the code stays unknown, never guessed. Where
``ctx`` comes from decides how sure the value is:

- a local binding (``ctx = create_ctx(..., BLOCK_SIZE_M=128)``), as bound at the launch
  (``evaluate.bindings``): exact; unknown when the wrapper assigns the field or calls a
  method of the class that does; when it hands ``ctx`` to another function, the value holds
  only if that function leaves the field alone, which is said (an assumption);
- a wrapper parameter with a default (``ctx=Ctx()``): the caller leaves it at that default;
- a wrapper parameter annotated with the class (``ctx: MoECtx``): the class default, which
  the caller's instance may override (an assumption, like a wrapper default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import libcst as cst

from autotune_rewrite.evaluate import Evaluator, Unresolved
from autotune_rewrite.evaluate.classes import ClassValue, Instance
from autotune_rewrite.evaluate.values import ConfigObj, Opaque


@dataclass(frozen=True)
class FieldRead:
    """A context field's value as the launch sees it, how it was read, and what it rests on."""

    value: Any
    why: str
    assumption: str = ""


def _evaluator(resolve: Callable[[str], Any], w=None, parameters: dict | None = None) -> Evaluator:
    ev = Evaluator(resolve=resolve, opaque_arguments=True)
    if w is not None and parameters is not None:
        ev.parameters = {id(w.fn): parameters}
    return ev


def context_field(w, e: cst.Attribute, resolve: Callable[[str], Any]) -> FieldRead | None:
    """``name.attr`` in the wrapper ``w`` (``wrapper_bindings.Wrapper``) read as a field of a
    context object; None when ``name`` is not one or the field is not known statically."""
    if not isinstance(e.value, cst.Name) or w.fn is None:
        return None
    name, attr = e.value.value, e.attr.value
    try:
        if name in w.assigned:
            return _local(w, e, name, attr, resolve)
        if name in w.params:
            return _parameter(w, w.params[name], name, attr, resolve)
    except (Unresolved, RecursionError):
        return None
    return None


def spread_fields(w, expr: cst.BaseExpression, resolve: Callable[[str], Any]) -> dict[str, FieldRead | None] | None:
    """``kernel[grid](..., **config.all_kwargs())`` with ``config`` built in the wrapper (a
    ``triton.Config`` from a factory, a dict): name -> its value (None: the name is passed,
    its value only known at run time); None when the spread is not known statically."""
    root = expr
    while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
        root = root.func if isinstance(root, cst.Call) else root.value
    if w.fn is None or not isinstance(root, cst.Name) or root.value not in w.assigned:
        return None
    try:
        value, assumption = _in_wrapper(w, lambda ev: ev.eval(w.pm, expr, {}), resolve)
    except (Unresolved, RecursionError):
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return None
    why = f"{_shorten(w.code(expr))}"
    return {k: FieldRead(v, f"from **{why}", assumption) if _plain(v) else None for k, v in value.items()}


def _plain(value) -> bool:
    return isinstance(value, (bool, int, float, str, type(None))) and not isinstance(value, Opaque)


def _value(ev: Evaluator, obj, attr: str):
    if not isinstance(obj, (Instance, ConfigObj)):
        raise Unresolved("not a context object")
    value = ev.get_attribute(obj, attr, ev._plain_attribute)
    if not _plain(value):
        raise Unresolved("not a plain value")
    return value


def _in_wrapper(w, read: Callable[[Evaluator], Any], resolve) -> tuple[Any, str]:
    """``read`` in the wrapper with its parameters unknown; failing that, with those that have
    a default at their default, which then is an assumption for each default it rests on
    (``config = config or make_config(...)`` with ``config=None``)."""
    unknown = {n: Opaque(f"`{n}` is a parameter of `{w.fn.name.value}`, only known when it is called")
               for n in w.params}
    try:
        return read(_evaluator(resolve, w, unknown)), ""
    except Unresolved:
        defaults = {}
        for n, p in w.params.items():
            if p.default is not None:
                try:
                    defaults[n] = _evaluator(resolve).eval(w.pm, p.default, {})
                except Unresolved:
                    pass
        if not defaults:
            raise
    value = read(_evaluator(resolve, w, {**unknown, **defaults}))
    relied = []
    for n in defaults:
        try:
            read(_evaluator(resolve, w, {**unknown, **defaults, n: unknown[n]}))
        except Unresolved:
            relied.append(n)
    said = ", ".join(f"{n} at its default {_shorten(w.code(w.params[n].default))}" for n in relied)
    return value, f"the caller leaves {said}" if relied else ""


def _local(w, e: cst.Attribute, name: str, attr: str, resolve) -> FieldRead | None:
    # The binding of ``name`` in force at the launch (``evaluate.bindings``), then its field.
    holder: list = []

    def read(ev: Evaluator):
        obj = ev.eval(w.pm, e.value, {})
        value = _value(ev, obj, attr)
        holder[:] = [obj]
        return value

    value, assumption = _in_wrapper(w, read, resolve)
    bound = w.assigned[name]
    made = w.code(bound[-1]) if len(bound) == 1 and isinstance(bound[-1], cst.BaseExpression) else name
    why = f"field {attr} of {name} = {_shorten(made)}"
    changed = _changes(w, name, attr, holder[0])
    if changed == "assigned":
        return None  # ``ctx.BLOCK_M = ...`` or ``ctx.retile()`` setting it: not the construction's value
    if changed:
        more = f"{name}.{attr} is not changed by {changed} before the launch"
        assumption = f"{assumption}; {more}" if assumption else more
    return FieldRead(value, why, assumption)


def _parameter(w, param: cst.Param, name: str, attr: str, resolve) -> FieldRead | None:
    if w.assigned.get(name):
        return None
    ev = _evaluator(resolve)
    if param.default is not None and w.code(param.default) != "None":
        value = _value(ev, ev.eval(w.pm, param.default, {}), attr)
        return FieldRead(value, f"field {attr} of the default {name}={_shorten(w.code(param.default))}",
                         f"the caller leaves {name} at its default {_shorten(w.code(param.default))}")
    if param.annotation is None:
        return None
    cls = _annotated_class(ev, w, param.annotation.annotation)
    if cls is None:
        return None
    value = _value(ev, ev.caller_instance(cls, f"`{name}` is built by the caller"), attr)
    kind = {"dataclass": "dataclass", "namedtuple": "NamedTuple"}.get(cls.kind, "constructor")
    return FieldRead(value, f"{kind} default of {cls.name}.{attr}",
                     f"{name}.{attr}: the {kind} default {value!r} of {cls.name} (the caller's {name} may set another)")


def _annotated_class(ev: Evaluator, w, hint: cst.BaseExpression) -> ClassValue | None:
    """The class of the tree a parameter's type hint names (``Ctx``, ``Optional[Ctx]``,
    ``"Ctx"``); None for anything else."""
    if isinstance(hint, cst.Subscript) and w.code(hint.value).split(".")[-1] == "Optional" and len(hint.slice) == 1:
        inner = hint.slice[0].slice
        hint = inner.value if isinstance(inner, cst.Index) else hint
    if isinstance(hint, cst.BinaryOperation) and isinstance(hint.operator, cst.BitOr):
        sides = [s for s in (hint.left, hint.right) if w.code(s) != "None"]
        hint = sides[0] if len(sides) == 1 else hint
    if isinstance(hint, cst.SimpleString):
        return None  # a forward reference names no node to resolve through scopes
    if not isinstance(hint, (cst.Name, cst.Attribute)):
        return None
    try:
        value = ev.eval(w.pm, hint, {})
    except Unresolved:
        return None
    return value if isinstance(value, ClassValue) else None


def _changes(w, name: str, attr: str, obj) -> str:
    """How the wrapper may change ``name.attr`` after building it: "assigned" (it assigns the
    field, or calls a method of the class that does), the calls it hands ``name`` to, or ""."""
    seen = _Uses(name, attr)
    w.fn.body.visit(seen)
    setters = _setters(obj, attr) if isinstance(obj, Instance) else set()
    if seen.assigned or seen.methods & setters:
        return "assigned"
    return ", ".join(f"{h}(...)" for h in sorted(seen.handed))


def _setters(inst: Instance, attr: str) -> set[str]:
    """Methods of the instance's class (not its constructors) that assign ``self.attr``."""
    out = set()
    body = inst.cls.node.body.body if isinstance(inst.cls.node.body, cst.IndentedBlock) else ()
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value not in ("__init__", "__post_init__"):
            params = [*stmt.params.posonly_params, *stmt.params.params]
            me = params[0].name.value if params else None
            seen = _Uses(me, attr)
            stmt.body.visit(seen)
            if seen.assigned or seen.handed_self:
                out.add(stmt.name.value)
    return out


class _Uses(cst.CSTVisitor):
    """In one body: whether ``name.attr`` is assigned (``=``, ``+=``, ``setattr``), which
    methods of ``name`` are called, and which calls receive ``name`` itself."""

    def __init__(self, name: str | None, attr: str):
        self.name, self.attr = name, attr
        self.assigned = False
        self.handed_self = False
        self.methods: set[str] = set()
        self.handed: set[str] = set()

    def _is_field(self, node) -> bool:
        return (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                and node.value.value == self.name and node.attr.value == self.attr)

    def visit_AssignTarget(self, node) -> None:
        self.assigned = self.assigned or self._is_field(node.target)

    def visit_AugAssign(self, node) -> None:
        self.assigned = self.assigned or self._is_field(node.target)

    def visit_AnnAssign(self, node) -> None:
        self.assigned = self.assigned or self._is_field(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self.name:
            self.methods.add(func.attr.value)
        if isinstance(func, cst.Subscript):
            return  # the launch itself reads, never changes
        for a in node.args:
            if isinstance(a.value, cst.Name) and a.value.value == self.name:
                if isinstance(func, cst.Name) and func.value == "setattr":
                    self.assigned = True
                self.handed_self = True
                self.handed.add(_callee(func))


def _callee(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return "a call"


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["FieldRead", "context_field"]

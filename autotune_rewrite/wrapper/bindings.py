"""The function around a launch: its parameters, and its local assignments as they bind names.

``launch_args`` reads each argument of a ``kernel[grid](...)`` call through these bindings. A
name assigned several times is all of its bindings (branches), except that straight-line code
hides what a later top-level assignment overwrites; a loop target, ``with ... as`` or an
augmented assignment binds a value that is not one expression (``None``); ``M, K = x.shape``
binds each name to one item of a shape (``SHAPE_ITEM``).
"""

from __future__ import annotations

import libcst as cst

from autotune_rewrite.evaluate.own_body import OwnBodyVisitor


class Wrapper:
    """The function around a launch: its parameters and its local assignments, by name."""

    def __init__(self, pm, fn: cst.FunctionDef | None):
        self.pm = pm
        self.fn = fn
        self.params: dict[str, cst.Param] = {}
        self.assigned: dict[str, list[cst.BaseExpression | None]] = {}
        # Every binding in source order: (value, at the function's top level, its first line). A
        # launch reads the bindings above it, and a rebinding's own value (``dq = dq.sum(0)``)
        # the ones before that rebinding.
        self.history: dict[str, list[tuple[cst.BaseExpression | None, bool, int]]] = {}
        if fn is None:
            return
        p = fn.params
        for param in (*p.posonly_params, *p.params, *p.kwonly_params):
            self.params[param.name.value] = param
        top = {id(small) for stmt in getattr(fn.body, "body", ()) if isinstance(stmt, cst.SimpleStatementLine)
               for small in stmt.body}
        order: dict[str, list[tuple[cst.BaseExpression | None, bool, int]]] = {}
        fn.body.visit(_AssignVisitor(order, top, pm))
        self.history = order
        for name, bindings in order.items():
            self.assigned[name] = [value for _, value in visible(bindings, len(bindings))]

    @classmethod
    def of(cls, pm, fn: cst.FunctionDef | None) -> "Wrapper":
        """One per function of a parsed module: a wrapper launching several kernels (or one
        kernel on several branches) is read once. Read-only once made."""
        cache = pm.__dict__.setdefault("_wrappers", {})
        key = id(fn)
        if key not in cache:
            cache[key] = (fn, cls(pm, fn))  # fn kept alive with its entry, so its id stays its own
        return cache[key][1]

    def code(self, node: cst.CSTNode) -> str:
        return self.pm.code(node).strip()


def visible(bindings: list[tuple[cst.BaseExpression | None, bool, int]], before: int) -> list[tuple[int, cst.BaseExpression | None]]:
    """(index, value) of the bindings that a read coming after the first ``before`` of them sees:
    straight-line code, so the last top-level one hides every earlier one."""
    last = max((i for i, (_, is_top, _) in enumerate(bindings[:before]) if is_top), default=0)
    return [(i, value) for i, (value, _, _) in enumerate(bindings[:before]) if i >= last]


def above(bindings: list[tuple[cst.BaseExpression | None, bool, int]], line: int | None) -> int:
    """How many of ``bindings`` start above ``line`` (None: all of them)."""
    return len(bindings) if line is None else sum(1 for _, _, first in bindings if first < line)


class _AssignVisitor(OwnBodyVisitor):
    """Local assignments of one function (not of nested functions or classes), in source order:
    name -> [(value, at the function's top level)]. ``None`` marks a binding whose value is not
    one expression (a loop target, ``with ... as``, an augmented assignment)."""

    def __init__(self, out: dict, top: set[int], pm):
        self.out = out
        self.top = top
        self.pm = pm
        self._current: cst.CSTNode | None = None

    def _add(self, name: str, value) -> None:
        try:
            line = self.pm.span(self._current).start_line
        except (KeyError, AttributeError):  # a node without a position: seen by every read
            line = 0
        self.out.setdefault(name, []).append((value, id(self._current) in self.top, line))

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            self._add(target.value, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            values = (value.elements if isinstance(value, (cst.Tuple, cst.List)) and
                      len(value.elements) == len(elements) else None)
            for i, el in enumerate(elements):
                if values is not None and not isinstance(values[i], cst.StarredElement):
                    self._bind(el, values[i].value)
                elif value is not None and is_shape(value):
                    self._bind(el, SHAPE_ITEM)  # ``M, K = x.shape``: every item an int
                elif value is not None and _is_strides(value):
                    self._bind(el, _stride_item(value, i, len(elements)))
                else:
                    self._bind(el, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._current = node
        for t in node.targets:
            self._bind(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._current = node
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._current = node
        if isinstance(node.target, cst.Name):
            self._add(node.target.value, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._current = node
        self._bind(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._current = node
        self._bind_unknown(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._current = node
        self._bind_unknown(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        self._current = node
        if node.asname is not None:
            self._bind_unknown(node.asname.name)

    def _bind_unknown(self, target) -> None:
        if isinstance(target, cst.Name):
            self._add(target.value, None)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._bind_unknown(e.value)


# A stand-in expression for one item of ``x.shape`` (an int of unknown value).
SHAPE_ITEM = cst.Name("__shape_item__")


def _is_strides(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "stride" \
        and not node.args


def _stride_item(strides: cst.Call, i: int, n: int) -> cst.Call:
    """Item ``i`` of ``a, b, c = x.stride()`` as ``x.stride(i)``; the last as ``x.stride(-1)``,
    since unpacking into ``n`` names says ``x`` has exactly ``n`` dims (so its last-dim stride
    is read as where it is passed as ``x.stride(-1)``)."""
    index = cst.UnaryOperation(cst.Minus(), cst.Integer("1")) if i == n - 1 else cst.Integer(str(i))
    return strides.with_changes(args=[cst.Arg(index)])


def is_shape(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Attribute) and node.attr.value == "shape":
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size" \
            and not node.args:
        return True
    return isinstance(node, cst.Subscript) and is_shape(node.value)



def spelled_kwargs(wrapper, node: cst.BaseExpression) -> list[tuple[str, cst.BaseExpression]]:
    """``kernel[grid](..., **kwargs)`` where the function binds ``kwargs`` once to a dict it spells
    out (``{"BN": 128, "HIDDEN": n}`` or ``dict(BN=128, HIDDEN=n)``) and uses it nowhere but in
    ``**kwargs``: its (key, value) pairs, as if passed by keyword. Anything else (a dict it may
    change, one from elsewhere, a ``**`` inside it): none."""
    if not isinstance(node, cst.Name) or wrapper.fn is None:
        return []
    bound = wrapper.assigned.get(node.value) or []
    if len(bound) != 1 or node.value in wrapper.params:
        return []
    value = bound[0]
    pairs: list[tuple[str, cst.BaseExpression]] = []
    if isinstance(value, cst.Dict):
        for el in value.elements:
            if not (isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString)
                    and isinstance(el.key.evaluated_value, str)):
                return []
            pairs.append((el.key.evaluated_value, el.value))
    elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
        if any(a.keyword is None or a.star for a in value.args):
            return []
        pairs = [(a.keyword.value, a.value) for a in value.args]
    else:
        return []
    uses = _ExpandedOnly(node.value)
    wrapper.fn.body.visit(uses)
    return pairs if uses.only_expanded and uses.bindings == 1 else []


class _ExpandedOnly(cst.CSTVisitor):
    """Is every read of ``name`` a ``**name`` argument? (Nothing else may change the dict.)"""

    def __init__(self, name: str):
        self.name = name
        self.only_expanded = True
        self.bindings = 0
        self._expanded: set[int] = set()

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.star == "**" and isinstance(node.value, cst.Name) and node.value.value == self.name:
            self._expanded.add(id(node.value))

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Name) and t.target.value == self.name:
                self._expanded.add(id(t.target))
                self.bindings += 1  # one binding, or a launch may see another dict

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name and id(node) not in self._expanded:
            self.only_expanded = False


__all__ = ["SHAPE_ITEM", "Wrapper", "above", "is_shape", "spelled_kwargs", "visible"]

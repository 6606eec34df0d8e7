"""What each argument of a ``kernel[grid](...)`` call is, read statically from the wrapper around it.

Triton types a kernel's parameters from the arguments at launch (a bf16 tensor -> ``*bf16``, a
Python int -> ``i32``) and specializes on their values. The wrapper that launches the kernel
usually says most of that in plain code: ``out = torch.empty(..., dtype=torch.float32)``,
``q.stride(-1)``, ``BLOCK=64``, ``bias is not None``, ``chunk_size: int = 64``. This module reads
it, per argument, into an ``ArgFact`` (see ``model.py``): its kind (tensor, int, float, bool,
None, dtype), a tensor's torch dtype name, a known value, and, when the fact rests on something
the code does not guarantee (a wrapper default the caller may override, a tensor assumed
contiguous), that assumption in words. Nothing is executed; what is not plain stays ``unknown``.

Torch dtype names are kept as torch spells them (``float32``); ``check`` maps them to Triton's
types with Triton's own table, so the locator never imports Triton.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from autotune_rewrite.evaluate.literals import literal
from autotune_rewrite.wrapper.context_fields import context_field, spread_fields
from autotune_rewrite.wrapper.tensor_ranks import tensor_ranks
from autotune_rewrite.wrapper.arg_facts import MAX_DEPTH, hint_kind, join, of_value, unknown
from autotune_rewrite.wrapper.asserts import pin, stated_sets
from autotune_rewrite.wrapper.call_facts import CallFacts
from autotune_rewrite.wrapper.operator_facts import OperatorFacts
from autotune_rewrite.wrapper.stated_dtypes import stated_dtypes
from autotune_rewrite.wrapper.stated_layouts import stated_layouts
from autotune_rewrite.wrapper.torch_names import INT_ATTRS, LEGACY_INT_DTYPES, dtype_name
from autotune_rewrite.wrapper.bindings import SHAPE_ITEM, Wrapper, is_shape, above, spelled_kwargs, visible
from autotune_rewrite.model import ArgFact

class ArgReader(CallFacts, OperatorFacts):
    """Reads launch arguments in one wrapper. ``fact(expr)`` never raises."""

    def __init__(self, wrapper: Wrapper, module_value=None, stated=None, resolve=None, line: int | None = None):
        self.w = wrapper
        self.line = line  # the launch's first line: the bindings below it are not what it passes
        self.layouts = stated_layouts(wrapper, line) if line is not None else {}  # ``assert x.stride(1) == 1``
        # ``assert a.dtype == torch.float8_e4m3fn``: a parameter's dtype
        self.dtypes = stated_dtypes(wrapper, line, module_value) if line is not None else {}
        self.module_value = module_value  # name -> (known, value) for module-level constants
        self.stated = stated or {}  # subject text -> StatedSet (``assert Lk in {64, 128}``)
        self.resolve = resolve  # another module's name -> value, for context objects (``context_fields``)
        # name -> the index (in ``Wrapper.history``) of the binding being followed: inside
        # ``x = x.contiguous()`` the name means the bindings before that one.
        self._active: dict[str, int] = {}

    def fact(self, expr: cst.BaseExpression) -> ArgFact:
        try:
            return self._fact(expr, 0)
        except RecursionError:
            return unknown(self.w.code(expr), "nested too deeply")

    # ---------------------------------------------------------------------------------------
    def _fact(self, e: cst.BaseExpression, depth: int) -> ArgFact:
        text = self.w.code(e) if e is not SHAPE_ITEM else "x.shape[i]"
        if depth > MAX_DEPTH:
            return unknown(text, "followed too far")
        method = getattr(self, "_f_" + type(e).__name__, None)
        if method is None:
            return unknown(text)
        out = method(e, depth + 1)
        if isinstance(e, cst.Name) and e is not SHAPE_ITEM and text in self.stated:
            out = pin(out, text, self.stated[text])  # ``assert Lk in {64, 128}`` / ``assert K <= 256``
        return replace(out, text=text)

    def _f_Integer(self, e, d):
        return ArgFact(0, "", "int", value=literal(e), value_known=True, why="literal")

    def _f_SimpleString(self, e, d):
        value = literal(e)
        if not isinstance(value, str):
            return unknown("", "a bytes literal")
        return ArgFact(0, "", "str", value=value, value_known=True, why="literal")

    def _f_Float(self, e, d):
        return ArgFact(0, "", "float", value=literal(e), value_known=True, why="literal")

    def _f_Name(self, e, d):
        if e is SHAPE_ITEM:
            return ArgFact(0, "", "int", why="a tensor's size")
        if e.value in ("True", "False"):
            return ArgFact(0, "", "bool", value=e.value == "True", value_known=True, why="literal")
        if e.value == "None":
            return ArgFact(0, "", "none", value=None, value_known=True, why="literal")
        history = self.w.history.get(e.value, [])
        bound = visible(history, self._active.get(e.value, above(history, self.line)))
        values = [v for _, v in bound]
        if values:
            # A local binding: what every assignment agrees on. Inside one (``dq = dq.sum(0)``)
            # the name means the bindings before it (else the wrapper's parameter).
            outer = self._active.get(e.value)
            facts = []
            try:
                for i, v in bound:
                    self._active[e.value] = i
                    facts.append(self._fact(v, d) if isinstance(v, cst.BaseExpression) else unknown(e.value))
            finally:
                if outer is None:
                    self._active.pop(e.value, None)
                else:
                    self._active[e.value] = outer
            joined = join(facts, e.value)
            if len(values) == 1 and isinstance(values[0], cst.BaseExpression) and values[0] is not SHAPE_ITEM:
                code = self.w.code(values[0])
                joined = replace(joined, why=f"{e.value} = {code}",
                                 expr="" if joined.value_known else joined.expr or code)
            return joined
        if e.value in self.w.params:
            return self._param(e.value, d)
        if self.module_value is not None:
            known, value = self.module_value(e.value)
            if known:
                return of_value(value, f"module constant {e.value}")
        return unknown("", f"{e.value} is not known statically")

    def _param(self, name: str, d: int) -> ArgFact:
        """A wrapper parameter: its type hint, else the kind of its default. A default's value is
        what the launch sees only when the caller leaves it out: an assumption, said so."""
        param = self.w.params[name]
        if name in self.dtypes:
            stated = self.dtypes[name]
            return ArgFact(0, "", "tensor", dtype=stated.dtype, why=f"stated by `{stated.statement}`",
                           assumption=stated.assumption)
        hint = param.annotation.annotation if param.annotation is not None else None
        kind, optional = hint_kind(self.w, hint)
        default = None
        if param.default is not None:
            default = self._fact(param.default, d)
        if default is not None and default.value_known and default.kind in ("int", "float", "bool", "dtype", "str"):
            if kind in (None, default.kind) or (kind == "float" and default.kind == "int"):
                return replace(default, kind=kind or default.kind,
                               assumption=f"the caller leaves {name} at its default {self.w.code(param.default)}",
                               why=f"wrapper default {name}={self.w.code(param.default)}")
        if kind is not None:
            legacy = self.w.code(hint).split(".")[-1] if hint is not None else ""
            return ArgFact(0, "", kind, dtype=LEGACY_INT_DTYPES.get(legacy), why=f"type hint of {name}",
                           optional=optional or (default is not None and default.kind == "none"))
        if default is not None and default.kind == "none":
            return ArgFact(0, "", "unknown", optional=True, why=f"{name} defaults to None")
        return unknown("", f"wrapper parameter {name} has no type hint")

    def _f_Attribute(self, e, d):
        dtype = dtype_name(e)
        if dtype is not None:
            # The value as the runtime passes it: a ``tl.dtype`` stays one, a torch dtype stays torch's.
            base = self.w.code(e.value)
            spelled = f"torch.{e.attr.value}" if base in ("torch", "th") else f"tl.{e.attr.value}"
            return ArgFact(0, "", "dtype", dtype=dtype, value=spelled, value_known=True, why="dtype literal")
        attr = e.attr.value
        if attr in INT_ATTRS:
            return ArgFact(0, "", "int", why=f".{attr}")
        if attr == "dtype":
            base = self._fact(e.value, d)
            if base.kind == "tensor" and base.dtype:
                return ArgFact(0, "", "dtype", dtype=base.dtype, value=f"torch.{base.dtype}", value_known=True,
                               why=f"dtype of {self.w.code(e.value)}", assumption=base.assumption)
            return ArgFact(0, "", "dtype", why=f"dtype of {self.w.code(e.value)}")
        if attr in ("T", "mT"):
            base = self._fact(e.value, d)
            return replace(base, fresh=False) if base.kind == "tensor" else unknown("")
        read = context_field(self.w, e, self.resolve) if self.resolve is not None else None
        if read is not None:
            return replace(of_value(read.value, read.why), assumption=read.assumption)
        return unknown("")

    def _f_Subscript(self, e, d):
        if is_shape(e):
            return ArgFact(0, "", "int", why="a tensor's size")
        base = self._fact(e.value, d)
        if base.kind == "tensor":
            return replace(base, fresh=False, why=f"a slice of {self.w.code(e.value)}")
        return unknown("")


def _last_strides(pm, call: cst.Call, fn: cst.FunctionDef | None) -> dict[cst.BaseExpression, str]:
    """``t.stride(i)`` arguments where ``i`` is the highest index the launch passes for ``t``
    (at least 1): ``t``'s last dim, whose stride is 1 for a contiguous tensor; never when the
    wrapper ``fn`` gives ``t`` more dims than that (see ``tensor_ranks``, read only then)."""
    by_tensor: dict[str, list[tuple[int, cst.BaseExpression]]] = {}
    for a in call.args:
        v = a.value
        if (isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "stride"
                and len(v.args) == 1 and isinstance(v.args[0].value, cst.Integer)):
            by_tensor.setdefault(pm.code(v.func.value).strip(), []).append((int(v.args[0].value.value), v))
    out = {}
    ranks = tensor_ranks(pm, fn) if by_tensor else {}
    for tensor, uses in by_tensor.items():
        top = max(i for i, _ in uses)
        if ranks.get(tensor, top + 1) != top + 1:
            continue
        if top >= 1 and len({i for i, _ in uses}) == top + 1:  # every dim up to it passed
            out.update({v: tensor for i, v in uses if i == top})
    return out


def launch_arguments(pm, call: cst.Call, fn: cst.FunctionDef | None, module_value=None,
                     resolve=None) -> tuple[ArgFact, ...]:
    """One ``ArgFact`` per argument of ``call`` (positional: slot = index; keyword: slot = name;
    positional after the last ``*args``: slot = its place from the end, -1 the last); ``*args``
    gives none, ``**kwargs`` only the keys of a dict the wrapper spells out (``spelled_kwargs``)
    or of a config it builds (``**config.all_kwargs()``). ``resolve``: another module's name -> its
    value (or raises), for the context objects a field is read from."""
    wrapper = Wrapper.of(pm, fn)
    line = pm.span(call).start_line
    reader = ArgReader(wrapper, module_value, stated_sets(wrapper, line, module_value), resolve, line)
    last = _last_strides(pm, call, fn)
    out = []
    index = 0
    after_star = False
    spelled: list[cst.Arg] = []
    for a in call.args:
        if a.star != "**":
            continue
        keys = spelled_kwargs(wrapper, a.value)
        if keys:
            spelled.extend(cst.Arg(v, keyword=cst.Name(k)) for k, v in keys)
        elif resolve is not None:
            # ``**config.all_kwargs()`` of a config the wrapper builds: each name it passes.
            spread = spread_fields(reader.w, a.value, resolve) or {}
            for key, read in spread.items():
                fact = (replace(of_value(read.value, read.why), assumption=read.assumption) if read is not None
                        else unknown("", f"passed by **{reader.w.code(a.value)}, only known at run time"))
                out.append(replace(fact, slot=key, text=f"**{reader.w.code(a.value)}[{key!r}]"))
    # Positions after ``*args`` are not known from the left; the ones after the last ``*`` are
    # numbered from the end (-1 the last): ``spec_inference.bind`` places them where it can.
    stars = [i for i, a in enumerate(call.args) if a.star == "*"]
    tail = [a for a in call.args[stars[-1] + 1:] if not a.star and a.keyword is None] if stars else []
    from_end = {id(a): i - len(tail) for i, a in enumerate(tail)}
    for a in [*call.args, *spelled]:
        if a.star:
            after_star = after_star or a.star == "*"
            continue
        if a.keyword is None and after_star and id(a) not in from_end:
            continue
        fact = reader.fact(a.value)
        if not fact.value_known and not fact.expr:
            fact = replace(fact, expr=fact.text)  # what an ``assume`` value may still decide
        layout = reader.layouts.get(last.get(a.value, ""))
        # every dim's stride up to this one is passed: this index is the last dim's
        unit = layout.last_is_unit(int(a.value.args[0].value.value) + 1) if layout is not None else None
        if a.value in last and not fact.value_known and unit is not False:
            # Exact for a tensor freshly allocated, made contiguous or checked so here; assumed otherwise.
            fresh = reader.fact(a.value.func.value).fresh or unit
            fact = replace(fact, value=1, value_known=True, why="its tensor's last-dim stride",
                           assumption="" if fresh else f"{last[a.value]} is contiguous in its last dim")
        if a.keyword is None and after_star:
            out.append(replace(fact, slot=from_end[id(a)]))
        elif a.keyword is None:
            out.append(replace(fact, slot=index))
            index += 1
        else:
            out.append(replace(fact, slot=a.keyword.value))
    return tuple(out)


__all__ = ["ArgReader", "Wrapper", "launch_arguments"]

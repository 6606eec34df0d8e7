"""Classes of the tree, statically: a module-level loader instance and its methods, and the
context objects a launch reads its values from.

``_loader = ConfigLoader(); @triton.autotune(configs=_loader.get("gemm"))`` is answered by
running ``ConfigLoader.__init__`` and ``get`` as helpers (``statements``) on an ``Instance``
whose attributes the methods set (``self.table = {...}``). ``ctx = MoECtx(BLOCK_M=64, n=x.size(0))``
then ``ctx.BLOCK_M`` is answered the same way for a ``@dataclass`` (its fields, their defaults
and ``field(default=..., init=False)``, the ``__init__`` the decorator writes, then
``__post_init__``) and a ``NamedTuple``. Plain classes (no base other than ``object``),
dataclasses without base classes and NamedTuples; no other decorator, no metaclass.

In ``opaque_arguments`` mode (``values.Opaque``) a function of the tree (a constructor, a
``create_*_context`` factory) runs statement by statement: a statement that does not
evaluate (``self.buf = torch.empty(...)``) leaves what it may have set unknown (``forgiving.forget``)
and the rest known, since a context's buffers are run-time objects while its tile sizes are
plain literals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from autotune_rewrite.evaluate.forgiving import forget, leaves
from autotune_rewrite.evaluate.values import Function, Opaque, Unresolved

PLAIN, DATACLASS, NAMEDTUPLE = "plain", "dataclass", "namedtuple"
_DATACLASS_NAMES = frozenset({"dataclasses.dataclass"})
_FIELD_NAMES = frozenset({"dataclasses.field"})
_NAMEDTUPLE_NAMES = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})
# ``@dataclass(...)`` options that leave the generated ``__init__`` as the fields say.
_PLAIN_OPTIONS = frozenset({"frozen", "eq", "repr", "order", "unsafe_hash", "slots", "match_args", "weakref_slot"})


@dataclass
class ClassValue:
    pm: Any
    node: cst.ClassDef
    kind: str = PLAIN  # PLAIN, DATACLASS (fields from its annotations) or NAMEDTUPLE

    @property
    def name(self) -> str:
        return self.node.name.value


@dataclass
class Instance:
    cls: ClassValue
    attrs: dict = field(default_factory=dict)
    # Set when a constructor statement that did not evaluate may have changed any attribute
    # (``self`` passed on, a method of its own called): what is not in ``attrs`` is unknown.
    unknown_rest: str | None = None


@dataclass(frozen=True)
class FieldDef:
    """One field of a dataclass / NamedTuple: ``default`` is its default expression (None: it
    has none), ``factory`` a ``default_factory`` expression, ``init`` whether ``__init__`` takes it."""

    name: str
    default: cst.BaseExpression | None = None
    factory: cst.BaseExpression | None = None
    init: bool = True


@dataclass
class BoundFunction:
    """A method of the tree bound to its instance (or class, for a ``classmethod``)."""

    fn: Function
    obj: Any


def set_attribute(obj, attr: str, value) -> None:
    if not isinstance(obj, Instance):
        raise Unresolved(f"assignment to attribute `{attr}` of something that is not an instance of the tree's classes")
    obj.attrs[attr] = value


def _decorator_names(fn: cst.FunctionDef) -> set[str]:
    out = set()
    for d in fn.decorators:
        expr = d.decorator
        if isinstance(expr, cst.Name):
            out.add(expr.value)
        elif isinstance(expr, cst.Attribute):
            out.add(expr.attr.value)
        else:
            out.add("?")
    return out


class ClassCalls:
    """Mixin for ``Evaluator``: class values, instances and their attributes."""

    def class_value(self, pm, node: cst.ClassDef) -> ClassValue:
        kind = _class_kind(pm, node)
        if kind is None:
            raise Unresolved(f"`{node.name.value}` is a class with base classes or decorators, not evaluated")
        return ClassValue(pm, node, kind)

    def instantiate(self, cls: ClassValue, args: list, kwargs: dict) -> Instance:
        inst = Instance(cls)
        init = self._member(cls, "__init__")
        if init is not None:
            self.construct(Function(cls.pm, init), inst, args, kwargs)
        elif cls.kind != PLAIN:
            self._init_fields(cls, inst, args, kwargs)
            post = self._member(cls, "__post_init__") if cls.kind == DATACLASS else None
            if post is not None:
                self.construct(Function(cls.pm, post), inst, [], {})
        elif args or kwargs:
            raise Unresolved(f"`{cls.name}()` takes no arguments")
        self.note("instance of a class of the tree")
        return inst

    def caller_instance(self, cls: ClassValue, why: str) -> Instance:
        """An instance as some caller builds it: every argument without a default unknown
        (``Opaque(why)``), every default in force. What it knows holds only where the caller
        leaves those defaults alone, so a reader must say so (an assumption)."""
        init = self._member(cls, "__init__")
        if init is None and cls.kind != PLAIN:
            given = {f.name: Opaque(why) for f in class_fields(cls)
                     if f.init and f.default is None and f.factory is None}
            return self.instantiate(cls, [], given)
        if init is None:
            return self.instantiate(cls, [], {})
        p = init.params
        if p.posonly_params[1:] or not [*p.posonly_params, *p.params]:
            raise Unresolved(f"`{cls.name}.__init__` has positional-only parameters")
        rest = [*p.posonly_params, *p.params][1:] + list(p.kwonly_params)
        return self.instantiate(cls, [], {q.name.value: Opaque(why) for q in rest if q.default is None})

    def _init_fields(self, cls: ClassValue, inst: Instance, args: list, kwargs: dict) -> None:
        """What the ``__init__`` that ``@dataclass`` / ``NamedTuple`` writes does: each field
        from its argument, else its default (evaluated where the class is defined)."""
        fields = class_fields(cls)
        takes = [f for f in fields if f.init]
        if len(args) > len(takes):
            raise Unresolved(f"`{cls.name}(...)` is called with too many arguments")
        extra = set(kwargs) - {f.name for f in takes}
        if extra:
            raise Unresolved(f"`{cls.name}(...)` has no field `{sorted(extra)[0]}`")
        given = dict(zip((f.name for f in takes), args))
        for f in fields:
            if f.init and f.name in given:
                inst.attrs[f.name] = given[f.name]
            elif f.init and f.name in kwargs:
                inst.attrs[f.name] = kwargs[f.name]
            elif f.default is not None or f.factory is not None:
                inst.attrs[f.name] = self._field_default(cls, f)
            elif f.init:
                raise Unresolved(f"`{cls.name}(...)` is called without its field `{f.name}`")

    def _field_default(self, cls: ClassValue, f: FieldDef):
        try:
            if f.default is not None:
                return self.eval(cls.pm, f.default, {})
            made = self.eval(cls.pm, f.factory, {})
            if isinstance(made, ClassValue):
                return self.instantiate(made, [], {})
            if isinstance(made, Function):
                return self.call(made, [], {})
            return self._external(made, [], {}, cls.pm, f.factory)
        except Unresolved as exc:
            if not self.opaque_arguments:
                raise
            return Opaque(str(exc))

    def construct(self, fn: Function, inst: Instance, args: list, kwargs: dict) -> None:
        """Run a constructor (``__init__``, ``__post_init__``) on ``inst`` (forgiving in
        ``opaque_arguments`` mode, as every call is there: ``forgiving_block``)."""
        self.call(fn, [inst, *args], kwargs)

    def forgiving_block(self, fn: Function, env: dict, args: list) -> None:
        """A function's body one statement at a time (``opaque_arguments`` mode): a statement
        that does not evaluate leaves what it may have changed unknown (``forgiving.forget``: locals it
        binds or hands on, attributes of ``self``) and the rest known. One that may leave the
        function or a loop (``return``, ``raise``, ``break``, ``continue``) stops it: what the
        code after it sees is not known."""
        params = fn.node.params
        first = [*params.posonly_params, *params.params][:1]
        me = first[0].name.value if first and args and isinstance(args[0], Instance) else None
        inst = args[0] if me is not None else None
        for stmt in fn.node.body.body if isinstance(fn.node.body, cst.IndentedBlock) else [fn.node.body]:
            try:
                self._tick()
                self._stmt(fn.pm, stmt, env)
            except Unresolved as exc:
                if "too large" in str(exc) or leaves(stmt):
                    raise
                forget(stmt, me, inst, env, str(exc))

    def get_attribute(self, obj, attr: str, fallback):
        """``obj.attr`` for instances and classes of the tree; ``fallback(obj, attr)`` else."""
        if isinstance(obj, Instance):
            if attr in obj.attrs:
                value = obj.attrs[attr]
                if isinstance(value, Opaque):
                    raise Unresolved(f"`{obj.cls.name}.{attr}` is only known at run time: {value.reason}")
                return value
            if obj.unknown_rest is not None:
                raise Unresolved(f"`{obj.cls.name}.{attr}` may be changed by code that is not evaluated: "
                                 f"{obj.unknown_rest}")
            return self._class_attribute(obj.cls, attr, obj)
        if isinstance(obj, Opaque):
            raise Unresolved(obj.reason)
        if isinstance(obj, ClassValue):
            return self._class_attribute(obj, attr, None)
        return fallback(obj, attr)

    def _class_attribute(self, cls: ClassValue, attr: str, inst: Instance | None):
        member = self._member(cls, attr)
        if member is None:
            raise Unresolved(f"`{cls.name}.{attr}` is not set")
        if isinstance(member, cst.FunctionDef):
            fn = Function(cls.pm, member)
            kinds = _decorator_names(member)
            if kinds - {"staticmethod", "classmethod", "property"}:
                raise Unresolved(f"method `{cls.name}.{attr}` has a decorator the evaluator does not run")
            if "staticmethod" in kinds:
                return fn
            if "classmethod" in kinds:
                return BoundFunction(fn, cls)
            if inst is None:
                return fn
            if "property" in kinds:
                return self.call(fn, [inst], {})
            return BoundFunction(fn, inst)
        if isinstance(member, cst.ClassDef):
            return self.class_value(cls.pm, member)
        return self.eval(cls.pm, member, {})

    def _member(self, cls: ClassValue, attr: str):
        """The last ``def`` or ``attr = value`` of the class body named ``attr``."""
        found = None
        for stmt in cls.node.body.body if isinstance(cls.node.body, cst.IndentedBlock) else ():
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == attr:
                found = stmt
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and any(
                            isinstance(t.target, cst.Name) and t.target.value == attr for t in small.targets):
                        found = small.value
                    elif isinstance(small, cst.AnnAssign) and small.value is not None \
                            and isinstance(small.target, cst.Name) and small.target.value == attr:
                        found = small.value
        return found


def _names_of(pm, node) -> frozenset[str]:
    names = pm.names(node)
    if not names and hasattr(pm, "global_names"):
        names = pm.global_names(node)
    return names


def _class_kind(pm, node: cst.ClassDef) -> str | None:
    """PLAIN, DATACLASS or NAMEDTUPLE, by qualified name (``import dataclasses as dc`` and
    ``@dc.dataclass(frozen=True)`` too); None for a class the evaluator cannot build."""
    if node.keywords:
        return None
    bases = [a.value for a in node.bases if pm.code(a.value).strip() != "object"]
    decorators = [d.decorator for d in node.decorators]
    if not bases and not decorators:
        return PLAIN
    if not decorators and len(bases) == 1 and not node.bases[0].star and _names_of(pm, bases[0]) & _NAMEDTUPLE_NAMES:
        return NAMEDTUPLE
    if not bases and len(decorators) == 1:
        deco = decorators[0]
        options = ()
        if isinstance(deco, cst.Call):
            options = tuple(a.keyword.value if a.keyword is not None else "?" for a in deco.args)
            deco = deco.func
        if _names_of(pm, deco) & _DATACLASS_NAMES and set(options) <= _PLAIN_OPTIONS:
            return DATACLASS
    return None


def class_fields(cls: ClassValue) -> list[FieldDef]:
    """The fields of a dataclass / NamedTuple, in order: annotated names of the class body
    (``ClassVar`` ones are class attributes, not fields; an ``InitVar`` is refused)."""
    out: dict[str, FieldDef] = {}
    for stmt in cls.node.body.body if isinstance(cls.node.body, cst.IndentedBlock) else ():
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not (isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)):
                continue
            hint = cls.pm.code(small.annotation.annotation).strip()
            if hint.split("[")[0].split(".")[-1] == "ClassVar":
                continue
            if hint.split("[")[0].split(".")[-1] == "InitVar":
                raise Unresolved(f"`{cls.name}` has an InitVar field, not evaluated")
            name = small.target.value
            value = small.value
            if isinstance(value, cst.Call) and _names_of(cls.pm, value.func) & _FIELD_NAMES:
                out[name] = _field_call(cls, name, value)
            else:
                out[name] = FieldDef(name, value)
    return list(out.values())


def _field_call(cls: ClassValue, name: str, call: cst.Call) -> FieldDef:
    given = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if any(a.keyword is None for a in call.args):
        raise Unresolved(f"`{cls.name}.{name}` = field(...) with positional arguments")
    init = given.get("init")
    takes = not (isinstance(init, cst.Name) and init.value == "False")
    if init is not None and not (isinstance(init, cst.Name) and init.value in ("True", "False")):
        raise Unresolved(f"`{cls.name}.{name}`: field(init=...) is not a literal")
    return FieldDef(name, given.get("default"), given.get("default_factory"), takes)

__all__ = ["BoundFunction", "ClassCalls", "ClassValue", "DATACLASS", "FieldDef", "Instance", "NAMEDTUPLE", "PLAIN",
           "class_fields", "set_attribute"]

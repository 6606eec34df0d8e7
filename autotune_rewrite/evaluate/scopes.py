"""Reading a name's value where it is used: module-level names and a function's own locals,
each as the binding in force at the line that reads it (``bindings.in_force``).

A mixin of ``Evaluator``. ``positions`` says, per block (a module's path, or a function's
``def``), at which line the evaluation is: the site's line for the configs expression, the
binding's own line while a module-level value is evaluated (``CONFIGS = CONFIGS + [...]``
reads the earlier ``CONFIGS``). A module read from another module is read whole (no
position): importing runs every statement.
"""

from __future__ import annotations

import contextlib
import copy

import libcst as cst
from libcst.metadata import ComprehensionScope, FunctionScope

from autotune_rewrite.evaluate import optional_imports, unknowns
from autotune_rewrite.evaluate.bindings import KIND_DEF, KIND_IF, KIND_RUN, Binding, in_force
from autotune_rewrite.evaluate.device import TargetQuery, UnansweredQuery
from autotune_rewrite.evaluate.module_ifs import branch_bindings
from autotune_rewrite.evaluate.operations import short
from autotune_rewrite.evaluate.values import Function, Pending, Unresolved, iterable

_IN_PROGRESS = object()
NOT_LOCAL = object()


class NameLookup:
    """Mixin for ``Evaluator``: module-level and function-local names."""

    @contextlib.contextmanager
    def at(self, owner, line: int | None):
        """Evaluate inside block ``owner`` as if at ``line``."""
        before = self.positions.get(owner)
        self.positions[owner] = line
        try:
            yield
        finally:
            if before is None:
                self.positions.pop(owner, None)
            else:
                self.positions[owner] = before

    def module_value(self, pm, name: str):
        """Value of module-level ``name`` of ``pm`` where the evaluation is (evaluated once per
        binding, cycles refused)."""
        line = self.positions.get(pm.path)
        force = in_force(pm, pm.tree.body, name, line)
        if force.binding is None:
            where = f" above line {line}" if line is not None else ""
            raise Unresolved(f"`{name}` is not a module-level name of {pm.path}{where}")
        return self._in_force_value(pm, name, force, pm.path, "module variable")

    def optional_import(self, pm, name: str) -> bool:
        """Module-level ``name`` is bound, where the evaluation is, by an import in a ``try`` body
        of packages installed here (the handler defines a stand-in): the body is what runs, so
        the name is the import's (``optional_imports``)."""
        b = in_force(pm, pm.tree.body, name, self.positions.get(pm.path)).binding
        if b is None or b.kind != KIND_RUN or not isinstance(b.node, cst.Try):
            return False
        if name not in optional_imports.bound_names(b.node.body) or optional_imports.missing(b.node.body):
            return False
        self.note(optional_imports.taken_note(b.node.body))
        return True

    def local_value(self, pm, node: cst.Name):
        """A name local to the function around the configs expression (``configs = [...]``
        then ``triton.autotune(configs=configs)`` in one function), as bound above the use;
        ``NOT_LOCAL`` when it is not such a name. Only outside a helper call: there the
        locals are in the call's environment."""
        scope = pm.scope(node)
        while isinstance(scope, ComprehensionScope):
            scope = scope.parent
        if self.depth or not isinstance(scope, FunctionScope) or not isinstance(scope.node, cst.FunctionDef):
            return NOT_LOCAL
        assigned = list(scope.assignments[node.value])
        if not assigned:
            return NOT_LOCAL
        fn = scope.node
        given = self.parameters.get(id(fn), {}) if self.parameters else {}
        if any(isinstance(a.node, cst.Param) for a in assigned) and node.value not in given:
            raise Unresolved(unknowns.parameter(node.value, fn.name.value))
        owner = id(fn)
        line = self.positions.get(owner) or pm.span(node).start_line
        force = in_force(pm, fn.body.body if isinstance(fn.body, cst.IndentedBlock) else [], node.value, line)
        if force.binding is None and node.value in given:
            return given[node.value]  # not rebound above this line: what the caller passed
        if force.binding is None:
            raise Unresolved(f"`{node.value}` is not bound in `{fn.name.value}` above line {line}")
        return self._in_force_value(pm, node.value, force, owner, "local variable")

    def _in_force_value(self, pm, name: str, force, owner, what: str):
        b = force.binding
        key = (owner, name, b.line, id(b.node), b.path, len(force.changes))
        if key in self._module_cache:
            val = self._module_cache[key]
            if val is _IN_PROGRESS:
                raise Unresolved(f"`{name}` refers to itself")
            return val
        self._module_cache[key] = _IN_PROGRESS
        try:
            val = self._binding_value(pm, name, b, owner, what)
            for stmt, line in force.changes:
                env = {name: copy.copy(val) if isinstance(val, (list, dict)) else val}
                with self.at(owner, line):
                    self._stmt(pm, stmt, env)
                val = env[name]
                self.note(f"{what} changed after binding")
        finally:
            self._module_cache.pop(key, None)
        self._module_cache[key] = val
        return val

    def _binding_value(self, pm, name: str, b: Binding, owner, what: str):
        if b.kind == KIND_DEF:
            if isinstance(b.node, cst.ClassDef):
                return self.class_value(pm, b.node)
            return Function(pm, b.node)
        with self.at(owner, b.line):
            if b.kind == KIND_IF:
                return self._branch_value(pm, name, b.node, owner, what)
            if b.kind == KIND_RUN:
                env: dict = {}
                self._stmt(pm, b.node, env)
                if name not in env:
                    raise Unresolved(f"`{name}` is not bound by the statement at line {b.line}")
                self.note(what)
                return env[name]
            val = self.eval(pm, b.node, {})
        for i in b.path:
            items = iterable(val)
            if i >= len(items):
                raise Unresolved("unpacking with the wrong number of values")
            val = items[i]
        self.note("tuple unpacking" if b.path else what)
        return val

    def _branch_value(self, pm, name: str, stmt: cst.If, owner, what: str):
        """The binding of ``name`` under ``if``/``else`` (often on an env var or a device
        query), in the branch this evaluation takes."""
        chain = branch_bindings([stmt], name)
        while chain is not None:
            test, taken_body, other_body = chain
            try:
                taken = self.test(pm, test, {})
            except (Pending, TargetQuery, UnansweredQuery):
                raise
            except Unresolved:
                raise Unresolved(unknowns.runtime_binding(name, short(pm, test))) from None
            body = taken_body if taken else other_body
            found, chain = body.found, body.nested
            if found:
                self.note("module-level if/else")
                node = found[-1]  # the last binding of the branch is the one in force after it
                if isinstance(node, cst.FunctionDef):
                    return Function(pm, node)
                if isinstance(node, cst.ClassDef):
                    return self.class_value(pm, node)
                with self.at(owner, pm.span(node).start_line):
                    return self.eval(pm, node, {})
            if chain is None:
                raise Unresolved(unknowns.not_bound_on_branch(name, short(pm, test), taken))
        raise Unresolved(f"`{name}` is not bound by the `if` at line {pm.span(stmt).start_line}")


__all__ = ["NOT_LOCAL", "NameLookup"]

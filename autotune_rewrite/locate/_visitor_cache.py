"""Speed-up for LibCST's batched metadata visitors: remember their method names per class.

``BatchableCSTVisitor.get_visitors`` runs ``inspect.getmembers`` over every instance, and
LibCST's visitor classes carry about a thousand methods: on a kernel file that costs ~7 ms per
provider per file, as much as parsing the file. The answer depends only on the class (which
methods exist and which are no-op stubs), so it is computed once per class and the methods are
bound to each instance. Installed once by ``locate.parsed``; if a future LibCST changes this
method, the original is kept untouched.
"""

from __future__ import annotations

import inspect

from libcst import _batched_visitor

_original = _batched_visitor.BatchableCSTVisitor.get_visitors
_names: dict[type, tuple[str, ...]] = {}


def _is_visitor_method(m) -> bool:
    return (inspect.ismethod(m) and (m.__name__.startswith("visit_") or m.__name__.startswith("leave_"))
            and not getattr(m, "_is_no_op", False))


def _cached_get_visitors(self):
    if any(k.startswith(("visit_", "leave_")) for k in self.__dict__):
        return _original(self)  # instance attributes shadow methods: the exact original answer
    cls = type(self)
    names = _names.get(cls)
    if names is None:
        names = _names[cls] = tuple(name for name, _ in inspect.getmembers(self, _is_visitor_method))
    return {name: getattr(self, name) for name in names}


def install() -> None:
    if _batched_visitor.BatchableCSTVisitor.get_visitors is _original:
        _batched_visitor.BatchableCSTVisitor.get_visitors = _cached_get_visitors

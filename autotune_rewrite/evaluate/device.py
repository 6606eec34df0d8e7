"""Device, backend and environment queries, answered as one target would answer them.

Code picks configs by asking the running process what it runs on (``torch.version.hip``,
``torch.cuda.get_device_capability()``, ``triton.runtime.driver.active.get_current_target()``,
``...utils.get_device_properties(dev)["max_shared_mem"]``) or by reading ``os.environ``. None of
that is known without a target, so ``DEFAULT_ANSWERS`` answers every such query with
``TargetQuery``: the locator then resolves the configs once per target (``locate/per_target``)
with ``answers_for(target, env)``. The figures are the target's own (``targets.py``, DOMAIN.md
section 5); every target here is an NVIDIA one, so HIP answers "no".

The reasons for what stays unknown are worded in ``unknowns`` (one vocabulary for every query).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from autotune_rewrite.evaluate import unknowns
from autotune_rewrite.evaluate.queries import ENV_CALLS
from autotune_rewrite.evaluate.values import Unresolved
from autotune_rewrite.targets import Target

# Names whose value depends on the machine: an unanswered one is a device query we do not know.
DRIVER = "triton.runtime.driver.active."


class TargetQuery(Unresolved):
    """The value depends on the target (or on an environment variable not yet answered): the
    locator resolves it per target. ``query``: the name asked."""

    def __init__(self, query: str):
        super().__init__(unknowns.needs_target(query))
        self.query = query


class UnansweredQuery(Unresolved):
    """A device query no target answers here (``torch.cuda.mem_get_info()``, the SM count of a
    bare architecture): its own reason says what would answer it, so a branch on it keeps it."""


class DeviceRecord(dict):
    """A device's properties: ``props.major`` (torch's object) and ``props["max_shared_mem"]``
    (Triton's dict). A field the target does not determine raises with what would answer it."""

    def __init__(self, known: Mapping[str, Any], unknown: Mapping[str, str], what: str):
        super().__init__(known)
        self.unknown, self.what = dict(unknown), what

    def __missing__(self, key):
        if key in self.unknown:
            raise UnansweredQuery(self.unknown[key])
        raise Unresolved(unknowns.unknown_field(self.what, key))

    def field(self, name: str):
        return self[name]

    def __repr__(self) -> str:
        return f"<{self.what}>"


class CudaVersion:
    """``torch.version.cuda`` on a CUDA target: not None, but which toolkit is not known."""

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        if other is None:
            return False
        raise Unresolved(unknowns.cuda_version())

    __hash__ = object.__hash__

    def _compare(self, other):
        raise Unresolved(unknowns.cuda_version())

    __lt__ = __le__ = __gt__ = __ge__ = _compare

    def __repr__(self) -> str:
        return "<a CUDA version>"


class Environ(dict):
    """``os.environ`` as the settings' ``env`` table and ``--env`` give it. A variable read unset
    (``get`` with a default, ``in``) is recorded in ``defaults``: the answer rests on it, and the
    origin of what it decided says so (``defaults_read``)."""

    def __init__(self, env: Mapping[str, str] = MappingProxyType({})):
        super().__init__(env)
        self.defaults: dict[str, Any] = {}

    def __missing__(self, key):
        raise Unresolved(unknowns.env_unset(str(key)))

    def get(self, key, default=None):
        if dict.__contains__(self, key):
            return self[key]
        self.defaults.setdefault(key, default)
        return default

    def __contains__(self, key) -> bool:
        found = dict.__contains__(self, key)
        if not found:
            self.defaults.setdefault(key, None)
        return found


def defaults_read(answers) -> tuple[tuple[str, Any], ...]:
    """The unset variables ``answers``' environment was read at, each with the default it was read
    at (None: read as unset, by ``in`` or a ``get`` without a default)."""
    environ = answers.values.get("os.environ")
    return tuple(environ.defaults.items()) if isinstance(environ, Environ) else ()


def _neutral(name: str):
    def handler(args, kwargs, apply):
        raise TargetQuery(name)

    return handler


NEUTRAL_CALLS = {name: _neutral(name) for name in (
    "torch.cuda.is_available", "torch.cuda.current_device", "torch.cuda.get_device_capability",
    "torch.cuda.get_device_properties", "torch.cuda.get_device_name", DRIVER + "get_current_target",
    DRIVER + "get_current_device", DRIVER + "utils.get_device_properties", *ENV_CALLS,
    "builtins.__import__")}  # ``__import__("os").environ``: the environment, answered with it
NEUTRAL_VALUES = ("torch.version.hip", "torch.version.cuda", "os.environ")


def _props(target: Target) -> tuple[dict, dict]:
    """torch's ``cudaDeviceProp`` fields and Triton's ``get_device_properties`` keys."""
    a = target.arch
    no_sms = unknowns.needs_product(target.name, "the SM count")
    torch_props = {
        "major": a.major, "minor": a.minor, "shared_memory_per_block_optin": a.smem_optin_per_block,
        "shared_memory_per_block": a.smem_per_block, "shared_memory_per_multiprocessor": a.smem_per_sm,
        "regs_per_multiprocessor": a.regs_per_sm, "warp_size": a.warp_size,
        "max_threads_per_multi_processor": a.max_warps_per_sm * a.warp_size, "is_integrated": False,
    }
    triton_props = {"max_shared_mem": a.smem_optin_per_block, "max_num_regs": a.regs_per_block, "warpSize": a.warp_size}
    torch_unknown, triton_unknown = {}, {}
    if target.sm_count is not None:
        torch_props["multi_processor_count"] = triton_props["multiprocessor_count"] = target.sm_count
    else:
        torch_unknown["multi_processor_count"] = triton_unknown["multiprocessor_count"] = no_sms
    if target.product is not None:
        torch_props["name"] = target.product
    else:
        torch_unknown["name"] = unknowns.needs_product(target.name, "the device name")
    return (DeviceRecord(torch_props, torch_unknown, "torch.cuda.get_device_properties()"),
            DeviceRecord(triton_props, triton_unknown, "driver.active.utils.get_device_properties()"))


def _const(value):
    return lambda args, kwargs, apply: value


def _env_get(env: Mapping[str, str]):
    def get(args, kwargs, apply):
        if not args or not isinstance(args[0], str):
            raise Unresolved("os.environ.get with a name that is not a literal string")
        default = args[1] if len(args) > 1 else kwargs.get("default")
        return env.get(args[0], default)  # an ``Environ``: an unset read is recorded

    return get


def _import_os(environ: Environ):
    """``__import__("os").environ``, as code that avoids a top-level import spells it: the same
    ``os.environ`` (the ``env`` table, unset variables at their defaults)."""
    os_module = DeviceRecord({"environ": environ}, {}, "the os module")

    def handler(args, kwargs, apply):
        if list(args) != ["os"] or kwargs:
            raise Unresolved("`__import__` of a module other than os is not evaluated")
        return os_module

    return handler


def answers_for(base, target: Target | None, env: Mapping[str, str]):
    """``base`` (an ``Answers``) answering what ``target`` answers, with ``os.environ`` read
    from ``env`` (an unset variable at its default). ``target`` None: device queries stay
    ``TargetQuery`` (the configs are then resolved per target)."""
    environ = Environ(env)
    calls: dict = {name: _env_get(environ) for name in ENV_CALLS}
    calls["builtins.__import__"] = _import_os(environ)
    values: dict = {"os.environ": environ}
    if target is not None:
        a = target.arch
        torch_props, triton_props = _props(target)
        name = target.product
        calls.update({
            "torch.cuda.is_available": _const(True),
            "torch.cuda.current_device": _const(0),
            DRIVER + "get_current_device": _const(0),
            "torch.cuda.get_device_capability": _const((a.major, a.minor)),
            "torch.cuda.get_device_properties": _const(torch_props),
            "torch.cuda.get_device_name": _const(name) if name else _unknown(unknowns.needs_product(target.name, "the device name")),
            DRIVER + "get_current_target": _const(DeviceRecord(
                {"backend": "cuda", "arch": a.capability, "warp_size": a.warp_size}, {}, "get_current_target()")),
            DRIVER + "utils.get_device_properties": _const(triton_props),
        })
        values.update({"torch.version.hip": None, "torch.version.cuda": CudaVersion()})
    return base.extended(calls=calls, values=values)


def _unknown(reason: str):
    def handler(args, kwargs, apply):
        raise UnansweredQuery(reason)

    return handler

"""Code that runs INSIDE the captured program (stdlib + triton only; copied next to a
``sitecustomize.py``, so the user's interpreter need not have autotune-rewrite installed).

It records, as JSON lines appended to the file named by ``AUTOTUNE_REWRITE_CAPTURE``:

- ``autotune``: one line per distinct (kernel, key values) an ``Autotuner.run`` call sees, with
  the key formed as Triton 3.6 forms it (named arguments actually passed, then tensor dtypes);
- ``compile``: one line per in-process compile of a JIT function (Triton calls
  ``jit_post_compile_hook`` once per specialization and options, disk-cache hit or not), with the
  signature, constexprs and attrs exactly as the runtime specialized them, the int argument
  values of the launch that caused it, and the live kernel's SMEM / registers / spills;
- ``session``: triton version and whether a GPU driver was usable, at exit.

Nothing here changes what the program computes: hooks chain to any hook already installed, and
every recording step swallows its own errors (a capture must never break the program).
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import json
import os
import sys
import threading

ENV = "AUTOTUNE_REWRITE_CAPTURE"
_lock = threading.Lock()
_state = threading.local()  # .stack: autotuner calls in progress (innermost last)
_seen_keys: set = set()
_patched: set = set()


def _write(record: dict) -> None:
    path = os.environ.get(ENV)
    if not path:
        return
    record = {"pid": os.getpid(), **record}
    line = json.dumps(record, default=_jsonable) + "\n"
    with _lock:  # one short O_APPEND write per line: child processes may share the file
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


def _jsonable(value):
    if value.__class__.__name__ == "constexpr" and hasattr(value, "value"):
        return value.value
    return str(value)


def _plain(value):
    """A JSON-safe copy of a runtime value (ints, floats, bools, None, str; others as str)."""
    if value.__class__.__name__ == "constexpr" and hasattr(value, "value"):
        value = value.value
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if value.__class__.__name__ == "dtype":  # tl.float32 ("fp32") or torch.float16, passed as a constexpr
        return {"dtype": str(value)}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return str(value)


def _jit_of(fn):
    """The JITFunction under an Autotuner / Heuristics chain."""
    seen = 0
    while fn is not None and fn.__class__.__name__ != "JITFunction" and seen < 16:
        fn, seen = getattr(fn, "fn", None), seen + 1
    return fn


def _kernel_id(jit) -> dict:
    fn = getattr(jit, "fn", None)
    code = getattr(fn, "__code__", None)
    return {
        "file": os.path.abspath(code.co_filename) if code is not None else None,
        "name": getattr(fn, "__name__", None),
        "qualname": getattr(fn, "__qualname__", None),
    }


def _params(jit) -> list:
    out = []
    for p in getattr(jit, "params", []):
        ann = getattr(p, "annotation", None)
        out.append({
            "name": p.name,
            "constexpr": bool(getattr(p, "is_constexpr", False)),
            "annotation": ann if isinstance(ann, str) and ann else (str(ann) if ann not in (None, "") else None),
            "do_not_specialize": bool(getattr(p, "do_not_specialize", False)),
        })
    return out


# --------------------------------------------------------------------------- Autotuner.run
def autotune_call_started(autotuner, args, kwargs) -> dict:
    """Record the key of one ``Autotuner.run`` call; returns the call's context (pushed by the caller)."""
    names = list(getattr(autotuner, "arg_names", []))
    all_args = {**dict(zip(names, args)), **kwargs}
    passed = {k: v for k, v in all_args.items() if k in names}
    keys = list(getattr(autotuner, "keys", []) or [])
    key_values = {k: _plain(passed[k]) for k in keys if k in passed}
    dtypes = [str(v.dtype) for v in passed.values() if hasattr(v, "dtype")]
    jit = _jit_of(autotuner)
    ident = _kernel_id(jit) if jit is not None else {"file": None, "name": None, "qualname": None}
    meta = []
    for config in getattr(autotuner, "configs", []) or []:
        meta += [k for k in getattr(config, "kwargs", {}) if k not in meta]
    context = {"jit": jit, "values": {k: v for k, v in passed.items() if isinstance(v, int) and not isinstance(v, bool)}}
    fingerprint = (ident["file"], ident["qualname"], json.dumps(key_values, default=str), tuple(dtypes))
    if fingerprint not in _seen_keys:
        _seen_keys.add(fingerprint)
        _write({
            "event": "autotune", "kernel": ident, "keys": keys, "key_values": key_values,
            "missing_keys": [k for k in keys if k not in passed], "dtypes": dtypes, "meta_params": meta,
            "configs": len(getattr(autotuner, "configs", []) or []),
        })
    return context


def _wrap_autotuner_run(autotuner_cls) -> None:
    original = autotuner_cls.run
    if getattr(original, "_autotune_rewrite_capture", False):
        return

    def run(self, *args, **kwargs):
        try:
            context = autotune_call_started(self, args, kwargs)
        except Exception:  # never break the program
            context = None
        stack = getattr(_state, "stack", None)
        if stack is None:
            stack = _state.stack = []
        stack.append(context)
        try:
            return original(self, *args, **kwargs)
        finally:
            stack.pop()

    run._autotune_rewrite_capture = True
    run.__wrapped__ = original
    autotuner_cls.run = run


# --------------------------------------------------------------------------- compiles
def compile_record(key, fn, compile, kernel=None) -> dict:
    """The ``compile`` record for one jit_post_compile_hook call (``fn`` is Triton's JitFunctionInfo)."""
    jit = getattr(fn, "jit_function", None)
    params = _params(jit)
    names = [p["name"] for p in params]

    def name_of(path):
        path = tuple(path) if isinstance(path, (list, tuple)) else (path,)
        if len(path) == 1 and isinstance(path[0], int) and path[0] < len(names):
            return names[path[0]]
        return ".".join(str(p) for p in path)  # a tuple parameter's element: reported, not folded

    signature = compile.get("signature") or {}
    signature = {(k if isinstance(k, str) else getattr(k, "name", str(k))): _plain(v) for k, v in signature.items()}
    constants = {name_of(path): _plain(v) for path, v in (compile.get("constants") or {}).items()}
    attrs = {}
    for path, items in ((compile.get("configs") or [{}])[0] or {}).items():
        attrs[name_of(path)] = [[str(a), _plain(b)] for a, b in items]
    stack = getattr(_state, "stack", None) or []
    context = stack[-1] if stack else None
    autotuned = bool(context and context.get("jit") is jit)
    values = {}
    if autotuned:
        values = {k: v for k, v in context["values"].items()
                  if isinstance(signature.get(k), str) and (signature[k].startswith(("i", "u")) or signature[k] == "constexpr")}
    record = {
        "event": "compile",
        "kernel": _kernel_id(jit) if jit is not None else {"file": None, "name": None, "qualname": None},
        "autotuned": autotuned,
        "params": params,
        "signature": signature,
        "constants": constants,
        "attrs": attrs,
        "values": values,
        "options": {k: _plain(compile.get(k)) for k in ("num_warps", "num_stages", "num_ctas")},
        "is_warmup": bool(compile.get("is_warmup")),
    }
    record["resources"] = _resources(kernel if kernel is not None else _cached_kernel(jit, compile, key))
    return record


def _cached_kernel(jit, compile, key):
    try:
        return jit.device_caches.get(compile.get("device"))[0].get(key)  # .get: never build a binder here
    except Exception:
        return None


def _resources(kernel) -> dict:
    """SMEM from the compiled metadata; registers/spills from the driver once the kernel is loaded."""
    if kernel is None:
        return {}
    out = {}
    try:
        meta = kernel.metadata
        out["shared"] = int(meta.shared)
        target = getattr(meta, "target", None)
        if target is not None:
            out["target"] = f"{getattr(target, 'backend', '?')}:{getattr(target, 'arch', '?')}"
    except Exception:
        pass
    try:
        out["hash"] = str(kernel.hash)  # the cache key; its folder is base32 of it
    except Exception:
        pass
    try:
        kernel._init_handles()  # what the first launch does anyway; raises OutOfResources the same way
        out["n_regs"] = int(kernel.n_regs)
        out["n_spills"] = int(kernel.n_spills)
    except Exception as exc:  # no driver (CPU), or the config cannot launch on this GPU
        out["load_error"] = f"{type(exc).__name__}: {exc}"[:300]
    return out


def post_compile_hook(*, key, repr, fn, compile, is_manual_warmup, already_compiled):
    try:
        _write(compile_record(key, fn, compile))
    except Exception as exc:
        _write({"event": "error", "where": "compile hook", "error": f"{type(exc).__name__}: {exc}"[:300]})
    previous = getattr(post_compile_hook, "previous", None)
    if previous is not None:
        return previous(key=key, repr=repr, fn=fn, compile=compile, is_manual_warmup=is_manual_warmup,
                        already_compiled=already_compiled)
    return None


# --------------------------------------------------------------------------- installation
def _patch_triton() -> None:
    """Install the hooks once both ``triton.runtime.autotuner`` and the hook knobs exist."""
    autotuner = sys.modules.get("triton.runtime.autotuner")
    if autotuner is not None and "autotuner" not in _patched and hasattr(autotuner, "Autotuner"):
        _patched.add("autotuner")
        _wrap_autotuner_run(autotuner.Autotuner)
    knobs = sys.modules.get("triton.knobs")
    if knobs is not None and "knobs" not in _patched and hasattr(knobs, "runtime"):
        _patched.add("knobs")  # Triton 3.4+
        current = knobs.runtime.jit_post_compile_hook
        if current is not post_compile_hook:
            post_compile_hook.previous = current
            knobs.runtime.jit_post_compile_hook = post_compile_hook
    jit = sys.modules.get("triton.runtime.jit")
    if jit is not None and knobs is None and "jit" not in _patched and hasattr(jit.JITFunction, "compiled_hook"):
        _patched.add("jit")  # Triton 3.3: a class attribute with the same keyword interface
        post_compile_hook.previous = jit.JITFunction.compiled_hook
        jit.JITFunction.compiled_hook = post_compile_hook


class _Watcher(importlib.abc.MetaPathFinder):
    """Patches Triton right after its modules load, so nothing is imported before the program does."""

    WATCH = ("triton.runtime.autotuner", "triton.knobs", "triton.runtime.jit")

    def find_spec(self, name, path=None, target=None):
        if name not in self.WATCH:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module):
            original(module)
            try:
                _patch_triton()
            except Exception as exc:
                _write({"event": "error", "where": "install", "error": f"{type(exc).__name__}: {exc}"[:300]})

        loader.exec_module = exec_module
        return spec


def _session() -> None:
    triton = sys.modules.get("triton")
    if triton is None:
        _write({"event": "session", "triton": None})
        return
    record = {"event": "session", "triton": getattr(triton, "__version__", None),
              "installed": sorted(_patched), "hook_replaced": False}
    knobs = sys.modules.get("triton.knobs")
    if knobs is not None and "knobs" in _patched:
        record["hook_replaced"] = knobs.runtime.jit_post_compile_hook is not post_compile_hook
    # At exit nothing may be initialized any more (atexit registration is closed), so only ask a
    # driver the program already created, else torch if it is loaded.
    try:
        from triton.runtime.driver import driver

        active = getattr(driver, "_active", None) or getattr(driver, "_default", None)
        if active is not None:
            target = active.get_current_target()
            record["target"] = f"{target.backend}:{target.arch}"
        elif "torch" in sys.modules and not sys.modules["torch"].cuda.is_available():
            record["driver_error"] = "torch.cuda.is_available() is False"
    except Exception as exc:
        record["driver_error"] = f"{type(exc).__name__}: {exc}"[:300]
    _write(record)


def install() -> None:
    """Called from the generated ``sitecustomize.py`` when ``AUTOTUNE_REWRITE_CAPTURE`` is set."""
    if not os.environ.get(ENV):
        return
    sys.meta_path.insert(0, _Watcher())
    _patch_triton()  # in case triton was imported already
    atexit.register(_session)

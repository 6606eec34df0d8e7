"""Drive Triton's own specialization and hook call on the CPU, as ``JITFunction.run`` does on a GPU
up to the compile, so the capture hooks get the objects Triton really builds."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "capture"


def load_fixture(name: str, folder: Path = FIXTURES):
    """Import ``folder/name.py`` as a fresh module (its kernel's co_filename is that file)."""
    path = folder / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"capture_fixture_{name}_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def launch(hooks, autotuned, args, kwargs, capability: int = 90):
    """One ``Autotuner.run`` call's worth of records: the key, then one compile per config
    (each config's specialization built by Triton's binder and ``_pack_args``)."""
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.runtime.jit import compute_cache_key, create_function_from_signature

    backend = CUDABackend(GPUTarget("cuda", capability, 32))
    jit = autotuned.fn
    binder = create_function_from_signature(jit.signature, jit.params, backend)
    context = hooks.autotune_call_started(autotuned, args, kwargs)
    hooks._state.stack = [context]
    try:
        for config in autotuned.configs:
            kw = {**kwargs, **config.all_kwargs()}
            bound, specialization, options = binder(*args, **kw)
            key = compute_cache_key({}, specialization, options)
            options, signature, constexprs, attrs = jit._pack_args(backend, kw, bound, specialization, options)
            jit._call_hook(hooks.post_compile_hook, key, signature, 0, constexprs, options, [attrs], False)
    finally:
        hooks._state.stack = []

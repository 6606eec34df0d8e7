"""Shared memory known before the costly stages: stop a compile that cannot launch anyway.

Where a cross-compile spends its time (``benchmarks/compile_stages.py``): the TTGIR -> LLVM
lowering with LLVM's O3, the NVPTX back end and ptxas come after Triton has decided the kernel's
shared memory. Triton 3.6's ``make_llir`` runs, on the TTGIR module, ``combine-tensor-select-
and-if``, ``allocate-warp-groups``, ``scf-to-cf``, the Gluon inliner, then
``allocate_shared_memory_nv`` (which sets the ``ttg.shared`` module attribute) and
``allocate_tensor_memory`` (``ttg.tensor_memory_size``), and reads ``metadata["shared"]`` from
that attribute after the rest of its passes.

``stopping_hook`` wraps the ``llir`` stage through ``knobs.runtime.add_stages_inspection_hook``:
on a copy of the TTGIR (re-parsed from its text, so the real module is never touched) it runs
exactly those first passes and reads the two attributes. When the shared memory is above
``stop_above`` it raises ``StoppedAtSmem`` instead of lowering further; otherwise the original
module goes on through the real stage, so a compile that is not stopped is the same compile as
without the hook. That the copy's figure equals the final ``metadata.shared`` is measured, not
assumed (``tests/test_early_smem.py`` and ``benchmarks/compile_stages.py`` compare them on
every job), and the pass list is Triton-version specific, so the stop is only offered on the
versions in ``VERIFIED_TRITON`` (elsewhere every compile runs to the cubin).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

# Triton versions whose make_llir begins with the passes replayed below, and on which the
# early figure was compared with the final one (equal on every compiled job).
VERIFIED_TRITON = frozenset({"3.6.0"})


@dataclass(frozen=True)
class EarlySmem:
    shared: int  # ttg.shared after allocation: what metadata.shared becomes
    tmem: int | None  # ttg.tensor_memory_size (sm_100 class), None when the module has none


class StoppedAtSmem(Exception):
    """Raised out of ``triton.compile`` when the allocated shared memory is over the limit."""

    def __init__(self, found: EarlySmem) -> None:
        super().__init__(f"shared memory {found.shared} B allocated: compile stopped before LLVM")
        self.found = found


def available() -> bool:
    """Whether this Triton is one the early figure was verified on, and has the stage hook."""
    try:
        import triton
        from triton import knobs
    except ImportError:
        return False
    return triton.__version__ in VERIFIED_TRITON and hasattr(knobs.runtime, "add_stages_inspection_hook")


def _allocate(module: Any, capability: int, ptx_version: int) -> EarlySmem:
    """Run the head of Triton 3.6's make_llir (up to memory allocation) on ``module``."""
    from triton._C.libtriton import ir, nvidia, passes

    pm = ir.pass_manager(module.context)
    pm.enable_debug()
    passes.ttgpuir.add_combine_tensor_select_and_if(pm)
    passes.ttgpuir.add_allocate_warp_groups(pm)
    passes.convert.add_scf_to_cf(pm)
    passes.gluon.add_inliner(pm)
    nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(pm, capability, ptx_version)
    nvidia.passes.ttnvgpuir.add_allocate_tensor_memory(pm)
    pm.run(module, "autotune_rewrite_early_smem")
    return EarlySmem(shared=int(module.get_int_attr("ttg.shared") or 0),
                     tmem=module.get_int_attr("ttg.tensor_memory_size"))


def _copy(module: Any) -> Any:
    """A second module with the same TTGIR, in the same MLIR context (dialects loaded)."""
    from triton._C.libtriton import ir

    fd, path = tempfile.mkstemp(suffix=".ttgir")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(str(module))
        copy = ir.parse_mlir_module(path, module.context)
    finally:
        os.unlink(path)
    copy.context = module.context  # what Triton's passes read it from (compiler.py does the same)
    return copy


def allocated_from_text(ttgir: str, capability: int) -> EarlySmem | None:
    """The early figure for a TTGIR text (a compiled kernel's ``asm["ttgir"]``): for measuring
    and testing the equality with the final ``metadata.shared``. None on an unverified Triton."""
    if not available():
        return None
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import (
        CUDABackend,
        get_ptx_version_from_options,
    )

    backend = CUDABackend(GPUTarget("cuda", capability, 32))
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    fd, path = tempfile.mkstemp(suffix=".ttgir")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(ttgir)
        module = ir.parse_mlir_module(path, context)
    finally:
        os.unlink(path)
    module.context = context
    options = backend.parse_options({})
    return _allocate(module, capability, get_ptx_version_from_options(options, backend.target.arch))


@contextlib.contextmanager
def stopping_hook(stop_above: int | None) -> Iterator[None]:
    """While active, a compile whose shared memory exceeds ``stop_above`` bytes raises
    ``StoppedAtSmem`` before the ``llir`` stage. ``None`` (or an unverified Triton): no hook."""
    if stop_above is None or not available():
        yield
        return
    from triton import knobs
    from triton.backends.nvidia.compiler import get_ptx_version_from_options

    def hook(backend, stages, options, language, capability):
        lower = stages.get("llir")
        if lower is None or "ttgir" not in stages:  # a Gluon or IR source: leave it alone
            return
        ptx_version = get_ptx_version_from_options(options, backend.target.arch)

        def checked(module, metadata):
            found = _allocate(_copy(module), capability, ptx_version)
            if found.shared > stop_above:
                raise StoppedAtSmem(found)
            return lower(module, metadata)

        stages["llir"] = checked

    saved = knobs.runtime.add_stages_inspection_hook
    knobs.runtime.add_stages_inspection_hook = hook
    try:
        yield
    finally:
        knobs.runtime.add_stages_inspection_hook = saved

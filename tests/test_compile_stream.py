"""``CompileStream``: one pool for a run, batches answered as each completes, earlier kernels
(lower priority numbers) first, identical jobs compiled once, a dying worker retried alone."""

from __future__ import annotations

import dataclasses

from autotune_rewrite.compile import compile_pool
from autotune_rewrite.compile.compile_stream import CompileStream
from autotune_rewrite.evidence import CompileJob, KernelBundle

COPY = KernelBundle("copy_kernel", '''\
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
''', "stream.py::copy_kernel")


def job(block: int, num_warps: int = 1) -> CompileJob:
    return CompileJob(bundle=COPY, signature=(("x_ptr", "*fp32"), ("y_ptr", "*fp32"), ("n", "i32"), ("BLOCK", "constexpr")),
                      constexprs=(("BLOCK", block),), divisible_by_16=("x_ptr", "y_ptr"), num_warps=num_warps,
                      num_stages=1, num_ctas=1, maxnreg=None, capability=120)


def test_the_earlier_kernel_goes_first_and_each_batch_is_answered_whole(tmp_path, monkeypatch):
    order: list[str] = []
    real = compile_pool.compile_job
    monkeypatch.setattr(compile_pool, "compile_job",
                        lambda j, **kw: order.append(f"compile {dict(j.constexprs)['BLOCK']}") or real(j, **kw))
    done: dict[str, list] = {}
    with CompileStream(workers=1, cache_dir=tmp_path) as stream:
        stream.add([job(256), job(512)], lambda out: order.append("late") or done.setdefault("late", out), priority=5)
        stream.add([job(32), job(32), job(64)], lambda out: order.append("early") or done.setdefault("early", out),
                   priority=0)
        stream.drain()
    # priority 0 runs first, largest tile first within it; the duplicate 32 compiles once
    assert order == ["compile 64", "compile 32", "early", "compile 512", "compile 256", "late"]
    assert [dict(o.job.constexprs)["BLOCK"] for o in done["early"]] == [32, 32, 64]
    assert all(o.error is None and o.shared_bytes is not None for o in done["early"] + done["late"])


def test_cached_batches_answer_at_once_and_a_callback_may_add_more(tmp_path):
    with CompileStream(workers=2, cache_dir=tmp_path) as stream:
        stream.add([job(128)], lambda out: None)
        stream.drain()
    seen: list[tuple[str, bool]] = []
    with CompileStream(workers=2, cache_dir=tmp_path) as stream:
        def then(out):
            seen.append(("first", out[0].cached))
            stream.add([job(128, num_warps=2)], lambda more: seen.append(("second", more[0].cached)))

        stream.add([job(128)], then)
        assert seen == [("first", True)]  # from the cache, inside add: no pool, no waiting
        stream.drain()
    assert seen == [("first", True), ("second", False)]


def test_a_dying_worker_costs_only_its_own_job(tmp_path):
    dying = dataclasses.replace(job(16), bundle=KernelBundle("k", "import os\nos._exit(3)\n", "dies.py::k"))
    got = {}
    with CompileStream(workers=2, cache_dir=tmp_path) as stream:
        stream.add([dying, job(64)], lambda out: got.setdefault("a", out))
        stream.add([job(1024)], lambda out: got.setdefault("b", out), priority=1)
        stream.drain()
    assert got["a"][0].error.startswith("the compiler process crashed")
    assert got["a"][1].error is None and got["b"][0].error is None
    assert len(list((tmp_path / "outcomes").rglob("*.json"))) == 2  # the crash is not cached

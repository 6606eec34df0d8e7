"""Launch values read from context objects (``wrapper/context_fields`` over ``evaluate/classes``).

``kernel[grid](..., ctx.BLOCK_M)`` where ``ctx`` is a dataclass / NamedTuple / plain-class
instance built in the wrapper, by a factory (here or in another module), a parameter default
or the caller (then the class default is an assumption); a field the code does not fix stays
unknown. Small packages written here, scanned for real (LibCST, linking across modules).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from autotune_rewrite.spec import launch_spec
from autotune_rewrite.evaluate import Evaluator, Unresolved
from autotune_rewrite.locate.parsed import ParsedModule
from autotune_rewrite.locate.scan import scan

KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_N": 64}, num_warps=4, num_stages=2)], key=["n"])
@triton.jit
def gemm_kernel(x_ptr, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
'''

CONTEXT = '''
from dataclasses import dataclass, field

import torch


@dataclass
class GemmContext:
    n: int
    BLOCK_M: int = 128
    GROUP: int = field(default=8)
    workspace: torch.Tensor = field(init=False)
    stages: int = field(default=3, init=False)
    rank: int = 0

    def __post_init__(self):
        self.workspace = torch.empty((self.n,), dtype=torch.float32, device="cuda")


def create_gemm_context(n, BLOCK_SIZE_M=128, group=8):
    return GemmContext(n=n, BLOCK_M=BLOCK_SIZE_M, GROUP=group)
'''


def _package(tmp_path: Path, ops: str, context: str = CONTEXT) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "kernels.py").write_text(KERNEL)
    (root / "pkg" / "context.py").write_text(context)
    (root / "pkg" / "ops.py").write_text(textwrap.dedent(ops))
    return root


def _facts(root: Path) -> list[dict]:
    (site,) = scan(root, jobs=1).sites
    return [{f.slot: f for f in launch.arguments} for launch in site.launches]


def test_keyword_construction_through_a_factory_of_another_module(tmp_path):
    root = _package(tmp_path, '''
        from .context import create_gemm_context
        from .kernels import gemm_kernel


        def run(x):
            ctx = create_gemm_context(x.shape[0], BLOCK_SIZE_M=64)
            gemm_kernel[(1,)](x, ctx.n, ctx.BLOCK_M, GROUP=ctx.GROUP)
    ''')
    (facts,) = _facts(root)
    assert (facts[2].kind, facts[2].value, facts[2].assumption) == ("int", 64, "")  # passed to the factory
    assert (facts["GROUP"].value, facts["GROUP"].assumption) == (8, "")  # the factory's default, not the caller's
    assert facts[1].kind == "unknown"  # ctx.n = x.shape[0]: never guessed
    site = scan(root, jobs=1).sites[0]
    (spec,) = launch_spec.resolve_specs(site, kernel_source=KERNEL).specs
    consts = dict(spec.constexprs)
    assert consts["BLOCK_M"] == 64 and consts["GROUP"] == 8
    assert not {"BLOCK_M", "GROUP"} & {a.parameter for a in spec.assumptions}


def test_dataclass_defaults_and_a_field_never_set(tmp_path):
    root = _package(tmp_path, '''
        from .context import GemmContext
        from .kernels import gemm_kernel


        def run(x):
            ctx = GemmContext(x.shape[0], rank=3)
            gemm_kernel[(1,)](x, ctx.stages, ctx.BLOCK_M, ctx.workspace, ctx.missing, GROUP=ctx.GROUP)
    ''')
    (facts,) = _facts(root)
    assert (facts[1].value, facts[2].value, facts["GROUP"].value) == (3, 128, 8)  # field defaults, exact
    assert facts[3].kind == "unknown"  # set by __post_init__ from torch.empty: a run-time object
    assert facts[4].kind == "unknown"  # no such field: stays unknown


def test_a_field_the_wrapper_or_a_method_changes_is_not_the_construction(tmp_path):
    context = CONTEXT.replace("\n\ndef create_gemm_context", "    def retile(self):\n        self.GROUP = 4\n\n\ndef create_gemm_context")
    root = _package(tmp_path, '''
        from .context import GemmContext
        from .kernels import gemm_kernel


        def run(x):
            ctx = GemmContext(x.shape[0])
            ctx.BLOCK_M = 32 if x.shape[0] > 4096 else 16
            ctx.retile()
            prepare(ctx)
            gemm_kernel[(1,)](x, ctx.n, ctx.BLOCK_M, ctx.stages, GROUP=ctx.GROUP)
    ''', context)
    (facts,) = _facts(root)
    assert facts[2].kind == "unknown" and facts["GROUP"].kind == "unknown"
    assert facts[3].value == 3 and facts[3].assumption == "ctx.stages is not changed by prepare(...) before the launch"


def test_a_context_passed_by_the_caller_gives_the_class_default_as_an_assumption(tmp_path):
    root = _package(tmp_path, '''
        from .context import GemmContext
        from .kernels import gemm_kernel


        def run(x, ctx: GemmContext):
            gemm_kernel[(1,)](x, ctx.n, ctx.BLOCK_M, GROUP=ctx.GROUP)
    ''')
    (facts,) = _facts(root)
    assert facts[2].value == 128
    assert facts[2].assumption == "ctx.BLOCK_M: the dataclass default 128 of GemmContext (the caller's ctx may set another)"
    assert facts[1].kind == "unknown"  # no default: only the caller knows
    site = scan(root, jobs=1).sites[0]
    (spec,) = launch_spec.resolve_specs(site, kernel_source=KERNEL).specs
    (said,) = [a for a in spec.assumptions if a.parameter == "BLOCK_M"]
    assert "the dataclass default 128" in said.source


def test_namedtuple_plain_class_and_parameter_default(tmp_path):
    context = '''
from typing import NamedTuple


class Tiles(NamedTuple):
    BM: int
    GROUP: int = 4


class Plain:
    def __init__(self, n, block=256):
        self.n = n
        self.block = block
        self.buf = make_buffer(n)
'''
    root = _package(tmp_path, '''
        from .context import Plain, Tiles
        from .kernels import gemm_kernel


        def run(x, plain=Plain(1024, block=32)):
            tiles = Tiles(BM=16)
            gemm_kernel[(1,)](x, plain.n, tiles.BM, GROUP=tiles.GROUP)
            gemm_kernel[(2,)](x, plain.n, plain.block, GROUP=tiles.GROUP)
    ''', context)
    first, second = _facts(root)
    assert (first[2].value, first["GROUP"].value, first[2].assumption) == (16, 4, "")
    assert (second[1].value, second[2].value) == (1024, 32)
    assert second[2].assumption == "the caller leaves plain at its default Plain(1024, block=32)"


def test_config_spread_from_a_factory_when_the_caller_passes_none(tmp_path):
    context = '''
import triton


def pick_config(N, chunks):
    per_chunk = N // chunks
    return triton.Config({"BLOCK_M": 128, "GROUP": triton.next_power_of_2(per_chunk // 64)}, num_warps=8)
'''
    root = _package(tmp_path, '''
        from .context import pick_config
        from .kernels import gemm_kernel


        def run(x, chunks=2, config=None):
            config = config or pick_config(x.shape[1], chunks)
            gemm_kernel[(1,)](x, x.shape[0], **config.all_kwargs())
    ''', context)
    (facts,) = _facts(root)
    assert facts["BLOCK_M"].value == 128
    assert facts["BLOCK_M"].assumption == "the caller leaves config at its default None"
    assert facts["GROUP"].kind == "unknown"  # computed from N: only known at run time
    assert facts["num_warps"].value == 8


def test_disagreeing_or_run_time_constructions_stay_unknown(tmp_path):
    root = _package(tmp_path, '''
        from .context import GemmContext
        from .kernels import gemm_kernel


        def build(n, big):
            if big:
                return GemmContext(n, BLOCK_M=256)
            return GemmContext(n, BLOCK_M=64)


        def run(x, big: bool):
            ctx = build(x.shape[0], big)
            gemm_kernel[(1,)](x, ctx.n, ctx.BLOCK_M, GROUP=ctx.GROUP)
    ''')
    (facts,) = _facts(root)
    assert facts[2].kind == "unknown"  # 256 or 64, decided at run time: never one of them


def test_opaque_values_never_pass_for_values():
    pm = ParsedModule.parse("m.py", textwrap.dedent('''
        from dataclasses import dataclass

        @dataclass
        class C:
            n: int
            BLOCK: int = 64

            def __post_init__(self):
                if self.n is None:
                    self.BLOCK = 16

        def f(x):
            c = C(x.size(0))
            return c.BLOCK
    '''), "m", False)
    fn = pm.tree.body[-1]
    ev = Evaluator(resolve=lambda fq: (_ for _ in ()).throw(Unresolved(fq)), opaque_arguments=True)
    node = fn.body.body[-1].body[0].value
    try:
        value = ev.eval(pm, node, {})
    except Unresolved:
        value = "unknown"
    assert value == "unknown"  # ``n is None`` on a run-time value may set BLOCK: not 64


def test_a_layer_that_autotunes_another_modules_kernel_gets_that_modules_launches(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "context.py").write_text(CONTEXT)
    (root / "pkg" / "kernels.py").write_text(textwrap.dedent('''
        import triton
        import triton.language as tl

        from .context import GemmContext


        @triton.jit
        def gemm_kernel(x_ptr, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP: tl.constexpr):
            offs = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


        def run(x, ctx: GemmContext):
            gemm_kernel[(1,)](x, ctx.n, ctx.BLOCK_M, GROUP=ctx.GROUP)
    '''))
    (root / "pkg" / "other.py").write_text(textwrap.dedent('''
        from .kernels import gemm_kernel


        def run_early(x):
            gemm_kernel[(1,)](x, 1, 16, GROUP=2)
    '''))
    (root / "pkg" / "layer.py").write_text(textwrap.dedent('''
        import triton

        from . import kernels


        class Layer:
            def __init__(self, tune: bool):
                if tune:
                    kernels.gemm_kernel = triton.autotune(
                        configs=[triton.Config({"BLOCK_N": 64}, num_warps=4)], key=["n"])(kernels.gemm_kernel)
    '''))
    (site,) = scan(root, jobs=1).sites
    assert site.path == "pkg/layer.py"
    # kernels.py reads its global at call time (the patched one); other.py bound it at import.
    assert [(launch.path, launch.line) for launch in site.launches] == [("pkg/kernels.py", 15)]
    (spec,) = launch_spec.resolve_specs(site, kernel_source=(root / "pkg" / "kernels.py").read_text()).specs
    assert dict(spec.constexprs)["BLOCK_M"] == 128

"""A tile extent no code gives a value is judged over a stated sweep, not left ``needs_spec``
(issue 20, item 7; ``spec/shape_sweep.py``).

Fixtures written here, in the shapes seen in attention and LoRA kernels: a head dim the wrapper
reads off a tensor's shape, a tile computed from it with ``triton.next_power_of_2``, two such
extents at once, a constexpr that is no tile extent (not swept), ``--exact`` and the ``assume``
table. The last test compiles for real and checks the rewrite's rule on the swept specs.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from autotune_rewrite.locate.scan import scan
from autotune_rewrite.spec import launch_spec
from autotune_rewrite.spec.param_uses import tile_extents
from autotune_rewrite.spec.shape_sweep import SHAPE_SWEEP, SWEEP_COMPILES
from tests.repo_env import pythonpath
import cli_process

KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_M": 32}, num_warps=4, num_stages=2),
                          triton.Config({"BLOCK_M": 256}, num_warps=8, num_stages=4)], key=["n"])
@triton.jit
def rows_kernel(x_ptr, w_ptr, out_ptr, n, HEAD_DIM: tl.constexpr, IGNORE: tl.constexpr, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, HEAD_DIM)
    x = tl.load(x_ptr + rows[:, None] * HEAD_DIM + cols[None, :], mask=rows[:, None] < n, other=0.0)
    w = tl.load(w_ptr + cols[:, None] * HEAD_DIM + cols[None, :])
    y = tl.dot(x, w)
    y += tl.full((BLOCK_M, HEAD_DIM), IGNORE, tl.float32)
    tl.store(out_ptr + rows[:, None] * HEAD_DIM + cols[None, :], y, mask=rows[:, None] < n)
'''


def _repo(tmp_path: Path, wrapper: str, kernel: str = KERNEL) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "kernels.py").write_text(kernel)
    (root / "pkg" / "ops.py").write_text(textwrap.dedent(wrapper))
    return root


def _resolve(root: Path, **kw) -> launch_spec.SpecResolution:
    (site,) = scan(root, jobs=1).sites
    source = (root / site.kernel_path).read_text()
    return launch_spec.resolve_specs(site, kernel_source=source, **kw)


HEAD_DIM_FROM_SHAPE = '''
    import torch
    from .kernels import rows_kernel

    def rows(x, w):
        n, d = x.shape
        out = torch.empty_like(x)
        rows_kernel[(n,)](x, w, out, n, HEAD_DIM=d, IGNORE=-100)
        return out
'''


def test_a_head_dim_read_off_a_shape_is_swept_one_spec_per_value(tmp_path):
    res = _resolve(_repo(tmp_path, HEAD_DIM_FROM_SHAPE))
    assert res.ok, res.missing
    by_value = {dict(s.constexprs)["HEAD_DIM"]: s for s in res.specs}
    assert sorted(by_value) == list(SHAPE_SWEEP)
    for value, spec in by_value.items():
        (a,) = [a for a in spec.assumptions if a.parameter in ("HEAD_DIM", "d")]
        assert a.value == repr(value)
        assert "swept over {64, 128, 256}" in a.source or "default shape sweep" in a.source
        assert dict(spec.constexprs)["IGNORE"] == -100  # given at the launch: not swept


def test_a_tile_computed_from_the_wrappers_name_is_evaluated_on_each_swept_value(tmp_path):
    wrapper = '''
        import torch
        import triton
        from .kernels import rows_kernel

        def rows(x, w):
            n, d = x.shape
            out = torch.empty_like(x)
            rows_kernel[(n,)](x, w, out, n, HEAD_DIM=triton.next_power_of_2(d), IGNORE=-100)
            return out
    '''
    res = _resolve(_repo(tmp_path, wrapper))
    assert res.ok, res.missing
    assert sorted(dict(s.constexprs)["HEAD_DIM"] for s in res.specs) == list(SHAPE_SWEEP)
    (a,) = [a for a in res.specs[0].assumptions if a.parameter == "HEAD_DIM"]
    assert "next_power_of_2" in a.source and "default shape sweep" in a.source


def test_a_tile_clamped_from_below_is_swept_from_its_clamp(tmp_path):
    # ``max(16, rank)`` says ranks below the sweep occur: 16 and 32 are judged too (a rank-32
    # LoRA launch judged only at 64 and up looked dead where it launches).
    wrapper = HEAD_DIM_FROM_SHAPE.replace("HEAD_DIM=d,", "HEAD_DIM=max(16, d),")
    res = _resolve(_repo(tmp_path, wrapper))
    assert sorted(dict(s.constexprs)["HEAD_DIM"] for s in res.specs) == [16, 32, *SHAPE_SWEEP]
    (a,) = [a for a in res.specs[0].assumptions if a.parameter == "HEAD_DIM"]
    assert "from the smallest value `max(16, d)` allows" in a.source
    # no clamp, no extension
    plain = _resolve(_repo(tmp_path / "plain", HEAD_DIM_FROM_SHAPE.replace("HEAD_DIM=d,", "HEAD_DIM=max(d, 1),")))
    assert sorted(dict(s.constexprs)["HEAD_DIM"] for s in plain.specs) == list(SHAPE_SWEEP)


def test_exact_sweeps_nothing(tmp_path):
    res = _resolve(_repo(tmp_path, HEAD_DIM_FROM_SHAPE), exact=True)
    assert not res.ok and "HEAD_DIM" in dict(res.missing)["default"]


def test_the_assume_table_narrows_the_sweep_to_the_users_shape(tmp_path):
    res = _resolve(_repo(tmp_path, HEAD_DIM_FROM_SHAPE), assume={"HEAD_DIM": (128,)})
    assert res.ok and [dict(s.constexprs)["HEAD_DIM"] for s in res.specs] == [128]


def test_a_constexpr_that_is_no_tile_extent_is_not_swept(tmp_path):
    wrapper = '''
        import torch
        from .kernels import rows_kernel

        def rows(x, w, ignore):
            n, d = x.shape
            out = torch.empty_like(x)
            rows_kernel[(n,)](x, w, out, n, HEAD_DIM=64, IGNORE=ignore)
            return out
    '''
    res = _resolve(_repo(tmp_path, wrapper))
    assert dict(res.missing)["default"] == ("IGNORE",)


def test_two_extents_over_the_bound_are_swept_at_their_extremes(tmp_path):
    kernel = KERNEL.replace("HEAD_DIM: tl.constexpr, IGNORE", "HEAD_DIM: tl.constexpr, RANK: tl.constexpr, IGNORE").replace(
        "    y = tl.dot(x, w)\n", "    y = tl.dot(x, w)\n    r = tl.zeros((BLOCK_M, RANK), dtype=tl.float32)\n"
        "    y += tl.sum(r, axis=1)[:, None]\n")
    wrapper = '''
        import torch
        from .kernels import rows_kernel

        def rows(x, w, rank):
            n, d = x.shape
            out = torch.empty_like(x)
            rows_kernel[(n,)](x, w, out, n, HEAD_DIM=d, RANK=rank, IGNORE=-100)
            return out
    '''
    res = _resolve(_repo(tmp_path, wrapper, kernel))
    assert res.ok, res.missing
    combos = sorted((dict(s.constexprs)["HEAD_DIM"], dict(s.constexprs)["RANK"]) for s in res.specs)
    lo, hi = min(SHAPE_SWEEP), max(SHAPE_SWEEP)
    assert combos == [(lo, lo), (lo, hi), (hi, lo), (hi, hi)]  # 9 combinations > 8: the extremes


def _many_configs(kernel: str, n: int) -> str:
    """``kernel`` with ``n`` configs (a comprehension, as long config lists are written)."""
    head = kernel.index("@triton.autotune(")
    body = kernel.index("@triton.jit")
    return (kernel[:head] + f'@triton.autotune(configs=[triton.Config({{"BLOCK_M": 16 * (i % 4 + 1)}}, num_warps=4, '
            f'num_stages=1 + i // 4) for i in range({n})], key=["n"])\n' + kernel[body:])


@pytest.mark.parametrize("configs, values", [(40, SHAPE_SWEEP), (100, (min(SHAPE_SWEEP), max(SHAPE_SWEEP))),
                                             (300, (min(SHAPE_SWEEP),))])
def test_the_sweep_is_bounded_by_the_compiles_it_adds(tmp_path, configs, values):
    # specs x configs stays within SWEEP_COMPILES: all values, then the extremes, then the
    # smallest (where a config that cannot launch cannot launch at any larger value).
    res = _resolve(_repo(tmp_path, HEAD_DIM_FROM_SHAPE, _many_configs(KERNEL, configs)))
    assert res.ok, res.missing
    assert tuple(sorted(dict(s.constexprs)["HEAD_DIM"] for s in res.specs)) == values
    assert len(res.specs) * configs <= max(SWEEP_COMPILES, configs)
    (a,) = [a for a in res.specs[0].assumptions if a.parameter == "HEAD_DIM"]
    assert (f"more than {SWEEP_COMPILES} compiles" in a.source) == (values != SHAPE_SWEEP), a.source


def test_tile_extents_are_read_from_shapes_not_from_addresses():
    src = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, M, N, S: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr, STEPS: tl.constexpr,
              OFF: tl.constexpr):
            half: tl.constexpr = D // 2
            ptr = tl.make_block_ptr(p, (M, N), (S, 1), (OFF, 0), (BM, BN), (1, 0))
            acc = tl.zeros((BM, half), dtype=tl.float32)
            for i in tl.static_range(STEPS):
                acc += 1.0
            tl.store(p + OFF + S, acc)
    ''')
    assert tile_extents(src, "k", {"S", "BM", "BN", "D", "STEPS", "OFF"}) == {"BM", "BN", "D", "STEPS"}


@pytest.mark.slow
def test_prune_drops_a_config_only_when_it_cannot_launch_at_every_swept_value(tmp_path):
    root = _repo(tmp_path, HEAD_DIM_FROM_SHAPE)
    env = dict(os.environ, PYTHONPATH=pythonpath(), NO_COLOR="1")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "x"], cwd=root,
                   check=True)
    check = cli_process.run(["check", ".", "--format", "json"], cwd=root,
                           env=env, timeout=900)
    assert check.returncode in (0, 1), check.stderr
    kernels = json.loads(check.stdout)["kernels"]
    assert sorted(k["spec"] for k in kernels) == sorted(f"default d={v}" for v in SHAPE_SWEEP)
    launches: dict[str, bool] = {}
    for k in kernels:
        assert k["status"] in ("assumed", "no_launchable")
        for v in k["configs"]:
            launches[v["label"]] = launches.get(v["label"], False) or v["launchable"]
    assert set(launches) == {"BLOCK_M=32 w4 s2", "BLOCK_M=256 w8 s4"}
    diff = cli_process.run(["diff", "--variant", "prune", "."], cwd=root, env=env, timeout=900)
    assert diff.returncode == 0, diff.stderr
    for config, alive in launches.items():
        block = config.split()[0].split("=")[1]
        removed = f'-                          triton.Config({{"BLOCK_M": {block}}}' in diff.stdout or (
            f'-@triton.autotune(configs=[triton.Config({{"BLOCK_M": {block}}}' in diff.stdout)
        assert removed == (not alive), (config, diff.stdout)


WITH_A_DEAD_TILE = KERNEL.replace(
    'triton.Config({"BLOCK_M": 256}, num_warps=8, num_stages=4)], key=["n"])',
    'triton.Config({"BLOCK_M": 256}, num_warps=8, num_stages=4),\n'
    '                          triton.Config({"BLOCK_M": 1024}, num_warps=4, num_stages=2)], key=["n"])')


@pytest.mark.slow
def test_a_swept_value_where_nothing_launches_does_not_stop_the_prune(tmp_path):
    # At d=256 no config fits sm_120's 99 KB; BLOCK_M=1024 fits at no swept value. The prune drops
    # that one line (the hanging list stays as written) and keeps the two that launch at d=64 and
    # 128; v1, which keeps only configs launching for every spec, leaves the kernel as it is.
    assert WITH_A_DEAD_TILE != KERNEL
    root = _repo(tmp_path, HEAD_DIM_FROM_SHAPE, WITH_A_DEAD_TILE)
    env = dict(os.environ, PYTHONPATH=pythonpath(), NO_COLOR="1")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "x"], cwd=root,
                   check=True)
    diff = cli_process.run(["diff", "--variant", "prune", "."], cwd=root, env=env, timeout=900)
    assert diff.returncode == 0, diff.stderr
    removed = [line for line in diff.stdout.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in diff.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert removed == ['-                          triton.Config({"BLOCK_M": 256}, num_warps=8, num_stages=4),',
                       '-                          triton.Config({"BLOCK_M": 1024}, num_warps=4, num_stages=2)], key=["n"])']
    assert added == ['+                          triton.Config({"BLOCK_M": 256}, num_warps=8, num_stages=4)], key=["n"])']
    assert "no config launches for every launch spec" in diff.stderr
    assert "cannot launch for this spec, as decided" in diff.stderr  # the re-check says what it found
    v1 = cli_process.run(["diff", "--variant", "v1", "."], cwd=root, env=env, timeout=900)
    assert v1.returncode in (0, 1) and v1.stdout == "", v1.stderr


# --------------------------------------------------------------------------- plain Python the evaluator now runs
def _scan_one(tmp_path: Path, source: str):
    root = tmp_path / "py"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "k.py").write_text(textwrap.dedent(source))
    (site,) = scan(root, jobs=1).sites
    return site


def test_a_pre_hook_factory_with_a_nested_def_is_evaluated(tmp_path):
    site = _scan_one(tmp_path, '''
        import triton
        import triton.language as tl

        def zero(*names):
            def hook(nargs):
                for n in names:
                    nargs[n].zero_()
            return hook

        CONFIGS = [triton.Config({"B": b}, num_warps=4, pre_hook=zero("y")) for b in (64, 128)]

        @triton.autotune(configs=CONFIGS, key=["n"])
        @triton.jit
        def k(y, n, B: tl.constexpr):
            pass
    ''')
    assert site.unresolved_reason is None and [c.kwargs["B"] for c in site.configs] == [64, 128]


def test_an_optional_import_of_an_installed_package_takes_the_try_body(tmp_path):
    site = _scan_one(tmp_path, '''
        import triton
        import triton.language as tl

        def configs():
            try:
                import triton.language.extra
            except ImportError:
                return []
            return [triton.Config({"B": 64}, num_warps=4)]

        @triton.autotune(configs=configs(), key=["n"])
        @triton.jit
        def k(x, n, B: tl.constexpr):
            pass
    ''')
    assert site.unresolved_reason is None and [c.kwargs["B"] for c in site.configs] == [64]
    assert "optional import taken" in site.configs_origin


def test_a_module_that_stubs_triton_when_it_is_missing_is_read_with_the_real_triton(tmp_path):
    # ``try: import triton / except ImportError: triton = <a stub module>``: triton is installed
    # where the tool runs, so the names are the imports' (the stub's autotune would be the identity).
    site = _scan_one(tmp_path, '''
        try:
            import triton
            import triton.language as tl
            HAVE_TRITON = True
        except ImportError:
            HAVE_TRITON = False
            import types
            triton = types.ModuleType("triton")
            triton.autotune = lambda **kw: lambda fn: fn
            triton.jit = lambda fn: fn
            triton.Config = dict
            tl = types.ModuleType("triton.language")
            tl.constexpr = int

        def configs():
            return [triton.Config({"B": b}, num_warps=w) for b in (64, 128) for w in (4, 8)]

        @triton.autotune(configs=configs(), key=["n"])
        @triton.jit
        def k(x, n, B: tl.constexpr):
            pass
    ''')
    assert site.unresolved_reason is None, site.unresolved_reason
    assert [(c.kwargs["B"], c.num_warps) for c in site.configs] == [(64, 4), (64, 8), (128, 4), (128, 8)]
    assert "optional import taken: triton, triton.language installed" in site.configs_origin


def test_a_module_that_stubs_a_package_not_installed_stays_unresolved(tmp_path):
    site = _scan_one(tmp_path, '''
        import triton
        import triton.language as tl
        try:
            import surely_not_installed_pkg as fast
        except ImportError:
            import types
            fast = types.SimpleNamespace(BLOCKS=(32,))

        @triton.autotune(configs=[triton.Config({"B": b}) for b in fast.BLOCKS], key=["n"])
        @triton.jit
        def k(x, n, B: tl.constexpr):
            pass
    ''')
    assert site.configs is None and "surely_not_installed_pkg, which is not installed here" in site.unresolved_reason


def test_an_environment_membership_through_dunder_import_reads_the_variable_unset(tmp_path):
    site = _scan_one(tmp_path, '''
        import triton
        import triton.language as tl

        C = [triton.Config({"B": 64}, num_warps=4), triton.Config({"B": 128}, num_warps=4)]

        @triton.autotune(configs=C[:1] if "SOME_TEST_FLAG" in __import__("os").environ else C, key=["n"])
        @triton.jit
        def k(x, n, B: tl.constexpr):
            pass
    ''')
    assert site.unresolved_reason is None and [c.kwargs["B"] for c in site.configs] == [64, 128]

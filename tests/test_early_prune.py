"""The scan applies a site's ``early_config_prune`` when it can be run statically, per target:
what each target's autotuner really times (``locate/early_prune``). Scan only, no compiles."""

from __future__ import annotations

from pathlib import Path

from autotune_rewrite.locate.scan import scan
from autotune_rewrite.settings import load_settings

SOURCE = '''\
import torch
import triton
import triton.language as tl

CONFIGS = [
    triton.Config({"BLOCK": 64}, num_warps=4),
    triton.Config({"BLOCK": 256}, num_warps=8, num_stages=4),
]


def _fits_smem(configs, named_args, **kwargs):
    # A serving engine's SMEM pruner: the device's opt-in against an estimate per config.
    limit = torch.cuda.get_device_properties(0).shared_memory_per_block_optin
    return [c for c in configs if c.kwargs["BLOCK"] * 192 * c.num_stages <= limit]


def _by_size(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] <= named_args["N"]]


def _defaults(configs, named_args, **kwargs):
    return [c for c in configs if (c.num_warps, c.num_stages) == (4, 3)]


@triton.autotune(configs=CONFIGS, key=["N"], prune_configs_by={"early_config_prune": _fits_smem})
@triton.jit
def smem_pruned(x, N, BLOCK: tl.constexpr):
    pass


@triton.autotune(configs=CONFIGS, key=["N"], prune_configs_by={"early_config_prune": _by_size, "top_k": 1})
@triton.jit
def size_pruned(x, N, BLOCK: tl.constexpr):
    pass


@triton.autotune(configs=CONFIGS, key=["N"], prune_configs_by={"early_config_prune": _defaults})
@triton.jit
def default_fields(x, N, BLOCK: tl.constexpr):
    pass
'''


def _sites(tmp_path: Path) -> dict:
    (tmp_path / "k.py").write_text(SOURCE)
    result = scan(tmp_path, jobs=1, settings=load_settings(tmp_path).with_arch(["sm_120", "sm_90"]))
    return {s.kernel: s for s in result.sites}


def _labels(configs) -> list[str]:
    return [c.label() for c in configs]


def test_a_device_asking_pruner_is_run_per_target(tmp_path):
    site = _sites(tmp_path)["smem_pruned"]
    by = {e.targets: _labels(e.configs) for e in site.configs_by_target}
    # 256 x 192 x 4 = 196,608 B: over sm_120's 101,376 B opt-in, under sm_90's 232,448 B
    assert by == {("sm_120",): ["BLOCK=64 w4 s3"], ("sm_90",): ["BLOCK=64 w4 s3", "BLOCK=256 w8 s4"]}
    assert "early_config_prune" in site.configs_by_target[0].origin


def test_a_pruner_reading_launch_arguments_leaves_the_configs_as_written(tmp_path):
    site = _sites(tmp_path)["size_pruned"]
    assert not site.target_dependent
    assert _labels(site.configs) == ["BLOCK=64 w4 s3", "BLOCK=256 w8 s4"]


def test_config_fields_left_out_read_as_tritons_defaults(tmp_path):
    site = _sites(tmp_path)["default_fields"]
    assert _labels(site.configs) == ["BLOCK=64 w4 s3"]  # num_stages unset = 3, as triton.Config has it


def test_a_capability_pruner_with_star_args_is_run_per_target(tmp_path):
    """The shape a serving engine writes (lmdeploy's fused MoE): slices of one list by capability."""
    (tmp_path / "moe.py").write_text('''\
import torch
import triton
import triton.language as tl


def _prune(config: list, *args, **kwargs):
    cap = torch.cuda.get_device_capability()
    if cap[0] >= 9:
        return config[:1]
    return config[1:]


@triton.autotune(configs=[triton.Config({"B": 128}, num_stages=4), triton.Config({"B": 64}, num_stages=2)],
                 key=[], prune_configs_by=dict(early_config_prune=_prune))
@triton.jit
def moe(x, B: tl.constexpr):
    pass
''')
    (site,) = scan(tmp_path, jobs=1, settings=load_settings(tmp_path).with_arch(["sm_90", "sm_80"])).sites
    assert {e.targets: _labels(e.configs) for e in site.configs_by_target} == {
        ("sm_90",): ["B=128 w4 s4"], ("sm_80",): ["B=64 w4 s2"]}

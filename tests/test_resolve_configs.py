"""Configs that can be known without running anything (issue 10, item 7), through the real CLI.

The fixture repo (tests/fixtures/resolve/repo) holds one kernel per shape: module-level tuple
unpacking, a helper reached through ``from .configs import *`` that builds a local list in
loops (``while``/``assert`` included), a module variable bound twice and grown after, a loader
instance's method, a JSON and a YAML data file, pure builtins, a written config with one
runtime field, a call form over ``triton.heuristics``, a kernel defined in a function, a
function-local list and a list bound under ``if __name__ == "__main__"``. ``check`` really
compiles the JSON-configured kernel for sm_120.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from rewrite_e2e import cli as run_cli, commit_tree

FIXTURE = Path(__file__).parent / "fixtures" / "resolve" / "repo"



@pytest.fixture()
def repo(tmp_path) -> Path:
    dst = tmp_path / "repo"
    shutil.copytree(FIXTURE, dst)
    return commit_tree(dst)


def cli(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd, cache=cache)


def scan(repo: Path, cache: Path) -> dict:
    proc = cli(repo, cache, "scan", ".", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return {(s["kernel"], s["line"]): s for s in json.loads(proc.stdout)["sites"]}


def labels(sites: dict, kernel: str, line: int | None = None) -> list[str] | str:
    (site,) = [s for (k, n), s in sites.items() if k == kernel and (line is None or n == line)]
    return [c["label"] for c in site["configs"]] if site["configs"] is not None else site["unresolved_reason"]


@pytest.fixture()
def sites(repo, cache):
    return scan(repo, cache)


def test_module_level_tuple_unpacking(sites):
    assert labels(sites, "unpack_kernel") == ["BLOCK=64 w8 s3"]  # ``A, B = [...], [...]``
    assert labels(sites, "paren_kernel") == ["BLOCK=128 w4 s3"]  # ``(SMALL, LARGE) = (...)``


def test_a_helper_through_a_star_reexport_building_a_local_list(sites):
    assert labels(sites, "star_kernel") == ["BLOCK=32 w4 s3", "BLOCK=32 w8 s3", "BLOCK=64 w4 s3", "BLOCK=64 w8 s3"]


def test_the_binding_in_force_at_the_decorator(sites):
    assert labels(sites, "first_binding_kernel") == ["BLOCK=16 w4 s3"]
    # rebound, then ``+=`` and a module-level ``for`` appending: all above the decorator
    assert labels(sites, "second_binding_kernel") == ["BLOCK=256 w4 s3", "BLOCK=512 w4 s3", "BLOCK=1024 w4 s3",
                                                      "BLOCK=1024 w8 s3"]


def test_a_method_of_a_module_level_loader_instance(sites):
    assert labels(sites, "loader_kernel") == ["BLOCK=32 w4 s3", "BLOCK=64 w4 s3"]


def test_configs_read_from_json_and_yaml_files_are_inputs_of_the_site(sites):
    json_site = next(s for (k, _), s in sites.items() if k == "json_kernel")
    assert [c["label"] for c in json_site["configs"]] == ["BLOCK=64 w4 s3", "BLOCK=128 w8 s3"]
    assert json_site["data_files"] == ["pkg/configs.json"]
    yaml_site = next(s for (k, _), s in sites.items() if k == "yaml_kernel")
    assert [c["label"] for c in yaml_site["configs"]] == ["BLOCK=32 w2 s3", "BLOCK=256 w8 s3"]
    assert yaml_site["data_files"] == ["pkg/configs.yaml"]


def test_pure_builtins(sites):
    # isinstance / getattr with a literal name / sum / len / min / max over the unpacked lists
    assert labels(sites, "builtins_kernel") == ["BLOCK=64 w8 s3"]


def test_one_runtime_field_keeps_the_rest(sites):
    site = next(s for (k, _), s in sites.items() if k == "runtime_field_kernel")
    assert [c["label"] for c in site["configs"]] == ["BLOCK=64 w4 s3", "BLOCK=128 SPLIT=? w4 s3"]
    assert site["configs"][0]["unknown"] == []
    ((field, reason),) = site["configs"][1]["unknown"]
    assert field == "SPLIT" and "`fastlib.runtime_split`" in reason and "only known at run time" in reason


def test_kernel_identity_through_wrappers_and_functions(sites):
    assert labels(sites, "inner_kernel") == ["BLOCK=32 w4 s3"]  # defined inside a function
    plain = {line: s for (k, line), s in sites.items() if k == "plain_kernel"}
    by_bound = {s["bound_to"]: [c["label"] for c in s["configs"]] for s in plain.values()}
    # ``triton.autotune(...)(triton.heuristics(h)(plain_kernel))`` names the kernel plain_kernel
    assert by_bound["heuristic_kernel"] == ["BLOCK=32 w4 s3"]
    assert "triton.heuristics" in next(s for s in plain.values() if s["bound_to"] == "heuristic_kernel")["decorators"]
    # a function-local list grown by ``append``, and one bound under ``if __name__ == "__main__"``
    others = sorted([c["label"] for c in s["configs"]] for s in plain.values() if s["bound_to"] != "heuristic_kernel")
    assert others == [["BLOCK=2048 w16 s3"], ["BLOCK=8 w1 s3", "BLOCK=16 w2 s3"]]


def test_check_compiles_configs_read_from_json_and_never_judges_a_runtime_field(repo, cache):
    proc = cli(repo, cache, "check", ".", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    kernels = {k["kernel"]: k for k in json.loads(proc.stdout)["kernels"]}
    copy = kernels["json_kernel"]
    assert copy["status"] in ("judged", "assumed"), copy  # compiled (the spec may assume n % 16)
    assert sorted((c["label"], c["launchable"]) for c in copy["configs"]) == [
        ("BLOCK=128 w8 s3", True), ("BLOCK=64 w4 s3", True)]
    runtime = kernels["runtime_field_kernel"]
    assert runtime["status"] == "unresolved" and runtime["problem"]["reason"] == "configs_unresolved"
    assert "`SPLIT` is not known statically" in runtime["problem"]["detail"]


def test_changed_since_notices_a_data_file(repo, cache):
    (repo / "pkg" / "configs.json").write_text(
        '{"copy": [{"kwargs": {"BLOCK": 32}, "num_warps": 4}]}\n')
    proc = cli(repo, cache, "check", ".", "--changed-since", "HEAD", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    out = json.loads(proc.stdout)
    kernels = {k["kernel"]: k for k in out["kernels"]}
    # selected for its data file; the other sites of the tree were not (a kernel defined inside a
    # function cannot be cut out, so its inputs are unknown and it is judged: every doubt selects)
    assert "json_kernel" in kernels and "loader_kernel" not in kernels and "yaml_kernel" not in kernels
    assert [c["label"] for c in kernels["json_kernel"]["configs"]] == ["BLOCK=32 w4 s3"]  # the scan cache saw it too
    assert "pkg/configs.json" in json.dumps(out["changed_since"])


def test_a_rewrite_of_data_file_configs_names_the_data_file(repo, cache):
    # 64 warps = 2,048 threads: cannot launch, so prune changes the configs read from the file
    (repo / "pkg" / "configs.json").write_text(
        '{"copy": [{"kwargs": {"BLOCK": 64}, "num_warps": 4}, {"kwargs": {"BLOCK": 1024}, "num_warps": 64}]}\n')
    proc = cli(repo, cache, "diff", "--variant", "prune", ".", "--kernel", "json_kernel")
    assert proc.returncode in (0, 1), proc.stderr
    assert "configs are read from pkg/configs.json" in proc.stderr, proc.stderr


# ---------------------------------------------------------------------- the evaluator itself
def test_one_wording_for_an_environment_read_wherever_it_is_met():
    from autotune_rewrite.evaluate import unknowns
    from autotune_rewrite.locate.facts import pending_resolver

    neutral = unknowns.needs_target("os.environ.get")
    assert unknowns.not_in_tree("os.environ.get") == neutral and "--env" in neutral
    try:
        pending_resolver(frozenset({"pkg"}))("os.getenv")
    except Exception as exc:  # noqa: BLE001 - the per-file pass words it as the evaluator does
        assert str(exc) == unknowns.needs_target("os.getenv")
    assert "device query" in unknowns.not_in_tree("torch.cuda.mem_get_info")


def test_names_read_where_the_evaluation_is():
    from autotune_rewrite.evaluate import Evaluator, outcome
    from autotune_rewrite.locate.parsed import ParsedModule

    source = "X = [1]\nX = X + [2]\nY = X\nX = [9]\nA, (B, C) = 1, (2, 3)\n"
    pm = ParsedModule.parse("m.py", source, "m", False)
    node = pm.module_bindings()["Y"][0]

    def at(line):
        return outcome(Evaluator(resolve=lambda fq: None, positions={"m.py": line}), pm, node).value

    assert at(3) == [1, 2]  # ``X = X + [2]`` reads the X bound above it
    assert at(5) == [9]
    assert at(None) == [9]  # an importer sees the last binding
    c = pm.module_bindings()  # tuple targets are not plain bindings, but the evaluator reads them
    assert "C" not in c
    ev = Evaluator(resolve=lambda fq: None)
    assert ev.module_value(pm, "C") == 3


def test_hasattr_of_a_triton_module_is_asked_of_the_installed_triton():
    from autotune_rewrite.evaluate import Evaluator, outcome
    from autotune_rewrite.locate.parsed import ParsedModule

    source = ("import triton\nimport triton.language as tl\nWS = hasattr(tl, 'no_such_api_here')\n"
              "def ws():\n    if not WS:\n        return []\n    return [triton.Config({'B': 1})]\n"
              "CONFIGS = [triton.Config({'B': 2})] + ws() if hasattr(tl, 'dot') else []\n")
    pm = ParsedModule.parse("m.py", source, "m", False)
    ev = Evaluator(resolve=lambda fq: None)
    (config,) = outcome(ev, pm, pm.module_bindings()["CONFIGS"][0]).value
    assert config.kwargs == {"B": 2}
    assert "hasattr(triton.language, 'no_such_api_here') = False (installed Triton)" in ev.queries


def test_a_try_around_an_import_of_a_package_not_installed_is_not_guessed():
    from autotune_rewrite.evaluate import Evaluator, Unknown, outcome
    from autotune_rewrite.locate.parsed import ParsedModule

    source = ("try:\n    import fastlib\n    FAST = True\nexcept ImportError:\n    FAST = False\n"
              "try:\n    N = 4\nexcept RuntimeError:\n    N = 0\nX = (FAST, N)\nY = N\n")
    pm = ParsedModule.parse("m.py", source, "m", False)
    result = outcome(Evaluator(resolve=lambda fq: None), pm, pm.module_bindings()["X"][0])
    # fastlib is not installed where the tool runs: the fallback runs there, and it is not guessed.
    assert isinstance(result, Unknown) and "fastlib, which is not installed here" in result.reason
    assert outcome(Evaluator(resolve=lambda fq: None), pm, pm.module_bindings()["Y"][0]).value == 4

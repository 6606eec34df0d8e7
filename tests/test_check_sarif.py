"""``check --format sarif``: a SARIF 2.1.0 log that the published schema accepts, with one alert
per config that cannot launch on its ``triton.Config`` line, notes for kernels not judged, and
the run's exit code.

End to end through the CLI on the check fixture placed in a subfolder of a git repository (a
monorepo: the project root is not the repository root), and one in-process case built from
typed verdicts for the finding kinds the fixture does not have (spills, registers, generated
configs, helper modules).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from repo_env import pythonpath
from sarif_schema import schema_errors

from autotune_rewrite.check.check_result import CheckResult
from autotune_rewrite.evidence import CompileJob, CompileOutcome, KernelBundle, KernelReport, LaunchSpec
from autotune_rewrite.findings import Spills
from autotune_rewrite.check.plans import verdict
from autotune_rewrite.model import AutotuneSite, ConfigValue, Span
from autotune_rewrite.output.sarif import check_sarif
from autotune_rewrite.targets import resolve_target
import cli_process

FIXTURE = Path(__file__).parent / "fixtures" / "check" / "repo"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.fixture(scope="module")
def monorepo(tmp_path_factory) -> Path:
    top = tmp_path_factory.mktemp("sarif") / "mono"
    shutil.copytree(FIXTURE, top / "libs" / "kern")
    _git(top, "init", "-q")
    _git(top, "add", "-A")
    _git(top, "commit", "-qm", "fixture")
    return top


def sarif(cwd: Path, cache: Path, *args: str) -> tuple[int, dict]:
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1")
    env["PYTHONPATH"] = pythonpath(env=env)
    proc = cli_process.run(["check", ".", "--format", "sarif", *args],
                          cwd=cwd, env=env, timeout=600)
    return proc.returncode, json.loads(proc.stdout)


def _where(result: dict) -> tuple[str, int]:
    loc = result["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    return loc["artifactLocation"]["uri"], loc["region"]["startLine"]


def test_dead_configs_are_errors_on_their_config_line_relative_to_the_repository(monorepo, cache):
    code, log = sarif(monorepo / "libs" / "kern", cache, "--arch", "sm_120", "--arch", "sm_89")
    assert code == 1
    assert schema_errors(log) == []
    run, = log["runs"]
    assert log["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "autotune-rewrite"
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == monorepo.resolve().as_uri() + "/"
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    dead = [r for r in run["results"] if r["ruleId"] == "cannot-launch/shared-memory"]
    assert [(r["level"], _where(r), r["properties"]["arch"]) for r in dead] == [
        ("error", ("libs/kern/kernels/transpose.py", 29), "sm_120"),
        ("error", ("libs/kern/kernels/transpose.py", 29), "sm_89"),
    ]
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in run["results"])
    region = dead[0]["locations"][0]["physicalLocation"]["region"]
    line = (FIXTURE / "kernels" / "transpose.py").read_text().splitlines()[28]
    assert line[region["startColumn"] - 1:region["endColumn"] - 1] == \
        'triton.Config({"BLOCK_M": 256, "BLOCK_N": 128}, num_warps=8)'
    assert dead[0]["message"]["text"].startswith(
        "transpose_kernel [fp32]: BLOCK_M=256 BLOCK_N=128 w8 s3 cannot launch on sm_120: shared memory 131,072 B > "
        "101,376 B opt-in limit of sm_120, over by 29,696 B")
    assert dead[0]["properties"]["sharedBytes"] == 131072
    note, = [r for r in run["results"] if r["ruleId"] == "not-judged"]
    assert note["level"] == "note" and _where(note) == ("libs/kern/kernels/generated.py", 11)
    assert note["message"]["text"].startswith("scale_kernel: not judged (unresolved): configs not statically known")


def test_a_clean_target_exits_0_with_only_the_notes_and_strict_fails_them(monorepo, cache):
    code, log = sarif(monorepo / "libs" / "kern", cache, "--arch", "sm_90")
    assert code == 0 and schema_errors(log) == []
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["not-judged"]
    code, log = sarif(monorepo / "libs" / "kern", cache, "--arch", "sm_90", "--strict")
    assert code == 1 and log["runs"][0]["invocations"][0]["exitCode"] == 1


# --------------------------------------------------------------------------- in process, every kind
SITE_SOURCE = "kern.py"


def _outcome(job: CompileJob, shared: int, regs: int, spills: int) -> CompileOutcome:
    return CompileOutcome(job=job, shared_bytes=shared, tmem_bytes=0, registers=regs, spills=spills, error=None,
                          triton_version="3.6.0", ptxas_version="12.9.86")


def _job(warps: int) -> CompileJob:
    return CompileJob(bundle=KernelBundle("k", "", "kern.py::k"), signature=(("x", "*fp32"),), constexprs=(),
                      divisible_by_16=(), num_warps=warps, num_stages=2, num_ctas=1, maxnreg=None, capability=120)


def _site(configs) -> AutotuneSite:
    return AutotuneSite(path=SITE_SOURCE, line=10, span=Span(10, 1, 14, 1), form="decorator", kernel="k",
                        kernel_span=None, kernel_path=SITE_SOURCE, params=(), do_not_specialize=(), decorators=(),
                        key=("n",), key_span=None, configs=configs, configs_origin="literal list",
                        configs_span=Span(11, 12, 11, 40), unresolved_reason=None)


def test_every_finding_kind_has_its_rule_and_place():
    target = resolve_target("sm_120")
    spilling = ConfigValue({"B": 64}, num_warps=4, span=Span(7, 4, 7, 44), path="configs/tiles.py")  # a helper module
    heavy = ConfigValue({"B": 128}, num_warps=16)  # generated: no span of its own
    spec = LaunchSpec("default", (("x", "*fp32"),), ())
    v_spill = verdict(spilling, target, _outcome(_job(4), 8192, 255, 24))
    v_regs = verdict(heavy, target, _outcome(_job(16), 8192, 255, 0))  # 255 regs x 512 threads
    report = KernelReport(_site((spilling, heavy)), spec, verdicts=(v_spill, v_regs),
                          notes=(Spills("default", "sm_120", spilling.label(), 24, 255),))
    result = CheckResult(root="/nowhere", targets=(target,), reports=(report,), errors=(), triton_version="3.6.0",
                         ptxas_versions=(("sm_120", "12.9.86"),))
    log = json.loads(check_sarif(result, prefix="sub/"))
    assert schema_errors(log) == []
    got = [(r["ruleId"], r["level"], _where(r)) for r in log["runs"][0]["results"]]
    assert got == [
        ("spills", "warning", ("sub/configs/tiles.py", 7)),
        ("cannot-launch/registers", "error", ("sub/kern.py", 11)),  # the configs= argument that generates it
    ]
    spill, regs = log["runs"][0]["results"]
    assert spill["message"]["text"] == ("k: sm_120 B=64 w4 s3 (launch spec default): spills 24 registers to local "
                                        "memory (255 registers/thread)")
    assert regs["message"]["text"].startswith("k: B=128 w16 s3 cannot launch on sm_120: registers 255/thread x 512")
    assert "originalUriBaseIds" not in log["runs"][0]


def test_a_kernel_where_nothing_launches_and_a_rejected_compile():
    target = resolve_target("sm_120")
    big = ConfigValue({"B": 256}, num_warps=4, span=Span(11, 8, 11, 50))
    odd = ConfigValue({"B": 3}, num_warps=4, span=Span(12, 8, 12, 50))
    rejected = CompileOutcome.failed(_job(4), "static_assert failed: B must be a power of 2", "3.6.0", "12.9.86",
                                     kind="rejected", file="kern.py", line=20)
    verdicts = (verdict(big, target, _outcome(_job(4), 200_000, 64, 0)), verdict(odd, target, rejected))
    report = KernelReport(_site((big, odd)), LaunchSpec("default", (("x", "*fp32"),), ()), verdicts=verdicts)
    result = CheckResult(root="/nowhere", targets=(target,), reports=(report,), errors=(), triton_version="3.6.0",
                         ptxas_versions=(("sm_120", "12.9.86"),))
    log = json.loads(check_sarif(result))
    assert schema_errors(log) == []
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], _where(r)) for r in results] == [
        ("cannot-launch/shared-memory", ("kern.py", 11)),
        ("cannot-launch/compile-rejected", ("kern.py", 12)),
        ("no-launchable-config", ("kern.py", 10)),  # on the decorator
    ]
    assert results[1]["message"]["text"] == ("k: B=3 w4 s3 cannot launch on sm_120: compile error: static_assert "
                                             "failed: B must be a power of 2 (kern.py:20)")
    assert results[2]["message"]["text"].startswith("k: no config launches on sm_120")
    assert log["runs"][0]["invocations"][0]["exitCode"] == 1


def test_the_schema_check_itself_catches_a_broken_log():
    assert schema_errors({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}) == [
        "runs/0/tool/driver: 'name' is a required property"]

"""`diff` through the real CLI: diffs git applies, --check exit codes, idempotence, bad input."""

from __future__ import annotations

import pytest
from rewrite_e2e import cli, git, make_repo


@pytest.mark.parametrize("variant", ["prune", "v1", "v2", "v3"])
def test_diff_applies_and_a_second_run_changes_nothing(tmp_path, cache, variant):
    root = make_repo(tmp_path, "proj_comprehension")
    before = (root / "proj" / "project.py").read_bytes()
    first = cli("diff", "--variant", variant, "--check", ".", cwd=root, cache=cache, check_rc=1)
    assert first.stdout.startswith("diff --git a/proj/project.py b/proj/project.py\n")
    assert "would change" in first.stderr and "diff --git" not in first.stderr
    assert (root / "proj" / "project.py").read_bytes() == before  # nothing written
    (tmp_path / "p.diff").write_text(first.stdout, newline="")
    git(root, "apply", "--check", str(tmp_path / "p.diff"))
    git(root, "apply", str(tmp_path / "p.diff"))
    after = (root / "proj" / "project.py").read_bytes()
    assert b"\r\n" in after and b"\n" not in after.replace(b"\r\n", b"")  # still CRLF throughout
    second = cli("diff", "--variant", variant, "--check", ".", cwd=root, cache=cache, check_rc=0)
    assert second.stdout == ""
    assert "nothing to change" in second.stderr


def test_diff_without_check_exits_0_even_with_changes(tmp_path, cache):
    root = make_repo(tmp_path, "proj_comprehension")
    proc = cli("diff", "--variant", "prune", root, cwd=root.parent, cache=cache, check_rc=0)
    assert proc.stdout.startswith("diff --git a/proj/project.py b/proj/project.py\n")


def test_unknown_kernel_lists_the_kernels_found(tmp_path, cache):
    root = make_repo(tmp_path, "proj_comprehension")
    proc = cli("diff", "--variant", "v1", "--kernel", "nope", ".", cwd=root, cache=cache, check_rc=2)
    assert "kernel 'nope' not found" in proc.stderr and "proj/project.py::_proj_kernel" in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("buckets", ["48,8", "x", "0,4"])
def test_bad_buckets_exit_2(tmp_path, cache, buckets):
    root = make_repo(tmp_path, "proj_comprehension")
    proc = cli("diff", "--variant", "v3", "--buckets", buckets, ".", cwd=root, cache=cache, check_rc=2)
    assert "--buckets" in proc.stderr


def test_star_args_launch_is_that_kernels_outcome_and_fails_the_check(tmp_path, cache):
    root = make_repo(tmp_path, "proj_comprehension")
    p = root / "proj" / "project.py"
    p.write_bytes(p.read_bytes().replace(b"_proj_kernel[grid](x, w, y, B, D, BLOCK_B=16)", b"_proj_kernel[grid](*(x, w, y, B, D), BLOCK_B=16)"))
    # The kernel needs a change that cannot be made: reported, no diff, and the gate fails.
    proc = cli("diff", "--variant", "v3", "--check", ".", cwd=root, cache=cache, check_rc=1)
    assert "_proj_kernel: cannot be changed: " in proc.stderr and "*args/**kwargs" in proc.stderr
    assert proc.stdout == ""


def test_batch_expr_names_the_batch_size(tmp_path, cache):
    root = make_repo(tmp_path, "proj_comprehension")
    proc = cli("diff", "--variant", "v3", "--batch-expr", "x.shape[0]", ".", cwd=root, cache=cache, check_rc=0)
    assert "bs_bucket=_bs_bucket(x.shape[0])" in proc.stdout


def test_json_format_carries_decisions_evidence_and_the_diff(tmp_path, cache):
    import json

    root = make_repo(tmp_path, "proj_comprehension")
    proc = cli("diff", "--variant", "v1", "--format", "json", "--check", ".", cwd=root, cache=cache, check_rc=1)
    doc = json.loads(proc.stdout)
    assert doc["schema"] == 2 and doc["variant"] == "v1" and doc["targets"] == ["sm_120"]
    (k,) = doc["kernels"]
    assert k["kernel"] == "proj/project.py::_proj_kernel"
    assert [c["config"] for c in k["configs"]] == ["BLOCK_D=64 w8 s2"]
    assert k["configs"][0]["evidence"][0]["shared_bytes"] == 10240  # check's verdict shape
    # The fixture's spec gives no value for B: assumed divisible by 16, and said so.
    assert [(o["kernel"], o["status"], [a["parameter"] for a in o["assumptions"]]) for o in doc["outcomes"]] == [
        ("proj/project.py::_proj_kernel", "assumed", ["B"])]
    assert doc["diff"].startswith("diff --git a/proj/project.py b/proj/project.py\n")


def test_unresolved_configs_are_skipped_with_the_reason(tmp_path, cache):
    root = make_repo(tmp_path, "proj_comprehension")
    (root / "proj" / "dynamic.py").write_text(
        "import json\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.autotune(configs=[triton.Config(c) for c in json.load(open('tuned.json'))], key=['n'])\n"
        "@triton.jit\ndef dyn_kernel(x, n, BLOCK: tl.constexpr):\n    pass\n"
    )
    proc = cli("diff", "--variant", "prune", "--check", ".", cwd=root, cache=cache, check_rc=1)
    assert "unresolved proj/dynamic.py::dyn_kernel: configs not statically known" in proc.stderr
    assert "judged 1 of 2 kernels (1 with assumptions); not judged: unresolved proj/dynamic.py::dyn_kernel" \
        in proc.stderr
    assert "diff --git a/proj/project.py" in proc.stdout and "dynamic.py" not in proc.stdout

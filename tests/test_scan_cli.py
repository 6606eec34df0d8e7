"""``autotune-rewrite scan`` end to end: JSON schema, exit codes, bad input, settings,
excludes, .gitignore in a real git repository, the process pool."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autotune_rewrite.model import to_jsonable
from autotune_rewrite.locate.scan import scan
from locate_helpers import REPO
from repo_env import pythonpath
import cli_process

KERNEL = """import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"B": 16}, num_warps=4)], key=["n"])
@triton.jit
def NAME(X, n, B: tl.constexpr):
    pass
"""


def kernel(name: str) -> str:
    return KERNEL.replace("NAME", name)


def run_cli(*args, cwd=None):
    env = dict(os.environ, NO_COLOR="1")
    env["PYTHONPATH"] = pythonpath(env=env)
    return cli_process.run(["scan", *map(str, args)], env=env, cwd=cwd)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_json_schema_and_nothing_modified(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo)
    before = snapshot(repo)
    proc = run_cli(repo, "--format", "json", "-j", "2")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) >= {"sites", "errors", "files_scanned"} and data["schema_version"] == 1
    assert data["files_scanned"] == 11 and data["errors"] == []
    for site in data["sites"]:
        assert {"path", "line", "kernel", "form", "configs", "unresolved_reason", "key", "launches"} <= set(site)
        assert not site["path"].startswith("/") and isinstance(site["line"], int)
        assert site["form"] in ("decorator", "call")
        assert site["configs"] is None or all({"kwargs", "num_warps", "num_stages", "label"} <= set(c) for c in site["configs"])
        assert (site["configs"] is None) == (site["unresolved_reason"] is not None)
        for launch in site["launches"]:
            assert {"path", "line"} <= set(launch)
    decode = [s for s in data["sites"] if s["path"] == "pkg/kernels.py"][0]
    assert decode["configs"][0] == {
        "kwargs": {"BLOCK_T": 16}, "num_warps": 4, "num_stages": 2, "num_ctas": None, "maxnreg": None,
        "has_pre_hook": False, "span": {"start_line": 7, "start_col": 8, "end_line": 7, "end_col": 65},
        "path": "pkg/kernels.py", "label": "BLOCK_T=16 w4 s2", "descriptor_shapes": [], "choices": [], "unknown": []}
    assert [(l["path"], l["line"]) for l in decode["launches"]] == [
        ("pkg/caller.py", 8), ("pkg/caller.py", 9), ("pkg/kernels.py", 27)]
    assert snapshot(repo) == before


def test_table_goes_to_stderr_and_no_progress_bar_without_tty():
    proc = run_cli(REPO)
    assert proc.returncode == 0 and proc.stdout == ""
    assert "decode_kernel" in proc.stderr and "16 site(s) in 11 file(s)" in proc.stderr
    assert "scanning" not in proc.stderr


def test_kernels_module_and_separate_caller(tmp_path):
    (tmp_path / "mla").mkdir()
    (tmp_path / "mla" / "__init__.py").write_text("")
    (tmp_path / "mla" / "kernels.py").write_text(kernel("_decode"))
    (tmp_path / "mla" / "ops.py").write_text(
        "from mla.kernels import _decode\n\n\ndef decode(x, n):\n    _decode[(n,)](x, n)\n")
    proc = run_cli(tmp_path, "--format", "json")
    data = json.loads(proc.stdout)
    assert proc.returncode == 0
    assert [(s["kernel"], [(l["path"], l["line"]) for l in s["launches"]]) for s in data["sites"]] == [
        ("_decode", [("mla/ops.py", 5)])]


def test_missing_path_is_exit_2():
    proc = run_cli("/nonexistent/tree")
    assert proc.returncode == 2
    assert "/nonexistent/tree: no such file or folder" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_bad_files_are_reported_and_the_scan_goes_on(tmp_path):
    (tmp_path / "good.py").write_text(kernel("good"))
    (tmp_path / "broken.py").write_text("import triton\n@triton.autotune(configs=[\ndef f(:\n")
    (tmp_path / "latin1.py").write_bytes("# autotune caf\xe9\n".encode("latin-1"))
    proc = run_cli(tmp_path, "--format", "json")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert [s["kernel"] for s in data["sites"]] == ["good"]
    errors = {e["path"]: e["message"] for e in data["errors"]}
    assert errors["broken.py"].startswith("does not parse (line 3): expected one of")
    assert errors["latin1.py"] == "not UTF-8 (byte 0xe9 on line 1); save the file as UTF-8"


def test_nothing_scannable_is_exit_2(tmp_path):
    (tmp_path / "broken.py").write_text("autotune = (\n")
    proc = run_cli(tmp_path)
    assert proc.returncode == 2
    assert "broken.py: does not parse" in proc.stderr


def test_empty_folder_is_a_clean_scan(tmp_path):
    proc = run_cli(tmp_path, "--format", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["files_scanned"] == 0


def test_settings_and_exclude_flags(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "k.py").write_text(kernel(f"k_{name}"))
    (tmp_path / "pyproject.toml").write_text('[tool.autotune-rewrite]\narch = ["sm_120", "sm_89"]\nexclude = ["b/*"]\n')
    kernels = lambda *flags: [s["kernel"] for s in json.loads(run_cli(tmp_path, "--format", "json", *flags).stdout)["sites"]]
    assert kernels() == ["k_a"]
    assert kernels("--exclude", "a") == ["k_b"]  # replaces the configured list
    assert kernels("--extend-exclude", "a/*") == []  # adds to it
    assert sorted(s.kernel for s in scan(tmp_path, paths=[Path("b/k.py")]).sites) == ["k_b"]  # explicit wins


def test_settings_file_and_bad_settings(tmp_path):
    from autotune_rewrite.errors import UserError
    from autotune_rewrite.settings import load_settings

    assert load_settings(tmp_path).arch == ("sm_120",)
    (tmp_path / "pyproject.toml").write_text('[tool.autotune-rewrite]\narch = ["sm_89"]\n[[tool.autotune-rewrite.kernels]]\nkernel = "a.py::k"\n')
    s = load_settings(tmp_path)
    assert s.arch == ("sm_89",) and s.kernels[0].kernel == "a.py::k" and s.source.endswith("pyproject.toml")
    (tmp_path / "autotune-rewrite.toml").write_text('arch = ["sm_86"]\nexclude = "vendor/*"\n')
    s = load_settings(tmp_path)
    assert s.arch == ("sm_86",) and s.exclude == ("vendor/*",)
    assert s.with_exclude(None, ["x"]).exclude == ("vendor/*", "x")
    (tmp_path / "autotune-rewrite.toml").write_text("arch = [1]\n")
    with pytest.raises(UserError, match="arch must be a list of strings"):
        load_settings(tmp_path)
    (tmp_path / "autotune-rewrite.toml").write_text("arch = [\n")
    proc = run_cli(tmp_path)
    assert proc.returncode == 2 and "invalid TOML" in proc.stderr


def test_gitignore_respected_in_a_real_git_repo(tmp_path):
    git = lambda *a: subprocess.run(["git", "-C", str(tmp_path), *a], check=True, capture_output=True)
    git("init", "-q")
    (tmp_path / ".gitignore").write_text("generated/\n")
    for d in ("src", "generated", ".hidden"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "k.py").write_text(kernel(f"k_{d.strip('.')}"))
    (tmp_path / "untracked.py").write_text(kernel("k_untracked"))
    git("add", "src/k.py", ".gitignore")
    kernels = sorted(s.kernel for s in scan(tmp_path, jobs=1).sites)
    # git decides: tracked + untracked-not-ignored (a hidden folder git sees is scanned too)
    assert kernels == ["k_hidden", "k_src", "k_untracked"]


def test_walk_skips_venvs_and_hidden_folders(tmp_path):
    (tmp_path / "venvx").mkdir()
    (tmp_path / "venvx" / "pyvenv.cfg").write_text("home = /usr\n")
    for d in ("venvx", ".tox", "__pycache__", "src"):
        (tmp_path / d).mkdir(exist_ok=True)
        (tmp_path / d / "k.py").write_text(kernel(f"k_{d.strip('._')}"))
    assert [s.kernel for s in scan(tmp_path, jobs=1).sites] == ["k_src"]


def test_parallel_equals_serial():
    serial, parallel = scan(REPO, jobs=1), scan(REPO, jobs=2)
    assert to_jsonable(serial) == to_jsonable(parallel)


def test_an_ignored_folder_named_explicitly_is_still_scanned(tmp_path):
    subprocess.run(["git", "-C", str(tmp_path), "init", "-q"], check=True)
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "k.py").write_text(kernel("k_build"))
    assert [s.kernel for s in scan(tmp_path, jobs=1).sites] == []
    assert [s.kernel for s in scan(tmp_path / "build", jobs=1).sites] == ["k_build"]


def test_progress_bar_only_on_a_terminal(monkeypatch):
    import io

    from autotune_rewrite.output import scan as scan_out

    class Tty(io.StringIO):
        def isatty(self):
            return True

    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    with scan_out.progress_bar() as cb:  # a pipe: no bar, only a heartbeat after 10 s
        scan(REPO, jobs=1, progress=cb)
    assert piped.getvalue() == ""
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    with scan_out.progress_bar() as cb:
        scan(REPO, jobs=1, progress=cb)
    assert "11/11" in tty.getvalue()

"""Settings: every key typed, unknown keys spell-checked, specs of unknown kernels refused, and the
project root found from any path inside the checkout, through the real CLI where users meet it."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from autotune_rewrite.errors import UserError
from autotune_rewrite.settings import describe, find_project_root, from_table, load_settings
from repo_env import pythonpath
import cli_process

SETTINGS_DOC = Path(__file__).parents[1] / "docs" / "settings.md"

KERNEL = """import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"B": 16}, num_warps=4)], key=["n"])
@triton.jit
def NAME(X, n, B: tl.constexpr):
    pass
"""


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    env["PYTHONPATH"] = pythonpath(env=env)
    return cli_process.run(args, env=env, cwd=cwd, timeout=600)


def git_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


# --------------------------------------------------------------------------- spelling, through the CLI
@pytest.mark.parametrize("toml, message", [
    ('[tool.autotune-rewrite]\narchs = ["sm_90"]\n',
     "error: pyproject.toml: [tool.autotune-rewrite] archs is not a known key; did you mean 'arch'?"),
    ('[tool.autotune-rewrite.variants]\nbucket = [8, 48]\n',
     "error: pyproject.toml: [tool.autotune-rewrite] variants.bucket is not a known key; did you mean 'buckets'?"),
    ('[[tool.autotune-rewrite.kernels]]\nkernel = "k.py::kern"\nconstexpr = { B = 16 }\n',
     "error: pyproject.toml: [tool.autotune-rewrite] kernels[0].constexpr is not a known key; did you mean 'constexprs'?"),
])
@pytest.mark.parametrize("command", ["scan", "check"])
def test_a_misspelled_key_exits_2_naming_it_and_the_likely_key(tmp_path, toml, message, command):
    repo = git_repo(tmp_path / "repo", {"pyproject.toml": toml, "k.py": KERNEL.replace("NAME", "kern")})
    proc = cli(command, ".", cwd=repo)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == message


def test_the_tool_file_names_keys_without_the_pyproject_prefix(tmp_path):
    (tmp_path / "autotune-rewrite.toml").write_text('exclud = ["vendor/*"]\n')
    with pytest.raises(UserError) as err:
        load_settings(tmp_path)
    assert str(err.value).endswith("autotune-rewrite.toml: exclud is not a known key; did you mean 'exclude'?")


def test_a_key_nothing_resembles_lists_the_known_ones():
    with pytest.raises(UserError, match=r"variants\.zzz is not a known key \(known: buckets, inline_configs\)"):
        from_table({"variants": {"zzz": 1}})


# --------------------------------------------------------------------------- types
@pytest.mark.parametrize("table, message", [
    ({"arch": 1}, 'arch must be a list of strings, e.g. arch = ["..."]'),
    ({"arch": []}, "arch must name at least one target"),
    ({"arch": ["sm_90", "sm_999"]}, "arch[1] = 'sm_999': unknown target 'sm_999'"),
    ({"exclude": [1]}, "exclude must be a list of strings"),
    ({"variants": []}, "variants must be a table"),
    ({"variants": {"buckets": [48, 8]}}, "variants.buckets must be increasing positive integers, e.g. buckets = [8, 48]"),
    ({"variants": {"buckets": [8, True]}}, "variants.buckets must be increasing positive integers"),
    ({"variants": {"inline_configs": "yes"}}, "variants.inline_configs must be true or false"),
    ({"kernels": {"kernel": "a.py::k"}}, "kernels must be an array of tables"),
    ({"kernels": [{"spec": "s"}]}, "kernels[0].kernel is required"),
    ({"kernels": [{"kernel": "a.py"}]}, 'kernels[0].kernel must be "path/to/file.py::kernel_name", got "a.py"'),
    ({"kernels": [{"kernel": "a.py::k", "constexprs": {"B": [16]}}]}, "kernels[0].constexprs.B must be a number, bool or string"),
    ({"kernels": [{"kernel": "a.py::k", "values": {"n": 2.5}}]}, "kernels[0].values.n must be an integer, got 2.5"),
    ({"bench": {"k": {"entry": "m:f", "call": "m:g", "options": 3}}}, "bench.k.options must be a table"),
    ({"assume": {"causal": []}}, "assume.causal must not be an empty list"),
    ({"assume": {"H": {"x": 1}}}, "assume.H must be a number, bool or string"),
    ({"assume": ["H"]}, "assume must be a table"),
    ({"env": {"USE_FP8": 1}}, "env.USE_FP8 must be a string, got 1"),
])
def test_wrong_types_name_file_and_key(table, message):
    with pytest.raises(UserError) as err:
        from_table(table, "sub/pyproject.toml")
    assert str(err.value).startswith(f"sub/pyproject.toml: [tool.autotune-rewrite] {message}")
    assert not re.search(r"--[a-z]", str(err.value))  # never a flag the user did not pass


def test_every_key_is_typed_data():
    s = from_table({
        "arch": "h200", "exclude": "vendor/*",
        "kernels": [{"kernel": "a.py::k", "types": {"q": "*bfloat16", "n": "int32"}, "values": {"n": 64}}],
        "variants": {"buckets": [8, 48]},
        "bench": {"a.py::k": {"entry": "b:make", "call": "a:run", "options": {"heads": 128}}},
        "assume": {"causal": [True, False], "HEAD_DIM": 128, "scale": 0.5, "mode": "fast"},
        "env": {"USE_FP8": "1"},
    })
    assert s.arch == ("h200",) and s.exclude == ("vendor/*",)
    assert s.kernels[0].types == (("q", "*bf16"), ("n", "i32")) and s.kernels[0].spec == "default"
    assert s.variants.buckets == (8, 48)
    assert s.bench_entry("a.py::k", "k").options == (("heads", 128),)
    assert s.assume == (("causal", (True, False)), ("HEAD_DIM", 128), ("scale", 0.5), ("mode", "fast"))
    assert s.env == (("USE_FP8", "1"),)
    assert isinstance(hash(s), int)  # frozen, hashable and picklable: plain tuples all the way down


def test_no_settings_gives_the_defaults(tmp_path):
    s = load_settings(tmp_path)
    assert (s.arch, s.kernels, s.variants.buckets, s.source, s.root) == (("sm_120",), (), None, None, str(tmp_path.resolve()))


def test_settings_doc_lists_every_key_with_its_type():
    text = SETTINGS_DOC.read_text(encoding="utf-8")
    section = text[text.index("## Every key"):]
    end = section.find("\n## ", 5)  # the table's section runs to the next heading, or to the end
    section = section if end < 0 else section[:end]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([^`]+)` \| ([^|]+?) \|", section, re.M)}
    assert rows == {k: t for k, t, _ in describe()}


# --------------------------------------------------------------------------- specs of unknown kernels
def test_a_spec_for_a_kernel_that_does_not_exist_exits_2_with_the_closest(tmp_path):
    toml = ('[tool.autotune-rewrite]\narch = ["sm_90"]\n\n[[tool.autotune-rewrite.kernels]]\n'
            'kernel = "pkg/k.py::kern"\ntypes = { X = "*fp32" }\n\n[[tool.autotune-rewrite.kernels]]\n'
            'kernel = "pkg/k.py::kernn"\ntypes = { X = "*fp32" }\n')
    repo = git_repo(tmp_path / "repo", {"pyproject.toml": toml, "pkg/k.py": KERNEL.replace("NAME", "kern"),
                                        "other/o.py": KERNEL.replace("NAME", "other")})
    proc = cli("check", ".", cwd=repo)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: pyproject.toml: [tool.autotune-rewrite] kernels[1].kernel = "
                                  "'pkg/k.py::kernn' names no autotuned kernel found under ")
    assert "did you mean 'pkg/k.py::kern'" in proc.stderr
    # A check of another folder cannot judge specs of files it did not scan.
    assert "kernels[1]" not in cli("check", "other", "--format", "json", cwd=repo).stderr


# --------------------------------------------------------------------------- the project root
def test_root_is_found_from_a_subfolder_and_from_a_file(tmp_path):
    repo = git_repo(tmp_path / "repo", {"pkg/sub/k.py": "", "lib/pyproject.toml": '[project]\nname = "lib"\n'})
    assert find_project_root([repo / "pkg" / "sub"]) == repo.resolve()
    assert find_project_root([repo / "pkg" / "sub" / "k.py"]) == repo.resolve()
    assert find_project_root([repo / "pkg", repo / "lib"]) == repo.resolve()
    (repo / "pkg" / "autotune-rewrite.toml").write_text('arch = ["sm_90"]\n')
    assert find_project_root([repo / "pkg" / "sub" / "k.py"]) == (repo / "pkg").resolve()  # the nearest settings
    s = load_settings(repo / "pkg" / "sub")
    assert s.root == str((repo / "pkg").resolve()) and s.arch == ("sm_90",)


def test_the_search_stops_at_the_git_top(tmp_path):
    (tmp_path / "autotune-rewrite.toml").write_text('arch = ["sm_90"]\n')  # someone else's, above the checkout
    repo = git_repo(tmp_path / "repo", {"a/k.py": ""})
    assert find_project_root([repo / "a"]) == repo.resolve()
    assert load_settings(repo / "a").arch == ("sm_120",)


def test_outside_git_the_nearest_pyproject_is_the_root(tmp_path):
    (tmp_path / "proj" / "src").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text('[project]\nname = "p"\n')
    assert find_project_root([tmp_path / "proj" / "src"]) == (tmp_path / "proj").resolve()


def test_scan_from_a_subfolder_a_file_and_the_root_reads_one_settings_and_one_naming(tmp_path):
    toml = '[tool.autotune-rewrite]\nexclude = ["pkg/vendor/*"]\n'
    repo = git_repo(tmp_path / "repo", {
        "pyproject.toml": toml,
        "pkg/k.py": KERNEL.replace("NAME", "kern"),
        "pkg/vendor/v.py": KERNEL.replace("NAME", "vendored"),
        "tools/t.py": KERNEL.replace("NAME", "tool"),
    })
    idents = lambda proc: sorted(f"{s['path']}::{s['kernel']}" for s in json.loads(proc.stdout)["sites"])
    assert idents(cli("scan", ".", "--format", "json", cwd=repo)) == ["pkg/k.py::kern", "tools/t.py::tool"]
    from_sub = cli("scan", ".", "--format", "json", cwd=repo / "pkg")
    assert from_sub.returncode == 0, from_sub.stderr
    assert idents(from_sub) == ["pkg/k.py::kern"]  # the root's exclude applies; paths from the root
    assert idents(cli("scan", "pkg", "--format", "json", cwd=repo)) == ["pkg/k.py::kern"]
    assert idents(cli("scan", "k.py", "--format", "json", cwd=repo / "pkg")) == ["pkg/k.py::kern"]

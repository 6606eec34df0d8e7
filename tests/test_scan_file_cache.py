"""The per-file facts cache: an edit re-analyses that file only, and never leaves stale facts.

Each test writes a small tree in tmp_path, scans it once with a cache folder (every candidate
analysed), changes something, and scans again: ``ScanResult.files_analysed`` counts the files
the second scan really parsed; the sites must equal those of a scan without any cache.
"""

from __future__ import annotations

import pickle
from dataclasses import replace
from pathlib import Path

import pytest

from autotune_rewrite.locate.facts import FileFacts
from autotune_rewrite.locate.link_cache import Entry as LinkEntry
from autotune_rewrite.locate.scan import scan

KERNEL = (
    "import triton\nimport triton.language as tl\n{imports}\n\n"
    "@triton.autotune(configs={configs}, key=['n'])\n"
    "@triton.jit\n"
    "def {name}(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n\n\n"
    "def run_{name}(x):\n"
    "    {name}[(1,)](x, x.numel())\n"
)
LITERAL = "[triton.Config({'BLOCK': 64}, num_warps=4, num_stages=2)]"


def kernel(name: str, configs: str = LITERAL, imports: str = "") -> str:
    return KERNEL.format(name=name, configs=configs, imports=imports)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    write(root, {
        "pkg/__init__.py": "",
        "pkg/consts.py": "BLOCKS = (32, 64)\n",
        "pkg/tuning.py": (
            "import triton\n\nfrom pkg.consts import BLOCKS\n\n\n"
            "def configs():\n"
            "    return [triton.Config({'BLOCK': b}, num_warps=4, num_stages=2) for b in BLOCKS]\n"
        ),
        "pkg/kern_a.py": kernel("a_kernel", "configs()", "from pkg.tuning import configs\n"),
        "pkg/kern_b.py": kernel("b_kernel"),
        "pkg/kern_c.py": kernel("c_kernel"),
        "pkg/ops.py": "from pkg.kern_b import b_kernel\n\n\ndef go(x):\n    b_kernel[(1,)](x, x.numel())\n",
    })
    return root


def configs_of(result, kernel_name: str) -> list[dict]:
    (site,) = [s for s in result.sites if s.kernel == kernel_name]
    return [dict(c.kwargs) for c in site.configs] if site.configs is not None else None


def cold(root: Path):
    return scan(root, jobs=1)  # no cache at all: the reference


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_edit_re_analyses_only_that_file(tree: Path, tmp_path: Path, jobs: int):
    cache = tmp_path / "cache"
    first = scan(tree, jobs=jobs, cache_dir=cache)
    assert {s.kernel for s in first.sites} == {"a_kernel", "b_kernel", "c_kernel"}
    assert first.files_analysed >= 4  # the three kernel files and ops.py (a launch of b_kernel)
    warm = scan(tree, jobs=jobs, cache_dir=cache)
    assert warm.files_analysed == 0 and warm.sites == first.sites
    (tree / "pkg/kern_c.py").write_text(kernel("c_kernel", LITERAL.replace("64", "128")))
    again = scan(tree, jobs=jobs, cache_dir=cache)
    assert again.files_analysed == 1
    assert configs_of(again, "c_kernel") == [{"BLOCK": 128}]
    assert again.sites == cold(tree).sites


def test_a_helper_module_edit_reaches_the_cached_kernel_file(tree: Path, tmp_path: Path):
    # kern_a.py's facts come from the cache; its configs are read from tuning.py and consts.py
    # by linking, which runs on every scan: the new module variable is seen.
    cache = tmp_path / "cache"
    assert configs_of(scan(tree, jobs=1, cache_dir=cache), "a_kernel") == [{"BLOCK": 32}, {"BLOCK": 64}]
    # Its link (configs evaluated in tuning.py and consts.py) is stored: mark it, and see it reused
    # after an edit elsewhere.
    (entry,) = (cache / "links").rglob("*.pickle")
    stored = pickle.loads(entry.read_bytes())
    entry.write_bytes(pickle.dumps(replace(stored, result=replace(
        stored.result, site=replace(stored.result.site, configs_origin="MARKED")))))
    (tree / "pkg/kern_c.py").write_text(kernel("c_kernel", LITERAL.replace("64", "128")))
    (site,) = [s for s in scan(tree, jobs=1, cache_dir=cache).sites if s.kernel == "a_kernel"]
    assert site.configs_origin == "MARKED"
    (tree / "pkg/consts.py").write_text("BLOCKS = (16, 128, 256)\n")
    again = scan(tree, jobs=1, cache_dir=cache)
    assert again.files_analysed == 0  # consts.py says neither autotune nor a kernel's name
    assert configs_of(again, "a_kernel") == [{"BLOCK": 16}, {"BLOCK": 128}, {"BLOCK": 256}]
    assert [s.configs_origin for s in again.sites if s.kernel == "a_kernel"] != ["MARKED"]
    assert again.sites == cold(tree).sites


def test_a_new_module_a_file_names_invalidates_that_file_only(tree: Path, tmp_path: Path):
    # kern_d.py imports ``extra``, not a module of the tree: its configs cannot be read. Once
    # extra.py exists, the name belongs to the tree and kern_d.py must be analysed again; the
    # other files never mention ``extra`` and keep their facts.
    cache = tmp_path / "cache"
    write(tree, {"pkg/kern_d.py": kernel("d_kernel", "CONFIGS", "from extra import CONFIGS\n")})
    assert configs_of(scan(tree, jobs=1, cache_dir=cache), "d_kernel") is None
    write(tree, {"extra.py": f"import triton\n\nCONFIGS = {LITERAL}\n"})
    again = scan(tree, jobs=1, cache_dir=cache)
    assert again.files_analysed == 1
    assert configs_of(again, "d_kernel") == [{"BLOCK": 64}]
    assert again.sites == cold(tree).sites


def test_a_module_that_appears_is_seen_by_a_cached_link(tree: Path, tmp_path: Path):
    # kern_e.py's configs wait on pkg.more (pkg is in the tree, so linking looks): first there is
    # no such module, then there is. The kernel file did not change; its stored link must not hold.
    cache = tmp_path / "cache"
    write(tree, {"pkg/kern_e.py": kernel("e_kernel", "CONFIGS", "from pkg.more import CONFIGS\n")})
    assert configs_of(scan(tree, jobs=1, cache_dir=cache), "e_kernel") is None
    assert configs_of(scan(tree, jobs=1, cache_dir=cache), "e_kernel") is None  # from the caches
    write(tree, {"pkg/more.py": f"import triton\n\nCONFIGS = {LITERAL}\n"})
    again = scan(tree, jobs=1, cache_dir=cache)
    assert configs_of(again, "e_kernel") == [{"BLOCK": 64}]
    assert again.sites == cold(tree).sites
    (tree / "pkg/more.py").unlink()
    assert configs_of(scan(tree, jobs=1, cache_dir=cache), "e_kernel") is None


def test_a_corrupt_entry_is_ignored_and_rewritten(tree: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    first = scan(tree, jobs=1, cache_dir=cache)
    entries = sorted((cache / "file-facts").rglob("*.pickle"))
    assert len(entries) == first.files_analysed
    entries[0].write_bytes(b"\x80\x05not a pickle")
    entries[1].write_bytes(pickle.dumps("a string, not FileFacts"))
    entries[2].write_bytes(b"")
    for link in (cache / "links").rglob("*.pickle"):
        link.write_bytes(b"garbage")
    again = scan(tree, jobs=1, cache_dir=cache)
    assert again.files_analysed == 3 and again.sites == first.sites
    for entry in entries[:3]:
        assert isinstance(pickle.loads(entry.read_bytes()), FileFacts)
    assert all(isinstance(pickle.loads(p.read_bytes()), LinkEntry) for p in (cache / "links").rglob("*.pickle"))
    assert scan(tree, jobs=1, cache_dir=cache).files_analysed == 0


def test_a_file_that_does_not_parse_is_not_stored(tree: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    write(tree, {"pkg/broken.py": "import triton\n@triton.autotune(configs=[\n"})
    first = scan(tree, jobs=1, cache_dir=cache)
    assert [e.path for e in first.errors] == ["pkg/broken.py"]
    again = scan(tree, jobs=1, cache_dir=cache)
    assert again.files_analysed == 1 and again.errors == first.errors

"""How ``apply`` groups the kernels it changes into branches (``--group``), like Dependabot's
groups: ``kernel`` (a branch each), ``file`` (one branch for the kernels whose decorators are in
one file) or ``repo`` (one branch for the run). Inside a group's branch every kernel is one
commit, in file and line order, so a reviewer can drop one. Pure: names and keys only; the
commits are made by ``branches``.

The default is ``file``: a kernel module is one family (the GEMMs of one op, the attention
passes of one layer) that one owner reviews, and a list several of its kernels read is edited in
one place; a branch per kernel turns a library's 40 affected kernels into 40 pull requests, one
per repository hides unrelated owners' files in one review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

GROUPS = ("kernel", "file", "repo")
DEFAULT_GROUP = "file"
PREFIX = "autotune-rewrite"


def _clean(name: str) -> str:
    # git check-ref-format rules that a Python identifier, a path or an arch name could still break.
    return re.sub(r"[\s~^:?*\[\\]+", "_", name).replace("..", "_").replace("@{", "_")


def branch_name(targets: Sequence[str], kernel: str, variant: str) -> str:
    """One kernel's branch: ``autotune-rewrite/sm_120+sm_90/gemm_kernel-prune``."""
    return _clean(f"{PREFIX}/{'+'.join(targets)}/{kernel}-{variant}")


def group_key(group: str, path: str, ident: str) -> str:
    """The group a kernel (``ident``, its decorator in ``path``) belongs to."""
    return ident if group == "kernel" else path if group == "file" else ""


def group_branch_name(group: str, key: str, targets: Sequence[str], variant: str) -> str:
    """A group's branch: ``.../sm_120/file/ops/gemm.py-prune`` or ``.../sm_120/repo-prune``."""
    what = f"file/{key}" if group == "file" else "repo"
    return _clean(f"{PREFIX}/{'+'.join(targets)}/{what}-{variant}")


__all__ = ["DEFAULT_GROUP", "GROUPS", "PREFIX", "branch_name", "group_branch_name", "group_key"]

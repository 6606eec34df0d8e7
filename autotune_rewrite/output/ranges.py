"""Rendering of the verdicts that depend on an assumed value (``check/ranges``): one line each on
stderr after the tables, and the JSON ``depends`` entries. The sentence itself is
``explain.depends``."""

from __future__ import annotations

from collections.abc import Sequence

from autotune_rewrite import output
from autotune_rewrite.check.ranges import RangeVerdict
from autotune_rewrite.output import explain

DEPENDS_HEAD = ("depends on an assumed value (a rewrite leaves these configs as they are; the assume table's "
                "true value decides them):")


def print_depending(depending: Sequence[RangeVerdict]) -> None:
    """The verdicts that change inside an assumed range, one line each, on stderr."""
    if not depending:
        return
    console = output.stderr()
    console.print(f"[yellow]{output.escape(DEPENDS_HEAD)}[/]")
    for rv in depending:
        family = f" [{rv.family}]" if rv.family != "default" else ""
        console.print(f"  [yellow]~[/] {output.escape(rv.kernel + family)} {output.escape(explain.depends(rv))}")


def depends_json(rv: RangeVerdict) -> dict:
    return {
        "kernel": rv.kernel,
        "spec_family": rv.family,
        "config": rv.config,
        "arch": rv.arch,
        "names": list(rv.names),
        "launches_at": [dict(at) for at in rv.launches_at],
        "cannot_at": [{"values": dict(at), "reason": v.reason_code, "shared_bytes": v.outcome.shared_bytes}
                      for at, v in rv.cannot_at],
        "message": explain.depends(rv),
    }


__all__ = ["DEPENDS_HEAD", "depends_json", "print_depending"]

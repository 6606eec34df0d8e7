"""What ``capture`` prints: a short summary on stderr (stdout belongs to the captured program)."""

from __future__ import annotations

from rich.markup import escape

from autotune_rewrite.gpu.capture.capture import CaptureRun
from autotune_rewrite.output import stderr, warning


def print_summary(run: CaptureRun) -> None:
    res = run.result
    err = stderr()
    for note in res.warnings:
        warning(note)
    for line in res.errors:
        warning(f"hook error in the program: {line}")
    for line in res.skipped:
        warning(f"not written: {line}")
    head = (f"capture: read {run.trace}" if run.trace else f"capture: program exited {run.exit_code}") \
        + f"; {run.records} record(s)"
    if res.triton:
        head += f", Triton {res.triton}"
    if res.targets:
        head += f" on {', '.join(res.targets)}"
    err.print(escape(head), markup=True)
    for kc in res.kernels:
        keys = "; ".join(", ".join(f"{k}={v}" for k, v in kv) or "-" for kv in kc.key_values)
        err.print(f"  [bold]{escape(kc.ident)}[/]" + escape(f"  key [{', '.join(kc.keys)}] seen: {keys}"), markup=True)
        for spec in kc.specs:
            consts = ", ".join(f"{k}={v}" for k, v in spec.constexprs) or "-"
            err.print(f"    spec {escape(repr(spec.name))}: constexprs {escape(consts)}; {len(spec.compiles)} compile(s)",
                      markup=True)
            for c in spec.compiles:
                meta = ", ".join(f"{k}={v}" for k, v in c.meta)
                live = (f"SMEM {c.shared} B, {c.n_regs} regs, {c.n_spills} spills" if c.n_regs is not None
                        else f"SMEM {c.shared} B" + (f" (not loaded: {c.load_error})" if c.load_error else ""))
                err.print(escape(f"      {meta} w{c.num_warps} s{c.num_stages}: {live} [{c.target or '?'}]"), markup=True)
            for note in spec.notes:
                warning(f"{kc.ident} spec {spec.name!r}: {note}")
    if run.written:
        err.print(escape(f"wrote {sum(len(k.specs) for k in res.kernels)} spec(s) to {run.written}"), markup=True)
    elif res.driver_error and not res.kernels:
        warning(f"no GPU driver in the program ({res.driver_error}): nothing compiled, nothing written")
    else:
        warning("no autotuned kernel was launched: nothing written")
    if run.records_file:
        err.print(escape(f"records: {run.records_file}"), markup=True)

"""Run the user's program with the capture hooks, then fold and write what it recorded.

The hooks reach the child through a ``sitecustomize.py`` on a temporary ``PYTHONPATH`` entry, so
they load in every Python process the command starts (``python prog.py``, ``torchrun``, a
``bash -c`` that calls python) without changing the command line. ``hooks.py`` is copied there:
the user's interpreter need not have autotune-rewrite installed. A ``sitecustomize`` the
environment already had is imported after ours, so its behaviour is kept.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from autotune_rewrite.spec import spec_toml
from autotune_rewrite import tempdirs
from autotune_rewrite.gpu.capture import hooks, stanza
from autotune_rewrite.gpu.capture.records import CaptureResult, KernelCapture, fold, read_records
from autotune_rewrite.errors import UserError
from autotune_rewrite.model import to_jsonable
from autotune_rewrite.settings import TOOL_FILE, find_project_root, settings_file_in

_SITECUSTOMIZE = '''\
# Written by autotune-rewrite capture: install the Triton hooks, then the sitecustomize this
# environment had (if any).
import os, sys
_here = os.path.dirname(os.path.abspath(__file__))
try:
    import _autotune_rewrite_capture_hooks
    _autotune_rewrite_capture_hooks.install()
except Exception as _exc:  # never break the program
    sys.stderr.write("autotune-rewrite capture: hooks not installed: %r\\n" % (_exc,))
import importlib.machinery, importlib.util
_spec = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _here])
if _spec is not None and _spec.loader is not None:
    _previous = importlib.util.module_from_spec(_spec)
    sys.modules["_autotune_rewrite_previous_sitecustomize"] = _previous
    _spec.loader.exec_module(_previous)
'''


@dataclass(frozen=True)
class CaptureRun:
    exit_code: int  # the program's
    result: CaptureResult
    written: str | None  # the settings file, when specs were written
    records_file: str | None
    records: int
    trace: str | None = None  # the tritonparse trace read instead of running a program


def default_settings_file(root: Path) -> Path:
    """The root's settings file (autotune-rewrite.toml, else a pyproject.toml holding our table:
    an autotune-rewrite.toml would shadow that table); else a new autotune-rewrite.toml."""
    return settings_file_in(root) or root / TOOL_FILE


def run_program(command: Sequence[str], records: Path) -> int:
    """Run ``command`` with the hooks; its stdio is the terminal's; returns its exit code."""
    with tempdirs.temp_dir("capture") as tmp:
        shutil.copyfile(hooks.__file__, Path(tmp) / "_autotune_rewrite_capture_hooks.py")
        (Path(tmp) / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(tmp)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env[hooks.ENV] = str(records)
        try:
            child = subprocess.Popen(list(command), env=env)
        except FileNotFoundError:
            raise UserError(f"capture: command not found: {command[0]}") from None
        except OSError as exc:
            raise UserError(f"capture: cannot run {command[0]}: {exc.strerror}") from None
        # Ctrl-C reaches the child through the terminal; we wait for it to finish and still write.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            code = child.wait()
        finally:
            signal.signal(signal.SIGINT, previous)
    return code if code >= 0 else 128 - code  # killed by a signal: the shell's convention


def tables_for(kernels: Sequence[KernelCapture]) -> list[spec_toml.Table]:
    tables = []
    for kc in kernels:
        for spec in kc.specs:
            comments = [f"captured {len(spec.compiles)} compile(s); keys {', '.join(kc.keys) or '-'} seen: "
                        + "; ".join(", ".join(f"{k}={v}" for k, v in kv) or "-" for kv in kc.key_values[:12])
                        + (" ..." if len(kc.key_values) > 12 else "")]
            comments += [f"captured note: {n}" for n in spec.notes]
            tables.append(spec_toml.Table(kc.ident, spec.name, spec.types, spec.constexprs, spec.values, tuple(comments)))
    return tables


def capture(command: Sequence[str], root: Path | None = None, out: Path | None = None,
            records_out: Path | None = None) -> CaptureRun:
    """Run ``command`` under the hooks; merge the specs into ``out`` (default: the root's settings file)."""
    if not command:
        raise UserError("capture: give the program after --, e.g. autotune-rewrite capture -- python prog.py")
    root = root.resolve() if root is not None else find_project_root([Path.cwd()])
    if not root.is_dir():
        raise UserError(f"--root {root}: not a folder")
    target = out if out is not None else default_settings_file(root)
    with tempdirs.temp_dir("records") as tmp:
        path = Path(tmp) / "records.jsonl"
        code = run_program(command, path)
        raw = read_records(path)
    return _write(raw, root, target, records_out, {"command": list(command), "exit_code": code}, code)


def capture_trace(trace: Path, root: Path | None = None, out: Path | None = None,
                  records_out: Path | None = None) -> CaptureRun:
    """The same specs from a tritonparse trace (a file or its folder) instead of a live run."""
    from autotune_rewrite.gpu.capture import tritonparse_trace
    from autotune_rewrite.locate.scan import scan

    root = root.resolve() if root is not None else find_project_root([Path.cwd()])
    if not root.is_dir():
        raise UserError(f"--root {root}: not a folder")
    target = out if out is not None else default_settings_file(root)
    events = tritonparse_trace.read_events(trace)
    if not any(e.get("event_type") == "compilation" for e in events):
        raise UserError(f"--from-tritonparse {trace}: no tritonparse compilation record in it "
                        "(is it a trace written by tritonparse.structured_logging.init?)")
    raw, left_out = tritonparse_trace.records_from_trace(events, root, scan(root).sites)
    run = _write(raw, root, target, records_out, {"trace": str(trace), "left_out": left_out}, 0)
    outside = tuple(dict.fromkeys(n for n in left_out if "outside the root" in n))
    return replace(run, result=replace(run.result, skipped=run.result.skipped + outside), trace=str(trace))


def _write(raw: list[dict], root: Path, target: Path, records_out: Path | None, about: dict, code: int) -> CaptureRun:
    """Fold the records, keep them if asked, merge the specs into ``target``."""
    result = fold(raw, root)
    if records_out is not None:
        records_out.parent.mkdir(parents=True, exist_ok=True)
        records_out.write_text(json.dumps({"schema_version": 1, "root": str(root), **about,
                                           "records": raw, "folded": to_jsonable(result)},
                                          indent=1) + "\n", encoding="utf-8")
    written = None
    tables = tables_for(result.kernels)
    if tables:
        stanza.merge_file(target, tables)
        written = str(target)
    return CaptureRun(code, result, written, str(records_out) if records_out else None, len(raw))

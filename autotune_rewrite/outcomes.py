"""Per-kernel outcomes, and the one rule that turns a run's outcomes into an exit code.

Every kernel (autotune site x launch spec) ends a run in exactly one ``Status``, carried as
data through check, diff, apply and bench, in the spirit of LibCST's
``TransformSuccess | TransformFailure | TransformSkip``: a kernel that cannot be handled is
reported with its status and never stops the others. The closed set (documented in the
JSON section of docs/output.md, ``"status"`` per kernel):

- ``judged``: every config compiled; the numbers are exact;
- ``assumed``: judged, but with assumptions (listed in ``"assumptions"``, e.g. pointer dtypes
  from ``--assume-dtype``); the numbers hold only if the assumptions do;
- ``no_launchable``: judged, and on some target no config launches (each GPU autotunes over
  the configs that launch on it, so one with none is broken whatever launches elsewhere);
- ``needs_spec``: the launch spec lacks parameter types or values (named, with a stanza);
- ``unresolved``: the configs (or the kernel itself) could not be resolved statically;
- ``spec_suspect``: compiled, but the numbers show the launch spec is probably wrong (SMEM flat
  across ``num_stages`` in a pipelined kernel, no SMEM with a ``tl.dot``, every config
  rejected by the kernel's source or a ``static_assert``): no config is said to launch or not;
- ``compile_crashed``: the compiler itself failed on some config (an MLIR pass error, a
  Python exception inside Triton, a dying process): nothing is proved for that config, and
  it is never read as "cannot launch";
- ``internal_error``: a bug of ours; the traceback is written to a file (``errors.py``).

``Report.exit_code`` is the only place an exit code is decided for check, diff and apply
(black's ``Report.return_code``); ``cli.py`` only hands it on.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass

from autotune_rewrite.errors import ExitCode


class Status(str, enum.Enum):
    JUDGED = "judged"
    ASSUMED = "assumed"
    NO_LAUNCHABLE = "no_launchable"
    NEEDS_SPEC = "needs_spec"
    UNRESOLVED = "unresolved"
    SPEC_SUSPECT = "spec_suspect"
    COMPILE_CRASHED = "compile_crashed"
    INTERNAL_ERROR = "internal_error"

    @property
    def judged(self) -> bool:
        """The compiler's verdicts for this kernel are complete (exact, or exact under listed
        assumptions): a CI gate may rely on them."""
        return self in _JUDGED


_JUDGED = frozenset({Status.JUDGED, Status.ASSUMED, Status.NO_LAUNCHABLE})


class Reason(str, enum.Enum):
    """Why a kernel was not judged, finer than its status (a code; the words are in output/)."""

    CONFIGS_UNRESOLVED = "configs_unresolved"  # detail: the locator's reason
    CONFIGS_EMPTY = "configs_empty"
    # detail: the loader's message; or missing: the globals it could not provide that a compile
    # needed, places: where each is bound or read ("file:line")
    KERNEL_NOT_ISOLATED = "kernel_not_isolated"
    # missing: Triton modules or names the kernel uses that the installed Triton lacks (TLX, removed APIs),
    # places: where each is imported, detail: the installed Triton's version
    TRITON_MODULE_ABSENT = "triton_module_absent"
    NO_SPEC = "no_spec"  # no launch spec at all
    MISSING_SPEC_VALUES = "missing_spec_values"  # missing: the parameters, stanza: the tables, detail: the file they go in
    SPEC_PROBABLY_WRONG = "spec_probably_wrong"  # the report's ``suspicions`` say why (check/spec_sanity.py)
    COMPILE_CRASHED = "compile_crashed"  # detail: the compiler's message
    INTERNAL_ERROR = "internal_error"  # detail: the exception, traceback_file: where it went


_STATUS_OF = {
    Reason.CONFIGS_UNRESOLVED: Status.UNRESOLVED,
    Reason.CONFIGS_EMPTY: Status.UNRESOLVED,
    Reason.KERNEL_NOT_ISOLATED: Status.UNRESOLVED,
    Reason.TRITON_MODULE_ABSENT: Status.UNRESOLVED,
    Reason.NO_SPEC: Status.NEEDS_SPEC,
    Reason.MISSING_SPEC_VALUES: Status.NEEDS_SPEC,
    Reason.SPEC_PROBABLY_WRONG: Status.SPEC_SUSPECT,
    Reason.COMPILE_CRASHED: Status.COMPILE_CRASHED,
    Reason.INTERNAL_ERROR: Status.INTERNAL_ERROR,
}


@dataclass(frozen=True)
class Problem:
    """Why a kernel was not judged, as data: a reason code plus what belongs to it."""

    reason: Reason
    detail: str = ""  # the underlying tool's own message (locator, loader, compiler, exception)
    missing: tuple[str, ...] = ()  # MISSING_SPEC_VALUES: parameters without a type or value; KERNEL_NOT_ISOLATED: globals
    stanza: str = ""  # MISSING_SPEC_VALUES: the ready-to-paste settings table(s) for the site
    traceback_file: str | None = None  # INTERNAL_ERROR
    places: tuple[str, ...] = ()  # KERNEL_NOT_ISOLATED: "file:line" of each global in ``missing``

    @property
    def status(self) -> Status:
        return _STATUS_OF[self.reason]


@dataclass(frozen=True)
class Assumption:
    """One fact the numbers rest on that nobody stated: ``x_ptr`` is ``*bf16`` (--assume-dtype)."""

    parameter: str
    value: str
    source: str


@dataclass(frozen=True)
class KernelOutcome:
    kernel: str  # site ident, path::name
    spec: str | None  # the launch spec's name; None when no spec was reached
    status: Status


@dataclass(frozen=True)
class Report:
    """A run's outcomes and the exit code they ask for.

    ``found``: some judged config cannot launch, or the variant found a change (the thing a CI
    gate looks for). ``gate``: whether ``found`` fails the run (check: always; diff: with
    ``--check``; apply: always, but there only a change that could not be built is found). ``strict``: any kernel
    that was not judged fails the run too."""

    outcomes: tuple[KernelOutcome, ...]
    found: bool = False
    gate: bool = True
    strict: bool = False

    @property
    def judged(self) -> tuple[KernelOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status.judged)

    @property
    def unjudged(self) -> tuple[KernelOutcome, ...]:
        return tuple(o for o in self.outcomes if not o.status.judged)

    @property
    def counts(self) -> dict[Status, int]:
        """Kernels per status, in the order of ``Status``."""
        c = Counter(o.status for o in self.outcomes)
        return {s: c[s] for s in Status if c[s]}

    @property
    def internal_errors(self) -> tuple[KernelOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status is Status.INTERNAL_ERROR)

    @property
    def exit_code(self) -> ExitCode:
        """2 on any internal error; 1 when the gate finds something or --strict finds a kernel
        that was not judged; else 0."""
        if self.internal_errors:
            return ExitCode.ERROR
        if (self.gate and self.found) or (self.strict and self.unjudged):
            return ExitCode.FOUND
        return ExitCode.OK


__all__ = ["Assumption", "KernelOutcome", "Problem", "Reason", "Report", "Status"]

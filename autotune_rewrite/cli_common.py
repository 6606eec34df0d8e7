"""What every command of the command line shares: the flags several take, the output formats,
the help layout, and the two ways a command ends on an error (exit 2, one line)."""

from __future__ import annotations

import enum
from typing import Annotated, List, Optional

import typer
from typer.core import TyperCommand, TyperGroup

from autotune_rewrite import interrupts, output
from autotune_rewrite.output.explain_rewrite import error_text
from autotune_rewrite.errors import ExitCode, UserError

EXIT_CODES_HELP = (
    "Exit codes: 0 = nothing to change / every config can launch; "
    "1 = changes found / some config cannot launch (diff: with --check), or with --strict a kernel "
    "that was not judged; 2 = usage, configuration or internal error."
)
STRICT_HELP = "Exit 1 when some kernel was not judged (needs a spec, unresolved configs, compiler crash)."


class Color(str, enum.Enum):
    auto = "auto"
    always = "always"
    never = "never"


def set_color(value: Optional[Color]) -> Optional[Color]:
    if value is not None:
        output.set_color(value.value)
    return value


AssumeOption = Annotated[Optional[List[str]], typer.Option(
    "--assume", metavar="NAME=VALUE",
    help="Assume this value for every kernel parameter NAME the code does not give (over the settings' "
         "assume table); a TOML value, a list is a sweep: HEAD_DIM=128, K=[64,128]. Repeatable.")]
ExactOption = Annotated[bool, typer.Option(
    "--exact", help="Assume nothing the code or the settings do not state: a kernel that would need an "
                    "assumption is needs_spec.")]
ChangedSinceOption = Annotated[Optional[str], typer.Option(
    "--changed-since", metavar="REF",
    help="Judge only the sites whose inputs (kernel source and the files it is cut from, decorator and "
         "configs and what they read, launch sites and their callers, the settings table) changed between "
         "this git ref and the working tree; e.g. origin/main in a pull-request job. A ref that names no "
         "commit: exit 2.")]
UnseenOption = Annotated[bool, typer.Option(
    "--allow-unseen-launches", help="v3: rewrite even when some use of the kernel may launch it where the tool "
                                    "cannot follow (getattr, a registry, *args); you pass bs_bucket there yourself.")]


ExecutorOption = Annotated[Optional[str], typer.Option(
    "--executor", metavar="NAME",
    help="Where the compiles that are not cached run: local (the process pool, default) or dask (a Dask "
         "distributed cluster, see --address; pip install 'autotune-rewrite[farm]'). Over the settings' check table.")]
AddressOption = Annotated[Optional[str], typer.Option(
    "--address", metavar="URL",
    help="--executor dask: the scheduler, e.g. tcp://10.0.0.5:8786 (else the settings, else $DASK_SCHEDULER_ADDRESS). "
         "Unreachable: exit 2, unless --fallback local.")]
FallbackOption = Annotated[Optional[str], typer.Option(
    "--fallback", metavar="WHERE",
    help="--executor dask: local = compile on the local pool when the scheduler cannot be reached or is lost "
         "mid-run; none (default) = exit 2.")]
CompileTimeoutOption = Annotated[Optional[str], typer.Option(
    "--compile-timeout", metavar="SECONDS",
    help="Seconds one config's compile may take on the local pool (default 120, or the settings' check table; "
         "none = no limit). Past it the config is not known, reported with the time reached; the kernel is "
         "judged on its other configs.")]
CompileMemoryOption = Annotated[Optional[str], typer.Option(
    "--compile-memory", metavar="MB",
    help="Megabytes of memory one config's compile (and its ptxas) may take on the local pool (default "
         "4096, or the settings' check table; none = no limit). A compile that runs out is not known.")]
InlineOption = Annotated[Optional[bool], typer.Option(
    "--inline-configs/--no-inline-configs", show_default=False,
    help="Where no exact edit of the list the configs are written in exists (a generator, a list shared "
         "with another kernel), replace configs= with a literal list, removing helpers and imports left "
         "unused; default: the setting variants.inline_configs, else refuse that kernel and say why.")]


EnvOption = Annotated[Optional[List[str]], typer.Option(
    "--env", metavar="NAME=VALUE",
    help="What os.environ.get(\"NAME\") answers in the scanned code (over the settings' env table; "
         "unset variables read as their default). Repeatable.")]


def env_values(given: Optional[List[str]]) -> list:
    from autotune_rewrite.settings import parse_env

    return [parse_env(text) for text in given or ()]


def assume_values(given: Optional[List[str]]) -> list:
    from autotune_rewrite.settings import parse_assume

    return [parse_assume(text) for text in given or ()]


# On every command too, so `check . --color never` works as well as `--color never check .`.
ColorOption = Annotated[Optional[Color], typer.Option(
    "--color", metavar="WHEN", callback=set_color, is_eager=True,
    help="Colour on stderr: auto, always or never (NO_COLOR is respected).")]


def hide_flag_types(params):
    """Flags take no value: show none in --help (Typer would print ``<bool>`` beside ``--force``)."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


class Command(TyperCommand):
    def get_params(self, ctx):
        return hide_flag_types(super().get_params(ctx))


class Group(TyperGroup):
    def get_params(self, ctx):
        return hide_flag_types(super().get_params(ctx))


KernelOption = Annotated[Optional[str], typer.Option(
    "--kernel", metavar="NAME",
    help="Only this kernel (name, path::name, or path::name:LINE for two defs of one name; ambiguous: exit 2).")]
JobsOption = Annotated[Optional[int], typer.Option(
    "-j", "--jobs", metavar="N",
    help="Compile processes (default: the cores, fewer where free memory holds fewer at 1.5 GB each; 1 = serial).")]
AssumeDtypeOption = Annotated[Optional[str], typer.Option(
    "--assume-dtype", metavar="DTYPE",
    help="The dtype assumed for pointers whose dtype the code does not give (default bf16); listed with the verdicts.")]
StrictOption = Annotated[bool, typer.Option("--strict", help=STRICT_HELP)]


class Format(str, enum.Enum):
    table = "table"
    json = "json"


def fail(err: UserError) -> typer.Exit:
    """Bad input (usage, settings, a path): exit 2 with the one-line message."""
    output.error(error_text(err))
    return typer.Exit(int(ExitCode.ERROR))


def crash(exc: Exception, command: str) -> typer.Exit:
    """A bug of ours outside any one kernel: exit 2 (never 1, which CI reads as "found"), one
    line, the traceback in a file. An error raised while a signal unwinds the run (a cleanup
    that fails half way, a library that wraps it) is that signal, not a bug: it is raised again,
    and the run ends as interrupted (130/143)."""
    stop = interrupts.found_in(exc)
    if stop is not None:
        raise stop from None
    from autotune_rewrite.internal_errors import internal_error
    from autotune_rewrite.output.outcomes import problem_line

    output.error(problem_line(internal_error(command, exc, command)))
    return typer.Exit(int(ExitCode.ERROR))


class CheckFormat(str, enum.Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    github = "github"
    sarif = "sarif"


class DiffFormat(str, enum.Enum):
    diff = "diff"
    json = "json"


class Variant(str, enum.Enum):
    prune = "prune"
    v1 = "v1"
    v2 = "v2"
    v3 = "v3"

"""The command line: a thin shell over the pipeline stages.

Each command parses flags, calls one pipeline function, hands the result to ``output`` and
returns the exit code the result asks for. No logic lives here.

Exit codes: 0 nothing to change / all configs launch; 1 changes found / some config cannot
launch; 2 usage, configuration or internal error (nothing written).
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated, List, Optional

import typer
from typer.core import TyperCommand, TyperGroup

from autotune_rewrite import output
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


def _set_color(value: Optional[Color]) -> Optional[Color]:
    if value is not None:
        output.set_color(value.value)
    return value


# On every command too, so `check . --color never` works as well as `--color never check .`.
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


EnvOption = Annotated[Optional[List[str]], typer.Option(
    "--env", metavar="NAME=VALUE",
    help="What os.environ.get(\"NAME\") answers in the scanned code (over the settings' env table; "
         "unset variables read as their default). Repeatable.")]


def _env_values(given: Optional[List[str]]) -> list:
    from autotune_rewrite.settings import parse_env

    return [parse_env(text) for text in given or ()]


def _assume_values(given: Optional[List[str]]) -> list:
    from autotune_rewrite.settings import parse_assume

    return [parse_assume(text) for text in given or ()]


ColorOption = Annotated[Optional[Color], typer.Option(
    "--color", metavar="WHEN", callback=_set_color, is_eager=True,
    help="Colour on stderr: auto, always or never (NO_COLOR is respected).")]


def _hide_flag_types(params):
    """Flags take no value: show none in --help (Typer would print ``<bool>`` beside ``--force``)."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


class _Command(TyperCommand):
    def get_params(self, ctx):
        return _hide_flag_types(super().get_params(ctx))


class _Group(TyperGroup):
    def get_params(self, ctx):
        return _hide_flag_types(super().get_params(ctx))


app = typer.Typer(
    name="autotune-rewrite",
    cls=_Group,
    help="Find @triton.autotune configs that cannot launch on your target GPU, prove it by "
    "cross-compiling, and rewrite the decorators. " + EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class Format(str, enum.Enum):
    table = "table"
    json = "json"


def _version(value: bool) -> None:
    if value:
        from autotune_rewrite import __version__
        from autotune_rewrite.check.resources import triton_version

        output.print_version(__version__, triton_version())
        raise typer.Exit(int(ExitCode.OK))


@app.callback()
def _global(
    color: Color = typer.Option(Color.auto, "--color", metavar="WHEN", help="Colour on stderr: auto, always or never (NO_COLOR is respected)."),
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_version, help="Print the version (and Triton's) and exit."),
) -> None:
    output.set_color(color.value)


def _fail(err: UserError) -> typer.Exit:
    output.error(str(err))
    return typer.Exit(int(ExitCode.ERROR))


def _crash(exc: Exception, command: str) -> typer.Exit:
    """A bug of ours outside any one kernel: exit 2 (never 1, which CI reads as "found"), one
    line, the traceback in a file."""
    from autotune_rewrite.internal_errors import internal_error
    from autotune_rewrite.output.outcomes import problem_line

    output.error(problem_line(internal_error(command, exc, command)))
    return typer.Exit(int(ExitCode.ERROR))


@app.command(cls=_Command, epilog=EXIT_CODES_HELP)
def scan(
    path: Path = typer.Argument(..., metavar="PATH", help="A checkout, folder or file to scan."),
    fmt: Format = typer.Option(Format.table, "--format", metavar="FORMAT", help="table (stderr) or json (stdout)."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", metavar="N", help="Worker processes (default: cores; 1 = serial)."),
    exclude: Optional[List[str]] = typer.Option(None, "--exclude", metavar="GLOB", help="Glob to skip (replaces the configured list)."),
    extend_exclude: Optional[List[str]] = typer.Option(None, "--extend-exclude", metavar="GLOB", help="Glob to skip, added to the configured list."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", metavar="ARCH", help="Targets that configs asking the device are resolved for (repeatable); default from settings, else sm_120."),
    env: EnvOption = None,
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """Locate every @triton.autotune site, the kernel it wraps, its configs and its launch sites.

    Never modifies anything. Exit 0 when the tree was scanned (files that do not parse or are
    not UTF-8 are listed as errors); 2 when nothing could be scanned (missing path, bad settings).
    """
    from autotune_rewrite.output import scan as scan_out
    from autotune_rewrite.locate.scan import scan as run_scan
    from autotune_rewrite.files import scope_of
    from autotune_rewrite.settings import Settings

    try:
        settings = Settings.find(path).with_exclude(exclude, extend_exclude).with_arch(arch).with_env(_env_values(env))
        root = Path(settings.root)
        with scan_out.progress_bar() as progress:
            result = run_scan(root, paths=scope_of(root, path) or None, jobs=jobs, settings=settings,
                              progress=progress)
    except UserError as err:
        raise _fail(err)
    if fmt is Format.json:
        scan_out.print_json(result)
    else:
        scan_out.print_table(result)
    # Per-file errors do not fail the scan; only "nothing could be scanned" does.
    nothing = result.files_scanned == 0 or len(result.errors) == result.files_scanned
    raise typer.Exit(int(ExitCode.ERROR if nothing and result.errors else ExitCode.OK))


class CheckFormat(str, enum.Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    github = "github"
    sarif = "sarif"


@app.command(cls=_Command, epilog=EXIT_CODES_HELP)
def check(
    path: Path = typer.Argument(..., metavar="PATH", help="A checkout, folder or file holding @triton.autotune kernels."),
    kernel: Optional[str] = typer.Option(None, "--kernel", metavar="NAME", help="Only this kernel (name, path::name, or path::name:LINE for two defs of one name; ambiguous: exit 2)."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", metavar="ARCH", help="Target: sm_80 ... sm_121 or a product (rtx-pro-6000, h200, ...). Repeatable; default from settings, else sm_120."),
    fmt: CheckFormat = typer.Option(CheckFormat.table, "--format", metavar="FORMAT", help="table (stderr), json, markdown, github annotations or sarif (SARIF 2.1.0 for code scanning) (stdout)."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", metavar="N", help="Compile processes (default: cores; 1 = serial)."),
    assume_dtype: Optional[str] = typer.Option(None, "--assume-dtype", metavar="DTYPE", help="The dtype assumed for pointers whose dtype the code does not give (default bf16); listed with the verdicts."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the compile cache."),
    strict: bool = typer.Option(False, "--strict", help=STRICT_HELP),
    assume: AssumeOption = None,
    exact: ExactOption = False,
    changed_since: ChangedSinceOption = None,
    env: EnvOption = None,
    executor: ExecutorOption = None,
    address: AddressOption = None,
    fallback: FallbackOption = None,
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """Prove which autotune configs can launch on the target GPUs: cross-compile each config, read
    shared memory, registers and spills, apply the CUDA occupancy rules."""
    from autotune_rewrite.check.check import check as run_check
    from autotune_rewrite.output import check as check_out

    # The table goes to stderr kernel by kernel as each is judged; stdout formats come whole at the end.
    streamed = fmt is CheckFormat.table
    try:
        values = _assume_values(assume)
        with check_out.progress_bar() as progress:
            result = run_check(path, kernel=kernel, archs=arch, workers=jobs, assume_dtype=assume_dtype,
                               use_cache=not no_cache, progress=progress, assume=values, exact=exact,
                               changed_since=changed_since, on_report=check_out.print_kernel if streamed else None,
                               env=_env_values(env), executor=executor, address=address, fallback=fallback)
    except UserError as err:
        raise _fail(err)
    except Exception as exc:  # noqa: BLE001
        raise _crash(exc, "check")
    if streamed:
        check_out.print_table(result, strict, streamed=True)
    elif fmt is CheckFormat.sarif:
        from autotune_rewrite.output.sarif import print_sarif

        print_sarif(result, strict)
    else:
        {CheckFormat.json: check_out.print_json, CheckFormat.markdown: check_out.print_markdown,
         CheckFormat.github: check_out.print_github}[fmt](result, strict)
    raise typer.Exit(int(result.report(strict).exit_code))


class DiffFormat(str, enum.Enum):
    diff = "diff"
    json = "json"


class Variant(str, enum.Enum):
    prune = "prune"
    v1 = "v1"
    v2 = "v2"
    v3 = "v3"


@app.command(cls=_Command, epilog=EXIT_CODES_HELP)
def diff(
    path: Path = typer.Argument(..., metavar="PATH", help="A checkout, folder or file holding @triton.autotune kernels."),
    variant: Variant = typer.Option(..., "--variant", metavar="VARIANT", help="prune: drop configs that cannot launch; v1: one config: the fastest launchable one of a bench saved on the target, else the only launchable tile at more warps (several tiles and no bench: refused, with the bench command); v2: keep the launchable configs, add that config and its num_stages+1; v3: that tile at two warp counts, keyed on a batch-size bucket (refused when a launch cannot be followed)."),
    kernel: Optional[str] = typer.Option(None, "--kernel", metavar="NAME", help="Only this kernel (name, path::name, or path::name:LINE for two defs of one name; ambiguous: exit 2)."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", metavar="ARCH", help="Target (repeatable); default from settings, else sm_120."),
    check_only: bool = typer.Option(False, "--check", help="Print the diff and exit 1 when the variant would change something, 0 when not."),
    batch_expr: Optional[str] = typer.Option(None, "--batch-expr", metavar="EXPR", help="v3: the batch size at the launch sites (a Python expression), when it cannot be inferred."),
    buckets: Optional[str] = typer.Option(None, "--buckets", metavar="EDGES", help="v3: bucket edges, e.g. 8,48 (buckets 1 / 32 / 96)."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", metavar="N", help="Compile processes (default: cores; 1 = serial)."),
    assume_dtype: Optional[str] = typer.Option(None, "--assume-dtype", metavar="DTYPE", help="The dtype assumed for pointers whose dtype the code does not give (default bf16)."),
    fmt: DiffFormat = typer.Option(DiffFormat.diff, "--format", metavar="FORMAT", help="diff (stdout) + summary (stderr), or json (stdout: decisions, evidence and the diff)."),
    strict: bool = typer.Option(False, "--strict", help=STRICT_HELP),
    assume: AssumeOption = None,
    exact: ExactOption = False,
    changed_since: ChangedSinceOption = None,
    allow_unseen: UnseenOption = False,
    env: EnvOption = None,
    executor: ExecutorOption = None,
    address: AddressOption = None,
    fallback: FallbackOption = None,
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """Show a variant's rewrite as a git-style diff on stdout (nothing is written; `git apply` takes it)."""
    from autotune_rewrite.output import check as check_out
    from autotune_rewrite.output import rewrite as rewrite_out
    from autotune_rewrite.rewrite.bucket import parse_buckets
    from autotune_rewrite.rewrite.diff import run_rewrites

    try:
        edges = parse_buckets(buckets) if buckets is not None else None
        values = _assume_values(assume)
        with check_out.progress_bar() as progress:  # stderr, only on a terminal
            run = run_rewrites(path, variant.value, kernel=kernel, archs=arch, batch_expr=batch_expr, buckets=edges,
                               workers=jobs, assume_dtype=assume_dtype, progress=progress, assume=values,
                               exact=exact, changed_since=changed_since,
                               allow_unseen_launches=allow_unseen, env=_env_values(env),
                               executor=(executor, address, fallback))
    except UserError as err:
        raise _fail(err)
    except Exception as exc:  # noqa: BLE001
        raise _crash(exc, "diff")
    report = run.report(gate=check_only, strict=strict)
    if fmt is DiffFormat.json:
        rewrite_out.print_json(run, report)
    else:
        rewrite_out.print_diff(run)
        rewrite_out.print_summary(run, report)
    raise typer.Exit(int(report.exit_code))


@app.command(cls=_Command, epilog=EXIT_CODES_HELP)
def apply(
    path: Path = typer.Argument(..., metavar="PATH", help="A folder or file inside a git checkout."),
    variant: Optional[Variant] = typer.Option(None, "--variant", metavar="VARIANT", help="The variant to build (see `diff --help`)."),
    all_variants: bool = typer.Option(False, "--all-variants", help="One branch per variant (prune, v1, v2, v3)."),
    kernel: Optional[str] = typer.Option(None, "--kernel", metavar="NAME", help="Only this kernel (name, path::name, or path::name:LINE for two defs of one name; ambiguous: exit 2)."),
    base: str = typer.Option("HEAD", "--base", metavar="COMMIT", help="Commit the branches start from."),
    force: bool = typer.Option(False, "--force", help="Replace branches of the same name."),
    out_dir: Optional[Path] = typer.Option(None, "--out-dir", metavar="DIR", help="Where to write PR bodies (default: <git dir>/autotune-rewrite/pr)."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", metavar="ARCH", help="Target (repeatable); default from settings, else sm_120."),
    batch_expr: Optional[str] = typer.Option(None, "--batch-expr", metavar="EXPR", help="v3: the batch size at the launch sites."),
    buckets: Optional[str] = typer.Option(None, "--buckets", metavar="EDGES", help="v3: bucket edges, e.g. 8,48."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", metavar="N", help="Compile processes (default: cores; 1 = serial)."),
    assume_dtype: Optional[str] = typer.Option(None, "--assume-dtype", metavar="DTYPE", help="The dtype assumed for pointers whose dtype the code does not give (default bf16)."),
    strict: bool = typer.Option(False, "--strict", help=STRICT_HELP),
    assume: AssumeOption = None,
    exact: ExactOption = False,
    allow_unseen: UnseenOption = False,
    env: EnvOption = None,
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """Build one review-ready branch per (kernel, variant) named autotune-rewrite/<arch>/<kernel>-<variant>,
    from --base, without touching your working tree, index or HEAD. Prints each branch and its PR body file."""
    from autotune_rewrite.rewrite.apply import apply_variants
    from autotune_rewrite.output import rewrite as rewrite_out
    from autotune_rewrite.rewrite.bucket import parse_buckets

    try:
        if all_variants == (variant is not None):
            raise UserError("pass either --variant NAME or --all-variants")
        names = [v.value for v in Variant] if all_variants else [variant.value]
        edges = parse_buckets(buckets) if buckets is not None else None
        result = apply_variants(path, names, kernel=kernel, base=base, force=force, out_dir=out_dir, archs=arch,
                                batch_expr=batch_expr, buckets=edges, workers=jobs, assume_dtype=assume_dtype,
                                assume=_assume_values(assume), exact=exact, allow_unseen_launches=allow_unseen,
                                env=_env_values(env))
    except UserError as err:
        raise _fail(err)
    except Exception as exc:  # noqa: BLE001
        raise _crash(exc, "apply")
    report = result.report(strict=strict)
    rewrite_out.print_apply(result, report)
    raise typer.Exit(int(report.exit_code))


@app.command(cls=_Command, epilog=EXIT_CODES_HELP + " capture: the program's own exit code passes through; 2 when no GPU "
             "driver was usable and the program itself succeeded.",
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def capture(
    ctx: typer.Context,
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="Settings file to write or merge (default: the root's autotune-rewrite.toml, or its pyproject.toml when that holds \\[tool.autotune-rewrite])."),
    root: Optional[Path] = typer.Option(None, "--root", metavar="DIR", help="Kernel paths are relative to this folder (default: the project root of the working folder, as every command finds it)."),
    records: Optional[Path] = typer.Option(None, "--records", metavar="FILE", help="Also write every raw record and the folded result as JSON here."),
    from_tritonparse: Optional[Path] = typer.Option(None, "--from-tritonparse", metavar="TRACE", help="Run nothing: read the specs from a tritonparse trace (.ndjson, .ndjson.gz, or its folder); traced with TRITON_TRACE_LAUNCH=1 it has the int values too."),
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """Run a program with Triton's hooks installed (`capture -- python prog.py ...`) and record, for every
    autotuned kernel it launches, the launch spec `check` needs: parameter types, constexprs, int values
    (== 1 / divisible by 16) and the autotune key values seen. Same-named specs are replaced, others kept."""
    from autotune_rewrite.gpu.capture.capture import capture as run_capture
    from autotune_rewrite.output import capture as capture_out

    try:
        if from_tritonparse is not None:
            from autotune_rewrite.gpu.capture.capture import capture_trace

            if ctx.args:
                raise UserError("capture: give a program after -- or --from-tritonparse TRACE, not both")
            run = capture_trace(from_tritonparse, root=root, out=out, records_out=records)
        else:
            run = run_capture(list(ctx.args), root=root, out=out, records_out=records)
    except UserError as err:
        raise _fail(err)
    capture_out.print_summary(run)
    if run.trace and not run.result.kernels and run.result.skipped:
        raise typer.Exit(int(ExitCode.ERROR))  # e.g. every kernel outside --root: a usage error
    if run.exit_code == 0 and run.result.driver_error and not run.result.kernels:
        raise typer.Exit(int(ExitCode.ERROR))
    raise typer.Exit(run.exit_code)


@app.command("inspect-cache", cls=_Command, epilog=EXIT_CODES_HELP)
def inspect_cache(
    cache_dir: Path = typer.Argument(..., metavar="DIR", help="A Triton cache folder (TRITON_CACHE_DIR, default ~/.triton/cache), e.g. copied from a production box."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", metavar="ARCH", help="Would each kernel launch here? Repeatable; default sm_120."),
    fmt: Format = typer.Option(Format.table, "--format", metavar="FORMAT", help="table (stderr) or json (stdout)."),
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """Read a Triton cache: per compiled kernel its warps, stages, SMEM, registers and spills (cuobjdump
    on its cubin), typed parameters, the autotuner's recorded timings, and whether it launches on
    each target. Exit 1 when some kernel cannot launch on some target."""
    from autotune_rewrite.gpu.inspect_cache import inspect_cache as run_inspect
    from autotune_rewrite.output import inspect_cache as inspect_out
    from autotune_rewrite.targets import DEFAULT_TARGET, resolve_target

    try:
        targets = [resolve_target(a) for a in (arch or [DEFAULT_TARGET])]
        result = run_inspect(cache_dir, targets)
    except UserError as err:
        raise _fail(err)
    (inspect_out.print_json if fmt is Format.json else inspect_out.print_table)(result)
    raise typer.Exit(int(ExitCode.OK if result.all_launchable else ExitCode.FOUND))


@app.command(cls=_Command, epilog=EXIT_CODES_HELP)
def bench(
    path: Path = typer.Argument(..., metavar="PATH", help="The checkout or folder holding the kernel and the [tool.autotune-rewrite.bench] entry."),
    kernel: str = typer.Option(..., "--kernel", metavar="NAME", help="The autotuned kernel (name, path::name, or path::name:LINE)."),
    variant: Optional[List[Variant]] = typer.Option(None, "--variant", metavar="VARIANT", help="Variants whose configs to time (repeatable; default: all)."),
    batch: str = typer.Option("1,8,32,64,96", "--batch", metavar="SIZES", help="Batch sizes, comma-separated."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", metavar="ARCH", help="Targets the variants are decided for (default from settings, else sm_120)."),
    also: Optional[List[str]] = typer.Option(None, "--also", metavar="CONFIG", help='Another config to time, as a label, e.g. "BLOCK_T=16 w8 s3" (repeatable; counts for the exhaustive best only).'),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Folder for <kernel>.json and .png (default: <git dir>/autotune-rewrite/bench)."),
    fmt: Format = typer.Option(Format.table, "--format", metavar="FORMAT", help="table (stderr) or json (stdout); the JSON is saved either way."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", metavar="N", help="Compile processes (default: cores; 1 = serial)."),
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """A/B every config the variants would emit (plus the original ones) on the local GPU: median time
    with do_bench and CUDA graph replay per batch size, achieved bandwidth, a plot and a recommendation."""
    from autotune_rewrite.gpu.bench.bench import bench_and_save, parse_batches
    from autotune_rewrite.output import bench as bench_out
    from autotune_rewrite.output import check as check_out

    try:
        batches = parse_batches(batch)
        with check_out.progress_bar() as progress:
            result, saved = bench_and_save(path, kernel, out_dir=out, variants=[v.value for v in variant or []],
                                           batches=batches, archs=arch, workers=jobs, progress=progress,
                                           log=bench_out.log, also=also or ())
    except UserError as err:
        raise _fail(err)
    if fmt is Format.json:
        bench_out.print_json(result)
    else:
        bench_out.print_table(result, saved)
    raise typer.Exit(int(ExitCode.OK))


cache_app = typer.Typer(
    name="cache", cls=_Group, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    help="The tool's own cache of compile outcomes, kernels and scans ($AUTOTUNE_REWRITE_CACHE_DIR, default "
         "~/.cache/autotune-rewrite): what it holds, and pruning. Safe to share between CI runs (docs/ci.md).")
app.add_typer(cache_app)


@cache_app.command("stats", cls=_Command, epilog=EXIT_CODES_HELP)
def cache_stats(
    fmt: Format = typer.Option(Format.table, "--format", metavar="FORMAT", help="table (stderr) or json (stdout)."),
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """Entries and bytes per kind (outcomes, bundles, scans, smem-models), the least and most recent use,
    and the size limit in force."""
    from autotune_rewrite.cache_admin import cache_stats as run_stats
    from autotune_rewrite.output import cache as cache_out

    try:
        result = run_stats(Path.cwd())
    except UserError as err:
        raise _fail(err)
    cache_out.print_stats(result, fmt is Format.json)
    raise typer.Exit(int(ExitCode.OK))


@cache_app.command("prune", cls=_Command, epilog=EXIT_CODES_HELP)
def cache_prune(
    max_size: Optional[str] = typer.Option(None, "--max-size", metavar="SIZE", help='Evict the least recently used entries until at most SIZE remain, e.g. 2GB, 500MB (default, without --older-than: the limit in force).'),
    older_than: Optional[float] = typer.Option(None, "--older-than", metavar="DAYS", help="Remove the entries not used for DAYS days."),
    fmt: Format = typer.Option(Format.table, "--format", metavar="FORMAT", help="table (stderr) or json (stdout)."),
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """Remove entries: those unused for --older-than days, then the least recently used ones over --max-size
    (also writers' temporary files a killed run left, once an hour old). Safe while other runs use the cache."""
    from autotune_rewrite.cache_admin import cache_prune as run_prune
    from autotune_rewrite.output import cache as cache_out

    try:
        result = run_prune(Path.cwd(), max_size, older_than)
    except UserError as err:
        raise _fail(err)
    cache_out.print_prune(result, fmt is Format.json)
    raise typer.Exit(int(ExitCode.OK))


def _app() -> None:
    """The commands, with a backstop: a bug of ours in any command (scan, capture, bench, ...)
    exits 2 with one line and the traceback in a file, never Python's traceback and exit 1."""
    try:
        app()
    except Exception as exc:  # noqa: BLE001 - SystemExit (every normal exit) is not an Exception
        _crash(exc, "autotune-rewrite " + " ".join(sys.argv[1:2]))  # prints the line
        raise SystemExit(int(ExitCode.ERROR)) from None  # outside click, typer.Exit would not exit


def main() -> None:
    from autotune_rewrite import interrupts

    # SIGINT/SIGTERM: the temp folders and worktrees go, one line, exit 130/143.
    interrupts.run(_app, output.interrupted)

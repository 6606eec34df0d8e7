"""The command line: a thin shell over the pipeline stages.

Each command parses flags, calls one pipeline function, hands the result to ``output`` and
returns the exit code the result asks for. No logic lives here.

Exit codes: 0 nothing to change / all configs launch; 1 changes found / some config cannot
launch; 2 usage, configuration or internal error (nothing written).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from autotune_rewrite import interrupts, output
from autotune_rewrite.cli_cache import cache_app
from autotune_rewrite.cli_common import (
    EXIT_CODES_HELP,
    AddressOption,
    AssumeDtypeOption,
    AssumeOption,
    ChangedSinceOption,
    CheckFormat,
    Color,
    ColorOption,
    CompileMemoryOption,
    CompileTimeoutOption,
    Command,
    DiffFormat,
    EnvOption,
    ExactOption,
    ExecutorOption,
    FallbackOption,
    Format,
    Group,
    InlineOption,
    JobsOption,
    KernelOption,
    StrictOption,
    UnseenOption,
    Variant,
    assume_values,
    crash,
    env_values,
    fail,
)
from autotune_rewrite.errors import ExitCode, UserError

app = typer.Typer(
    name="autotune-rewrite",
    cls=Group,
    help="Find @triton.autotune configs that cannot launch on your target GPU, prove it by "
    "cross-compiling, and rewrite the decorators. " + EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(cache_app)


def _version(value: bool) -> None:
    if value:
        from autotune_rewrite import __version__
        from autotune_rewrite.resources import triton_version

        output.print_version(__version__, triton_version())
        raise typer.Exit(int(ExitCode.OK))


@app.callback()
def _global(
    color: Color = typer.Option(Color.auto, "--color", metavar="WHEN", help="Colour on stderr: auto, always or never (NO_COLOR is respected)."),
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_version, help="Print the version (and Triton's) and exit."),
) -> None:
    output.set_color(color.value)


@app.command(cls=Command, epilog=EXIT_CODES_HELP)
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
    from autotune_rewrite.settings import load_settings

    try:
        settings = load_settings(path).with_exclude(exclude, extend_exclude).with_arch(arch).with_env(env_values(env))
        root = Path(settings.root)
        with scan_out.progress_bar() as progress:
            result = run_scan(root, paths=scope_of(root, path) or None, jobs=jobs, settings=settings,
                              progress=progress)
    except UserError as err:
        raise fail(err)
    if fmt is Format.json:
        scan_out.print_json(result)
    else:
        scan_out.print_table(result)
    # Per-file errors do not fail the scan; only "nothing could be scanned" does.
    nothing = result.files_scanned == 0 or len(result.errors) == result.files_scanned
    raise typer.Exit(int(ExitCode.ERROR if nothing and result.errors else ExitCode.OK))


@app.command(cls=Command, epilog=EXIT_CODES_HELP)
def check(
    path: Path = typer.Argument(..., metavar="PATH", help="A checkout, folder or file holding @triton.autotune kernels."),
    kernel: KernelOption = None,
    arch: Optional[List[str]] = typer.Option(None, "--arch", metavar="ARCH", help="Target: sm_80 ... sm_121 or a product (rtx-pro-6000, h200, ...). Repeatable; default from settings, else sm_120."),
    fmt: CheckFormat = typer.Option(CheckFormat.table, "--format", metavar="FORMAT", help="table (stderr), json, markdown, github annotations or sarif (SARIF 2.1.0 for code scanning) (stdout)."),
    jobs: JobsOption = None,
    assume_dtype: AssumeDtypeOption = None,
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the compile cache."),
    strict: StrictOption = False,
    assume: AssumeOption = None,
    exact: ExactOption = False,
    changed_since: ChangedSinceOption = None,
    env: EnvOption = None,
    executor: ExecutorOption = None,
    address: AddressOption = None,
    fallback: FallbackOption = None,
    compile_timeout: CompileTimeoutOption = None,
    compile_memory: CompileMemoryOption = None,
    full: bool = typer.Option(False, "--full", help="Compile every config to the cubin. By default a config whose shared memory is over the limit of every target stops there (registers not compiled: cannot launch)."),
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """Prove which autotune configs can launch on the target GPUs: cross-compile each config, read
    shared memory, registers and spills, apply the CUDA occupancy rules."""
    from autotune_rewrite.check.check import check as run_check
    from autotune_rewrite.output import check as check_out

    # The table goes to stderr kernel by kernel as each is judged; stdout formats come whole at the end.
    streamed = fmt is CheckFormat.table
    try:
        values = assume_values(assume)
        with check_out.progress_bar() as progress:
            result = run_check(path, kernel=kernel, archs=arch, workers=jobs, assume_dtype=assume_dtype,
                               use_cache=not no_cache, progress=progress, assume=values, exact=exact,
                               changed_since=changed_since, on_report=check_out.print_kernel if streamed else None,
                               env=env_values(env), executor=executor, address=address, fallback=fallback,
                               full=full, compile_timeout=compile_timeout, compile_memory=compile_memory)
    except UserError as err:
        raise fail(err)
    except Exception as exc:  # noqa: BLE001
        raise crash(exc, "check")
    if streamed:
        check_out.print_table(result, strict, streamed=True)
    elif fmt is CheckFormat.sarif:
        from autotune_rewrite.output.sarif import print_sarif

        print_sarif(result, strict)
    elif fmt is CheckFormat.github:
        from autotune_rewrite.output.github import print_github

        print_github(result, strict)
    else:
        {CheckFormat.json: check_out.print_json, CheckFormat.markdown: check_out.print_markdown}[fmt](result, strict)
    raise typer.Exit(int(result.report(strict).exit_code))


@app.command(cls=Command, epilog=EXIT_CODES_HELP)
def diff(
    path: Path = typer.Argument(..., metavar="PATH", help="A checkout, folder or file holding @triton.autotune kernels."),
    variant: Variant = typer.Option(..., "--variant", metavar="VARIANT", help="prune: drop configs that cannot launch; v1: one config: the fastest launchable one of a bench saved on the target, else the only launchable tile at more warps (several tiles and no bench: refused, with the bench command); v2: keep the launchable configs, add that config and its num_stages+1; v3: that tile at two warp counts, keyed on a batch-size bucket (refused when a launch cannot be followed)."),
    kernel: KernelOption = None,
    arch: Optional[List[str]] = typer.Option(None, "--arch", metavar="ARCH", help="Target (repeatable); default from settings, else sm_120."),
    check_only: bool = typer.Option(False, "--check", help="Print the diff and exit 1 when the variant would change something, 0 when not."),
    batch_expr: Optional[str] = typer.Option(None, "--batch-expr", metavar="EXPR", help="v3: the batch size at the launch sites (a Python expression), when it cannot be inferred."),
    buckets: Optional[str] = typer.Option(None, "--buckets", metavar="EDGES", help="v3: bucket edges, e.g. 8,48 (buckets 1 / 32 / 96)."),
    jobs: JobsOption = None,
    assume_dtype: AssumeDtypeOption = None,
    fmt: DiffFormat = typer.Option(DiffFormat.diff, "--format", metavar="FORMAT", help="diff (stdout) + summary (stderr), or json (stdout: decisions, evidence and the diff)."),
    strict: StrictOption = False,
    assume: AssumeOption = None,
    exact: ExactOption = False,
    changed_since: ChangedSinceOption = None,
    allow_unseen: UnseenOption = False,
    inline_configs: InlineOption = None,
    env: EnvOption = None,
    executor: ExecutorOption = None,
    address: AddressOption = None,
    fallback: FallbackOption = None,
    compile_timeout: CompileTimeoutOption = None,
    compile_memory: CompileMemoryOption = None,
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """Show a variant's rewrite as a git-style diff on stdout (nothing is written; `git apply` takes it)."""
    from autotune_rewrite.output import check as check_out
    from autotune_rewrite.output import rewrite as rewrite_out
    from autotune_rewrite.rewrite.bucket import parse_buckets
    from autotune_rewrite.rewrite.diff import run_rewrites

    try:
        edges = parse_buckets(buckets) if buckets is not None else None
        values = assume_values(assume)
        with check_out.progress_bar() as progress:  # stderr, only on a terminal
            run = run_rewrites(path, variant.value, kernel=kernel, archs=arch, batch_expr=batch_expr, buckets=edges,
                               workers=jobs, assume_dtype=assume_dtype, progress=progress, assume=values,
                               exact=exact, changed_since=changed_since,
                               allow_unseen_launches=allow_unseen, env=env_values(env),
                               executor=(executor, address, fallback, compile_timeout, compile_memory),
                               inline_configs=inline_configs)
    except UserError as err:
        raise fail(err)
    except Exception as exc:  # noqa: BLE001
        raise crash(exc, "diff")
    report = run.report(gate=check_only, strict=strict)
    if fmt is DiffFormat.json:
        rewrite_out.print_json(run, report)
    else:
        rewrite_out.print_diff(run)
        rewrite_out.print_summary(run, report)
    raise typer.Exit(int(report.exit_code))


@app.command(cls=Command, epilog=EXIT_CODES_HELP)
def apply(
    path: Path = typer.Argument(..., metavar="PATH", help="A folder or file inside a git checkout."),
    variant: Optional[Variant] = typer.Option(None, "--variant", metavar="VARIANT", help="The variant to build (see `diff --help`)."),
    all_variants: bool = typer.Option(False, "--all-variants", help="One branch per variant (prune, v1, v2, v3)."),
    kernel: KernelOption = None,
    base: str = typer.Option("HEAD", "--base", metavar="COMMIT", help="Commit the branches start from."),
    force: bool = typer.Option(False, "--force", help="Replace branches of the same name."),
    out_dir: Optional[Path] = typer.Option(None, "--out-dir", metavar="DIR", help="Where to write PR bodies (default: <git dir>/autotune-rewrite/pr)."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", metavar="ARCH", help="Target (repeatable); default from settings, else sm_120."),
    batch_expr: Optional[str] = typer.Option(None, "--batch-expr", metavar="EXPR", help="v3: the batch size at the launch sites."),
    buckets: Optional[str] = typer.Option(None, "--buckets", metavar="EDGES", help="v3: bucket edges, e.g. 8,48."),
    jobs: JobsOption = None,
    assume_dtype: AssumeDtypeOption = None,
    strict: StrictOption = False,
    assume: AssumeOption = None,
    exact: ExactOption = False,
    allow_unseen: UnseenOption = False,
    inline_configs: InlineOption = None,
    group: str = typer.Option("file", "--group", metavar="GROUP", help=(
        "One branch per kernel, file (the kernels whose decorators share a file; the default) or repo, "
        "one commit per kernel inside it.")),
    env: EnvOption = None,
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """Build one review-ready branch per (kernel, variant) named autotune-rewrite/<arch>/<kernel>-<variant>,
    from --base, without touching your working tree, index or HEAD. Prints each branch and its PR body file."""
    from autotune_rewrite.apply.branches import apply_variants
    from autotune_rewrite.output import rewrite as rewrite_out
    from autotune_rewrite.rewrite.bucket import parse_buckets

    try:
        if all_variants == (variant is not None):
            raise UserError("pass either --variant NAME or --all-variants")
        names = [v.value for v in Variant] if all_variants else [variant.value]
        edges = parse_buckets(buckets) if buckets is not None else None
        result = apply_variants(path, names, kernel=kernel, base=base, force=force, out_dir=out_dir, archs=arch,
                                batch_expr=batch_expr, buckets=edges, workers=jobs, assume_dtype=assume_dtype,
                                assume=assume_values(assume), exact=exact, allow_unseen_launches=allow_unseen,
                                env=env_values(env), inline_configs=inline_configs, group=group)
    except UserError as err:
        raise fail(err)
    except Exception as exc:  # noqa: BLE001
        raise crash(exc, "apply")
    report = result.report(strict=strict)
    rewrite_out.print_apply(result, report)
    raise typer.Exit(int(report.exit_code))


@app.command(cls=Command, epilog=EXIT_CODES_HELP + " capture: the program's own exit code passes through; 2 when no GPU "
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
        raise fail(err)
    capture_out.print_summary(run)
    if run.trace and not run.result.kernels and run.result.skipped:
        raise typer.Exit(int(ExitCode.ERROR))  # e.g. every kernel outside --root: a usage error
    if run.exit_code == 0 and run.result.driver_error and not run.result.kernels:
        raise typer.Exit(int(ExitCode.ERROR))
    raise typer.Exit(run.exit_code)


@app.command("inspect-cache", cls=Command, epilog=EXIT_CODES_HELP)
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
        raise fail(err)
    (inspect_out.print_json if fmt is Format.json else inspect_out.print_table)(result)
    raise typer.Exit(int(ExitCode.OK if result.all_launchable else ExitCode.FOUND))


@app.command(cls=Command, epilog=EXIT_CODES_HELP)
def bench(
    path: Path = typer.Argument(..., metavar="PATH", help="The checkout or folder holding the kernel and the [tool.autotune-rewrite.bench] entry."),
    kernel: str = typer.Option(..., "--kernel", metavar="NAME", help="The autotuned kernel (name, path::name, or path::name:LINE)."),
    variant: Optional[List[Variant]] = typer.Option(None, "--variant", metavar="VARIANT", help="Variants whose configs to time (repeatable; default: all)."),
    batch: str = typer.Option("1,8,32,64,96", "--batch", metavar="SIZES", help="Batch sizes, comma-separated."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", metavar="ARCH", help="Targets the variants are decided for (default from settings, else sm_120)."),
    also: Optional[List[str]] = typer.Option(None, "--also", metavar="CONFIG", help='Another config to time, as a label, e.g. "BLOCK_T=16 w8 s3" (repeatable; counts for the exhaustive best only).'),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Folder for <kernel>.json and .png (default: <git dir>/autotune-rewrite/bench)."),
    fmt: Format = typer.Option(Format.table, "--format", metavar="FORMAT", help="table (stderr) or json (stdout); the JSON is saved either way."),
    jobs: JobsOption = None,
    color: ColorOption = None,  # noqa: ARG001 - applied by its callback
) -> None:
    """A/B every config the variants would emit (plus the original ones) on the local GPU: median time
    with do_bench and CUDA graph replay per batch size, achieved bandwidth, a plot and a recommendation."""
    from autotune_rewrite.bench.bench import bench_and_save, parse_batches
    from autotune_rewrite.output import bench as bench_out
    from autotune_rewrite.output import check as check_out

    try:
        batches = parse_batches(batch)
        with check_out.progress_bar() as progress:
            result, saved = bench_and_save(path, kernel, out_dir=out, variants=[v.value for v in variant or []],
                                           batches=batches, archs=arch, workers=jobs, progress=progress,
                                           log=bench_out.log, also=also or ())
    except UserError as err:
        raise fail(err)
    if fmt is Format.json:
        bench_out.print_json(result)
    else:
        bench_out.print_table(result, saved)
    raise typer.Exit(int(ExitCode.OK))


def _app() -> None:
    """The commands, with a backstop: a bug of ours in any command (scan, capture, bench, ...)
    exits 2 with one line and the traceback in a file, never Python's traceback and exit 1."""
    try:
        app()
    except Exception as exc:  # noqa: BLE001 - SystemExit (every normal exit) is not an Exception
        crash(exc, "autotune-rewrite " + " ".join(sys.argv[1:2]))  # prints the line (or raises the signal)
        raise SystemExit(int(ExitCode.ERROR)) from None  # outside click, typer.Exit would not exit


def main() -> None:
    # SIGINT/SIGTERM: the temp folders and worktrees go, one line, exit 130/143.
    interrupts.run(_app, output.interrupted)

"""The command line: a thin shell over the pipeline stages.

Each command parses flags, calls one pipeline function, hands the result to ``output`` and
returns the exit code the result asks for. No logic lives here.

Exit codes: 0 nothing to change / all configs launch; 1 changes found / some config cannot
launch; 2 usage, configuration or internal error (nothing written).
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import List, Optional

import typer

from autotune_rewrite import output
from autotune_rewrite.errors import ExitCode, UserError

EXIT_CODES_HELP = (
    "Exit codes: 0 = nothing to change / every config can launch; "
    "1 = changes found / some config cannot launch; 2 = usage, configuration or internal error."
)

app = typer.Typer(
    name="autotune-rewrite",
    help="Find @triton.autotune configs that cannot launch on your target GPU, prove it by "
    "cross-compiling, and rewrite the decorators. " + EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class Color(str, enum.Enum):
    auto = "auto"
    always = "always"
    never = "never"


class Format(str, enum.Enum):
    table = "table"
    json = "json"


@app.callback()
def _global(
    color: Color = typer.Option(Color.auto, "--color", help="Colour on stderr (NO_COLOR is respected)."),
) -> None:
    output.set_color(color.value)


def _fail(err: UserError) -> typer.Exit:
    output.error(str(err))
    return typer.Exit(int(ExitCode.ERROR))


@app.command(epilog=EXIT_CODES_HELP)
def scan(
    path: Path = typer.Argument(..., help="A checkout, folder or file to scan."),
    fmt: Format = typer.Option(Format.table, "--format", help="table (stderr) or json (stdout)."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", help="Worker processes (default: cores; 1 = serial)."),
    exclude: Optional[List[str]] = typer.Option(None, "--exclude", help="Glob to skip (replaces the configured list)."),
    extend_exclude: Optional[List[str]] = typer.Option(None, "--extend-exclude", help="Glob to skip, added to the configured list."),
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
        settings = Settings.find(path).with_exclude(exclude, extend_exclude)
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


@app.command(epilog=EXIT_CODES_HELP)
def check(
    path: Path = typer.Argument(..., help="A checkout, folder or file holding @triton.autotune kernels."),
    kernel: Optional[str] = typer.Option(None, "--kernel", help="Only this kernel (name or path::name)."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", help="Target: sm_80 ... sm_121 or a product (rtx-pro-6000, h200, ...). Repeatable; default from settings, else sm_120."),
    fmt: CheckFormat = typer.Option(CheckFormat.table, "--format", help="table (stderr), json, markdown or github annotations (stdout)."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", help="Compile processes (default: cores; 1 = serial)."),
    assume_dtype: Optional[str] = typer.Option(None, "--assume-dtype", help="Fill missing pointer types with this dtype (e.g. bf16); those numbers are labelled assumed."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the compile cache."),
) -> None:
    """Prove which autotune configs can launch on the target GPUs: cross-compile each config, read
    shared memory, registers and spills, apply the CUDA occupancy rules."""
    from autotune_rewrite.check.check import check as run_check
    from autotune_rewrite.output import check as check_out

    try:
        with check_out.progress_bar() as progress:
            result = run_check(path, kernel=kernel, archs=arch, workers=jobs, assume_dtype=assume_dtype,
                               use_cache=not no_cache, progress=progress)
    except UserError as err:
        raise _fail(err)
    {CheckFormat.json: check_out.print_json, CheckFormat.markdown: check_out.print_markdown,
     CheckFormat.github: check_out.print_github}.get(fmt, check_out.print_table)(result)
    raise typer.Exit(int(result.exit_code))


class DiffFormat(str, enum.Enum):
    diff = "diff"
    json = "json"


class Variant(str, enum.Enum):
    prune = "prune"
    v1 = "v1"
    v2 = "v2"
    v3 = "v3"


@app.command(epilog=EXIT_CODES_HELP)
def diff(
    path: Path = typer.Argument(..., help="A checkout, folder or file holding @triton.autotune kernels."),
    variant: Variant = typer.Option(..., "--variant", help="prune: drop configs that cannot launch; v1: one config, the launchable tile at the highest occupancy reachable by raising num_warps; v2: keep the launchable configs, add that config and its num_stages+1; v3: that tile at two warp counts, keyed on a batch-size bucket."),
    kernel: Optional[str] = typer.Option(None, "--kernel", help="Only this kernel (name or path::name)."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", help="Target (repeatable); default from settings, else sm_120."),
    check_only: bool = typer.Option(False, "--check", help="Print the diff and exit 1 when the variant would change something, 0 when not."),
    batch_expr: Optional[str] = typer.Option(None, "--batch-expr", help="v3: the batch size at the launch sites (a Python expression), when it cannot be inferred."),
    buckets: Optional[str] = typer.Option(None, "--buckets", help="v3: bucket edges, e.g. 8,48 (buckets 1 / 32 / 96)."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", help="Compile processes (default: cores; 1 = serial)."),
    assume_dtype: Optional[str] = typer.Option(None, "--assume-dtype", help="Fill missing pointer types with this dtype (numbers labelled assumed)."),
    fmt: DiffFormat = typer.Option(DiffFormat.diff, "--format", help="diff (stdout) + summary (stderr), or json (stdout: decisions, evidence and the diff)."),
) -> None:
    """Show a variant's rewrite as a git-style diff on stdout (nothing is written; `git apply` takes it)."""
    from autotune_rewrite.output import check as check_out
    from autotune_rewrite.output import rewrite as rewrite_out
    from autotune_rewrite.rewrite.bucket import parse_buckets
    from autotune_rewrite.rewrite.diff import run_rewrites

    try:
        edges = parse_buckets(buckets) if buckets is not None else None
        with check_out.progress_bar() as progress:  # stderr, only on a terminal
            run = run_rewrites(path, variant.value, kernel=kernel, archs=arch, batch_expr=batch_expr, buckets=edges,
                               workers=jobs, assume_dtype=assume_dtype, progress=progress)
    except UserError as err:
        raise _fail(err)
    if fmt is DiffFormat.json:
        rewrite_out.print_json(run)
    else:
        rewrite_out.print_diff(run)
        rewrite_out.print_summary(run)
    raise typer.Exit(int(run.exit_code) if check_only else int(ExitCode.OK))


@app.command(epilog=EXIT_CODES_HELP)
def apply(
    path: Path = typer.Argument(..., help="A folder or file inside a git checkout."),
    variant: Optional[Variant] = typer.Option(None, "--variant", help="The variant to build (see `diff --help`)."),
    all_variants: bool = typer.Option(False, "--all-variants", help="One branch per variant (prune, v1, v2, v3)."),
    kernel: Optional[str] = typer.Option(None, "--kernel", help="Only this kernel (name or path::name)."),
    base: str = typer.Option("HEAD", "--base", help="Commit the branches start from."),
    force: bool = typer.Option(False, "--force", help="Replace branches of the same name."),
    out_dir: Optional[Path] = typer.Option(None, "--out-dir", help="Where to write PR bodies (default: <git dir>/autotune-rewrite/pr)."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", help="Target (repeatable); default from settings, else sm_120."),
    batch_expr: Optional[str] = typer.Option(None, "--batch-expr", help="v3: the batch size at the launch sites."),
    buckets: Optional[str] = typer.Option(None, "--buckets", help="v3: bucket edges, e.g. 8,48."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", help="Compile processes (default: cores; 1 = serial)."),
    assume_dtype: Optional[str] = typer.Option(None, "--assume-dtype", help="Fill missing pointer types with this dtype."),
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
                                batch_expr=batch_expr, buckets=edges, workers=jobs, assume_dtype=assume_dtype)
    except UserError as err:
        raise _fail(err)
    rewrite_out.print_apply(result)
    raise typer.Exit(int(ExitCode.OK))


@app.command(epilog=EXIT_CODES_HELP + " capture: the program's own exit code passes through; 2 when no GPU "
             "driver was usable and the program itself succeeded.",
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def capture(
    ctx: typer.Context,
    out: Optional[Path] = typer.Option(None, "--out", help="Settings file to write or merge (default: the root's autotune-rewrite.toml, or its pyproject.toml when that holds \\[tool.autotune-rewrite])."),
    root: Optional[Path] = typer.Option(None, "--root", help="Kernel paths are relative to this folder (default: the project root of the working folder, as every command finds it)."),
    records: Optional[Path] = typer.Option(None, "--records", help="Also write every raw record and the folded result as JSON here."),
) -> None:
    """Run a program with Triton's hooks installed (`capture -- python prog.py ...`) and record, for every
    autotuned kernel it launches, the launch spec `check` needs: parameter types, constexprs, int values
    (== 1 / divisible by 16) and the autotune key values seen. Same-named specs are replaced, others kept."""
    from autotune_rewrite.gpu.capture.capture import capture as run_capture
    from autotune_rewrite.output import capture as capture_out

    try:
        run = run_capture(list(ctx.args), root=root, out=out, records_out=records)
    except UserError as err:
        raise _fail(err)
    capture_out.print_summary(run)
    if run.exit_code == 0 and run.result.driver_error and not run.result.kernels:
        raise typer.Exit(int(ExitCode.ERROR))
    raise typer.Exit(run.exit_code)


@app.command("inspect-cache", epilog=EXIT_CODES_HELP)
def inspect_cache(
    cache_dir: Path = typer.Argument(..., help="A Triton cache folder (TRITON_CACHE_DIR, default ~/.triton/cache), e.g. copied from a production box."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", help="Would each kernel launch here? Repeatable; default sm_120."),
    fmt: Format = typer.Option(Format.table, "--format", help="table (stderr) or json (stdout)."),
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


@app.command(epilog=EXIT_CODES_HELP)
def bench(
    path: Path = typer.Argument(..., help="The checkout or folder holding the kernel and the [tool.autotune-rewrite.bench] entry."),
    kernel: str = typer.Option(..., "--kernel", help="The autotuned kernel (name or path::name)."),
    variant: Optional[List[Variant]] = typer.Option(None, "--variant", help="Variants whose configs to time (repeatable; default: all)."),
    batch: str = typer.Option("1,8,32,64,96", "--batch", help="Batch sizes, comma-separated."),
    arch: Optional[List[str]] = typer.Option(None, "--arch", help="Targets the variants are decided for (default from settings, else sm_120)."),
    also: Optional[List[str]] = typer.Option(None, "--also", help='Another config to time, as a label, e.g. "BLOCK_T=16 w8 s3" (repeatable; counts for the exhaustive best only).'),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for <kernel>.json and .png (default: <git dir>/autotune-rewrite/bench)."),
    fmt: Format = typer.Option(Format.table, "--format", help="table (stderr) or json (stdout); the JSON is saved either way."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", help="Compile processes (default: cores; 1 = serial)."),
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


def main() -> None:
    app()

"""``autotune-rewrite cache``: what the tool's own cache holds, and pruning it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from autotune_rewrite.cli_common import EXIT_CODES_HELP, ColorOption, Command, Format, Group, fail
from autotune_rewrite.errors import ExitCode, UserError

cache_app = typer.Typer(
    name="cache", cls=Group, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    help="The tool's own cache of compile outcomes, kernels and scans ($AUTOTUNE_REWRITE_CACHE_DIR, default "
         "~/.cache/autotune-rewrite): what it holds, and pruning. Safe to share between CI runs (docs/ci.md).")


@cache_app.command("stats", cls=Command, epilog=EXIT_CODES_HELP)
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
        raise fail(err)
    cache_out.print_stats(result, fmt is Format.json)
    raise typer.Exit(int(ExitCode.OK))


@cache_app.command("prune", cls=Command, epilog=EXIT_CODES_HELP)
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
        raise fail(err)
    cache_out.print_prune(result, fmt is Format.json)
    raise typer.Exit(int(ExitCode.OK))

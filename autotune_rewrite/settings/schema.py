"""Every key of ``[tool.autotune-rewrite]``, as typed frozen data (one field per key).

The field's metadata (``reader.key``) says how the key is read, its TOML type and what it means;
``read_section`` (and the settings table of docs/settings.md, checked by a test) are derived
from these fields. A new key is one field here plus, when no reader fits, a small reader in
``reader.py``.
Values are kept as tuples of pairs rather than dicts so ``Settings`` stays hashable and picklable.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Union

from autotune_rewrite.constexpr_values import NONE, read_constexpr
from autotune_rewrite.triton_types import normalize_type
from autotune_rewrite.errors import UserError
from autotune_rewrite.sizes import parse_size
from autotune_rewrite.settings.reader import (
    Reader,
    Where,
    array_of,
    integer,
    key,
    keyed,
    keys_of,
    pattern,
    scalar,
    scalar_or_list,
    section,
    string,
    strings,
    table_of,
)

DEFAULT_ARCH = ("sm_120",)
TOOL_FILE = "autotune-rewrite.toml"

Scalar = Union[bool, int, float, str]
AssumeValue = Union[Scalar, tuple[Scalar, ...]]


# --------------------------------------------------------------------------- readers of this schema
def _targets(value: Any, where: Where) -> tuple[str, ...]:
    from autotune_rewrite.targets import resolve_target  # the tables of architectures, no triton

    names = strings(value, where)
    if not names:
        raise where.error("must name at least one target, e.g. arch = [\"sm_120\"]")
    for i, name in enumerate(names):
        try:
            resolve_target(name)
        except UserError as exc:
            raise where.at(i).error(f"= {name!r}: {exc}") from None
    return names


def _triton_type(value: Any, where: Where) -> str:
    if isinstance(value, str) and value.strip().lower() == "none":
        name = where.key.rsplit(".", 1)[-1]
        raise where.error(f"= {value!r}: a None argument is a constexpr; write constexprs = {{ {name} = \"{NONE}\" }}")
    ty = normalize_type(value) if isinstance(value, str) else None
    if ty is None:
        raise where.error(f"= {value!r} is not a Triton type (e.g. \"*bf16\", \"i32\", \"fp32\", "
                          "\"(*fp16, i32)\", \"tensordesc<bf16[64, 64]>\")")
    return ty


def _constexpr(value: Any, where: Where) -> Any:
    try:
        return read_constexpr(scalar(value, where))
    except ValueError as exc:
        raise where.error(str(exc)) from None


def _bucket_edges(value: Any, where: Where) -> tuple[int, ...]:
    edges = value if isinstance(value, list) else None
    if (not edges or any(isinstance(e, bool) or not isinstance(e, int) or e < 1 for e in edges)
            or edges != sorted(set(edges))):
        raise where.error(f"must be increasing positive integers, e.g. buckets = [8, 48], got {value!r}")
    return tuple(edges)


def _flag(value: Any, where: Where) -> bool:
    if not isinstance(value, bool):
        raise where.error(f"must be true or false, got {value!r}")
    return value


def _spec_entries(value: Any, where: Where) -> tuple["SpecEntry", ...]:
    entries = array_of(SpecEntry)(value, where)
    seen: set[tuple[str, str]] = set()
    for i, entry in enumerate(entries):
        if (entry.kernel, entry.spec) in seen:
            raise where.at(i).error(f"kernel {entry.kernel} has two specs named '{entry.spec}'; "
                                    "name each spec differently")
        seen.add((entry.kernel, entry.spec))
    return entries


def _size(value: Any, where: Where) -> int:
    try:
        return parse_size(value)
    except (ValueError, AttributeError):
        raise where.error(f"= {value!r} is not a size; write e.g. max_size = \"2GB\" (\"500MB\", \"1GiB\", "
                          "bytes; \"none\" for no limit)") from None


def _one_of(*choices: str) -> Reader:
    def read(value: Any, where: Where) -> str:
        if value not in choices:
            raise where.error(f"= {value!r}: must be one of {', '.join(repr(c) for c in choices)}")
        return value

    return read


def _scheduler_address(value: Any, where: Where) -> str:
    address = string(value, where).strip()
    if not re.fullmatch(r"[a-z+]+://\S+", address):
        raise where.error(f"= {value!r} is not a Dask scheduler address; write e.g. address = \"tcp://10.0.0.5:8786\"")
    return address


# A compile's time budget (``compile/budget``): ~10x the slowest config of the corpus's kernels
# (14 s on 2 cores), so a normal compile never meets it and one config cannot hang a CI job.
DEFAULT_COMPILE_TIMEOUT_S = 120.0
# A compile's memory budget, as its data limit (``RLIMIT_DATA``; ``ptxas`` has its own): a worker
# holds ~20 MB (Triton loaded), ptxas for the corpus's configs under 0.5 GB; two ptxas at 7-8 GB
# took a 2-core runner's 23 GB.
DEFAULT_COMPILE_MEMORY_MB = 4096


def _megabytes(value: Any, where: Where) -> int | None:
    """Megabytes > 0, or "none" (no limit)."""
    if isinstance(value, str) and value.strip().lower() == "none":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise where.error(f"= {value!r} is not a memory budget; write megabytes, e.g. compile_memory = 8192, "
                          "or \"none\" for no limit")
    return value


def _seconds(value: Any, where: Where) -> float | None:
    """Seconds > 0, or "none" (no limit)."""
    if isinstance(value, str) and value.strip().lower() == "none":
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if isinstance(value, bool) or not seconds > 0:
        raise where.error(f"= {value!r} is not a time budget; write seconds, e.g. compile_timeout = 300, "
                          "or \"none\" for no limit")
    return seconds


_KERNEL = pattern(r".+::.+", '"path/to/file.py::kernel_name"')
_MODULE_FUNCTION = pattern(r"[^:]+:[^:]+", '"module:function"')


# --------------------------------------------------------------------------- the tables
@dataclass(frozen=True)
class FarmChoice:
    """Where the misses are compiled: ``address`` of a Dask scheduler; ``fallback`` "local"
    compiles on the local pool when it cannot be reached or is lost mid-run."""

    address: str
    fallback: str = "none"


@dataclass(frozen=True)
class SpecEntry:
    """One ``[[tool.autotune-rewrite.kernels]]`` table: a launch spec, what a compile needs beyond the source."""

    kernel: str = field(metadata=key(_KERNEL, "str", 'the kernel, "path/to/file.py::name" from the project root'))
    spec: str = field(default="default", metadata=key(string, "str", "the spec's name (several specs per kernel)"))
    types: tuple[tuple[str, str], ...] = field(default=(), metadata=key(
        table_of(_triton_type, 'Q = "*bf16", n = "i32"'), "table str -> Triton type",
        'non-constexpr parameter types, e.g. { Q = "*bf16", n = "i32" }'))
    constexprs: tuple[tuple[str, Scalar], ...] = field(default=(), metadata=key(
        table_of(_constexpr, "BLOCK_H = 16"), "table str -> int / float / bool / str",
        'constexpr values that are not config meta-parameters; "None", "tl.float32", "torch.float16" as strings'))
    values: tuple[tuple[str, int], ...] = field(default=(), metadata=key(
        table_of(integer, "n = 2048"), "table str -> int",
        "known runtime ints: divisibility-16 / ==1 specialization as the JIT does"))


@dataclass(frozen=True)
class Variants:
    """``[tool.autotune-rewrite.variants]``: choices of the rewrite variants."""

    buckets: tuple[int, ...] | None = field(default=None, metadata=key(
        _bucket_edges, "list of int", "v3's batch-size bucket edges (`--buckets` overrides), e.g. [8, 48]"))
    inline_configs: bool = field(default=False, metadata=key(
        _flag, "bool", "where no exact edit of the written config list exists, replace `configs=` with a literal "
        "list (`--inline-configs`); default: refuse that kernel, saying why"))


@dataclass(frozen=True)
class Cache:
    """``[tool.autotune-rewrite.cache]``: the shared outcome cache (``cache_admin.py``)."""

    max_size: int | None = field(default=None, metadata=key(
        _size, "str or int", 'size limit of the cache folder, least recently used entries evicted first, e.g. "2GB" '
        '(default; "none": no limit; $AUTOTUNE_REWRITE_CACHE_MAX overrides)'))


@dataclass(frozen=True)
class CheckTable:
    """``[tool.autotune-rewrite.check]``: where the compiles run (``compile/compile_farm.py``) and
    how long one may take (``compile/budget.py``)."""

    executor: str = field(default="local", metadata=key(
        _one_of("local", "dask"), "str", '"local" (the process pool, default) or "dask": compile the cache misses on '
        "a Dask distributed cluster (`--executor` overrides)"))
    address: str | None = field(default=None, metadata=key(
        _scheduler_address, "str", 'the Dask scheduler, e.g. "tcp://10.0.0.5:8786" (`--address` overrides; '
        "else $DASK_SCHEDULER_ADDRESS)"))
    fallback: str = field(default="none", metadata=key(
        _one_of("none", "local"), "str", '"local": compile on the local pool when the scheduler cannot be reached '
        'or is lost mid-run; "none" (default): exit 2 (`--fallback` overrides)'))
    compile_timeout: float | None = field(default=DEFAULT_COMPILE_TIMEOUT_S, metadata=key(
        _seconds, "float or str", f"seconds one config's compile may take on the local pool (default "
        f"{DEFAULT_COMPILE_TIMEOUT_S:g}; \"none\": no limit): past it the config is not known, reported with the "
        "time it reached, and the kernel is judged on its other configs (`--compile-timeout` overrides)"))
    compile_memory: int | None = field(default=DEFAULT_COMPILE_MEMORY_MB, metadata=key(
        _megabytes, "int or str", f"megabytes of memory (heap and private mappings) one config's compile (and its "
        f"ptxas) may take on the local pool (default {DEFAULT_COMPILE_MEMORY_MB}; \"none\": no limit): a compile that runs out is not "
        "known, as over the time budget (`--compile-memory` overrides)"))


@dataclass(frozen=True)
class BenchEntry:
    """One kernel's entry of ``[tool.autotune-rewrite.bench]`` (see ``bench/inputs.py``)."""

    entry: str = field(metadata=key(_MODULE_FUNCTION, "str", '"module:function" building one call\'s inputs for B'))
    call: str = field(metadata=key(_MODULE_FUNCTION, "str", '"module:function", the caller that launches the kernel'))
    bytes: str | None = field(default=None, metadata=key(
        _MODULE_FUNCTION, "str", '"module:function" giving the bytes one call moves (for bandwidth)'))
    options: tuple[tuple[str, Any], ...] = field(default=(), metadata=key(
        table_of(lambda v, w: v, "heads = 128"), "table", "keyword arguments passed to entry after B"))


@dataclass(frozen=True)
class Settings:
    """The target project's ``[tool.autotune-rewrite]``, read once and passed down."""

    arch: tuple[str, ...] = field(default=DEFAULT_ARCH, metadata=key(
        _targets, "list of str", "default targets: sm_80 ... sm_121 or products (rtx-pro-6000, h200, ...); `--arch` overrides"))
    exclude: tuple[str, ...] = field(default=(), metadata=key(
        strings, "list of str", "globs skipped by the scan (`--exclude` replaces, `--extend-exclude` adds)"))
    kernels: tuple[SpecEntry, ...] = field(default=(), metadata=key(
        _spec_entries, "array of tables", "launch specs, one table per (kernel, spec); fields below",
        inner=("[]", SpecEntry)))
    variants: Variants = field(default=Variants(), metadata=key(
        section(Variants), "table", "variant choices", inner=("", Variants)))
    bench: tuple[tuple[str, BenchEntry], ...] = field(default=(), metadata=key(
        keyed(BenchEntry), "table str -> table", 'bench entries keyed by "path::name" (or the name); fields below',
        inner=(".NAME", BenchEntry)))
    assume: tuple[tuple[str, AssumeValue], ...] = field(default=(), metadata=key(
        table_of(scalar_or_list, "causal = [true, false]"), "table str -> int / float / bool / str / list of them",
        "values assumed for a parameter NAME of every kernel whose code does not give it (a list: each value a case)"))
    cache: Cache = field(default=Cache(), metadata=key(
        section(Cache), "table", "the shared compile cache", inner=("", Cache)))
    check: CheckTable = field(default=CheckTable(), metadata=key(
        section(CheckTable), "table", "where the compiles run (local pool or a Dask cluster)", inner=("", CheckTable)))
    env: tuple[tuple[str, str], ...] = field(default=(), metadata=key(
        table_of(string, 'USE_FP8 = "1"'), "table str -> str",
        "environment the kernels' modules read through os.environ (unset: the code's default); `--env NAME=VALUE` adds"))
    # Not keys: where the settings came from.
    root: str = "."  # the project root (kernel paths in the settings are relative to it)
    source: str | None = None  # the settings file, as shown in messages; None when there is none

    def with_exclude(self, exclude: list[str] | None, extend_exclude: list[str] | None) -> "Settings":
        """Command-line flags over the file: ``--exclude`` replaces, ``--extend-exclude`` adds."""
        base = tuple(exclude) if exclude is not None else self.exclude
        return replace(self, exclude=base + tuple(extend_exclude or ()))

    def with_env(self, env) -> "Settings":
        """``--env NAME=VALUE`` pairs over the file's ``env`` table."""
        if not env:
            return self
        return replace(self, env=tuple({**dict(self.env), **dict(env)}.items()))

    def with_arch(self, arch) -> "Settings":
        """``--arch`` over the file's ``arch``."""
        return replace(self, arch=tuple(arch)) if arch else self

    def with_executor(self, executor: str | None, address: str | None, fallback: str | None,
                      compile_timeout: str | None = None, compile_memory: str | None = None) -> "Settings":
        """``--executor`` / ``--address`` / ``--fallback`` / ``--compile-timeout`` /
        ``--compile-memory`` over the file's ``check`` table."""
        where = Where("command line", "")
        table = self.check
        if executor is not None:
            table = replace(table, executor=_one_of("local", "dask")(executor, where.at("--executor")))
        if address is not None:
            table = replace(table, address=_scheduler_address(address, where.at("--address")))
        if fallback is not None:
            table = replace(table, fallback=_one_of("none", "local")(fallback, where.at("--fallback")))
        if compile_timeout is not None:
            table = replace(table, compile_timeout=_seconds(compile_timeout, where.at("--compile-timeout")))
        if compile_memory is not None:
            megabytes = int(compile_memory) if compile_memory.strip().isdigit() else compile_memory
            table = replace(table, compile_memory=_megabytes(megabytes, where.at("--compile-memory")))
        return replace(self, check=table)

    def farm(self):
        """The Dask cluster to compile on (``FarmChoice``), or None for the local pool.
        ``UserError`` for ``executor = "dask"`` without an address."""
        if self.check.executor != "dask":
            return None
        import os

        address = self.check.address or os.environ.get("DASK_SCHEDULER_ADDRESS")
        if not address:
            raise UserError("--executor dask needs the scheduler's address: --address tcp://HOST:8786, "
                            "[tool.autotune-rewrite.check] address, or $DASK_SCHEDULER_ADDRESS")
        return FarmChoice(address, self.check.fallback)

    def where(self) -> Where:
        """The table's place for messages (``pyproject.toml: [tool.autotune-rewrite] KEY ...``)."""
        file = self.source or "pyproject.toml"
        return Where(file, "" if file.endswith(TOOL_FILE) else "[tool.autotune-rewrite]")

    def bench_entry(self, *names: str) -> BenchEntry | None:
        table = dict(self.bench)
        return next((table[n] for n in names if n in table), None)


def describe(cls: type = Settings, prefix: str = "") -> Iterator[tuple[str, str, str]]:
    """(dotted key, TOML type, meaning) of every key, nested tables included (for docs/settings.md)."""
    for name, f in keys_of(cls).items():
        path = f"{prefix}{name}"
        yield path, f.metadata["type"], f.metadata["doc"]
        if f.metadata["inner"] is not None:
            suffix, inner = f.metadata["inner"]
            yield from describe(inner, f"{path}{suffix}.")


__all__ = ["AssumeValue", "BenchEntry", "Cache", "CheckTable", "DEFAULT_ARCH", "Settings", "SpecEntry", "Variants", "describe"]

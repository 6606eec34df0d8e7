"""The one vocabulary of reasons for a value that depends on the machine, the environment or
the run: every such reason is worded here, so the same ``os.environ.get`` reads the same in
scan, check and diff, and each names what would answer it (an ``--env``, a product target)."""

from __future__ import annotations

from autotune_rewrite.evaluate.queries import is_query


def _env_name(query: str) -> bool:
    return query in ("os.environ.get", "os.getenv") or query.startswith("os.environ")


def needs_target(query: str) -> str:
    """Before a target is chosen (the locator resolves such configs per target), or before the
    environment is answered (``--env``)."""
    if _env_name(query):
        return f"reads `{query}`: answered by --env or [tool.autotune-rewrite.env] (unset: its default)"
    return f"depends on the target: `{query}` is answered per target (--arch)"


def not_in_tree(fq: str) -> str:
    """A name from outside the scanned tree. A device or environment query keeps its own
    wording wherever it is met (the same ``os.environ.get`` reads the same everywhere)."""
    if _env_name(fq):
        return needs_target(fq)
    if is_query(fq):
        return unknown_device_query(fq)
    return f"uses `{fq}`, which is not defined in the scanned tree (a library's value, only known at run time)"


def no_binding(text: str) -> str:
    return f"`{text}` is bound by nothing the evaluator can read (a name made at run time)"


def unknown_device_query(query: str) -> str:
    return (f"device query `{query}` is only known on the device: the evaluator answers "
            "torch.version.hip/cuda, torch.cuda.get_device_capability/get_device_properties and "
            "Triton's driver.active.get_current_target/utils.get_device_properties, not this")


def needs_product(target: str, what: str) -> str:
    return f"{what} is not known for {target}: name a product target, e.g. --arch h200 or --arch rtx-pro-6000"


def unknown_field(what: str, field: str) -> str:
    return f"`{what}.{field}` is not a device property the evaluator knows"


def cuda_version() -> str:
    return "`torch.version.cuda` is only known on the machine (which CUDA torch was built with); only `is None` is answered"


def env_unset(name: str) -> str:
    return f"`os.environ[{name!r}]` is not set: pass --env {name}=VALUE or set it under [tool.autotune-rewrite.env]"


def env_default(name: str, default) -> str:
    """An unset variable the answer rests on (``os.environ.get(name, default)``, ``name in os.environ``)."""
    read = f"read as its default {default!r}" if default is not None else "read as unset"
    return f"environment: {name} {read} (--env {name}=VALUE or [tool.autotune-rewrite.env] to choose)"


def runtime_branch(test: str) -> str:
    return f"the branch on `{test}` is only known at run time (it reads runtime data)"


def runtime_binding(name: str, test: str) -> str:
    return f"`{name}` is bound under `if {test}`, which is only known at run time"


def not_bound_on_branch(name: str, test: str, taken: bool) -> str:
    return f"`{name}` is not bound when `{test}` is {taken}"


def parameter(name: str, function: str) -> str:
    return f"`{name}` is a parameter of `{function}`, only known when it is called"


def launch_arguments(name: str) -> str:
    """A pruner reading the launch's own arguments (``named_args["N"]``)."""
    return f"`named_args[{name!r}]` is a launch argument, only known at run time"

"""The SMEM model of one kernel x launch spec x target: which points to compile, and what it says.

The configs of a site are the first points (each compiled config gives parameters -> bytes).
They rarely determine a model: three configs at one ``num_stages`` say nothing about stages. So
we ask ``smem_model.probe_points`` for extra parameter sets and compile them too (failed probes
are dropped), then fit with ``smem_model.fit_smem_model`` and ask ``largest_fit`` for the
largest tile per tile parameter.

What is varied: the int meta-parameters of the configs, ``num_stages``, and the spec's int
constexprs whose name contains ``BLOCK`` (tile sizes such as ``BLOCK_H``: the model then reads
like ``1152*BLOCK_H + 1348*num_stages*BLOCK_T``). Other constexprs (head dims) are held: moving
them doubles compile cost and changes the kernel's meaning rather than its tiling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from autotune_rewrite import disk_cache
from autotune_rewrite.spec import launch_spec
from autotune_rewrite.check import smem_model
from autotune_rewrite.evidence import CompileJob, CompileOutcome, ConfigVerdict, LaunchSpec, SmemModel
from autotune_rewrite.findings import LargestFit
from autotune_rewrite.model import AutotuneSite, ConfigValue
from autotune_rewrite.targets import Target


MAX_PROBES = 6  # per kernel x spec x target
_FIT_SCHEMA = 2  # 2: disk_cache's envelope; a fit that found no model is stored as {"model": null}


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def tile_params(site: AutotuneSite, spec: LaunchSpec) -> tuple[str, ...]:
    """Parameters the model may vary: int meta-params, num_stages, BLOCK* spec constexprs."""
    names = [k for k in launch_spec.meta_params(site)
             if all(_is_int(c.kwargs.get(k, 0)) for c in site.configs or ())]
    names.append("num_stages")
    names += [k for k, v in spec.constexprs if _is_int(v) and "BLOCK" in k.upper() and k not in names]
    return tuple(names)


def point_params(config: ConfigValue, spec: LaunchSpec) -> dict[str, int]:
    """The parameters of one compiled point (ints only; constants drop out of the fit)."""
    params = {k: v for k, v in spec.constexprs if _is_int(v)}
    params.update({k: v for k, v in config.kwargs.items() if _is_int(v)})
    params["num_stages"] = config.effective_num_stages
    params["num_warps"] = config.effective_num_warps
    return params


@dataclass(frozen=True)
class Probe:
    """One extra point to compile for the model."""

    params: dict
    config: ConfigValue
    spec: LaunchSpec
    job: CompileJob


def probes(
    site: AutotuneSite, spec: LaunchSpec, target: Target, verdicts: Sequence[ConfigVerdict],
) -> list[Probe]:
    """Extra points so that the fit over ``tile_params`` is determined (none when it already is)."""
    compiled = [(v.config, v.outcome.job) for v in verdicts
                if v.arch == target.arch.name and v.outcome.shared_bytes is not None]
    return probes_from(site, spec, compiled)


def probes_from(site: AutotuneSite, spec: LaunchSpec, compiled: Sequence[tuple[ConfigValue, CompileJob]]) -> list[Probe]:
    """``probes`` from the (config, job) pairs that compiled on one target. Given every config
    of a plan, these are the probes ``probes`` will ask for when every config compiles (the
    usual case), so they can be queued with the configs instead of after the slowest of them."""
    if not compiled:
        return []
    vary = tile_params(site, spec)
    points = [point_params(config, spec) for config, _ in compiled]
    base_config = compiled[0][0]
    spec_names = {k for k, _ in spec.constexprs}
    meta = set(launch_spec.meta_params(site))
    out = []
    # Two values per parameter plus the pairwise moves determine a model with products such as
    # num_stages*BLOCK_T; a third value per parameter mostly buys compiles of large tiles that
    # leave the linear regime (and cost the most). MAX_PROBES bounds the extra compile time.
    for params in smem_model.probe_points(points, vary, min_values=2)[:MAX_PROBES]:
        kwargs = {k: params[k] for k in base_config.kwargs if k in params} | {
            k: params[k] for k in meta if k in params}
        config = replace(base_config, kwargs=kwargs, num_stages=params["num_stages"], span=None)
        probe_spec = replace(spec, constexprs=tuple((k, params.get(k, v) if k in spec_names else v)
                                                    for k, v in spec.constexprs))
        spz = launch_spec.specialize(site, probe_spec, config)
        job = replace(compiled[0][1], signature=spz.signature, constexprs=spz.constexprs,
                      divisible_by_16=spz.divisible_by_16, num_stages=config.effective_num_stages,
                      num_warps=config.effective_num_warps)
        out.append(Probe(params, config, probe_spec, job))
    return out


def fit(
    site: AutotuneSite,
    spec: LaunchSpec,
    target: Target,
    verdicts: Sequence[ConfigVerdict],
    probed: Sequence[tuple[Probe, CompileOutcome]] = (),
    cache_dir: Path | None = None,
) -> tuple[SmemModel | None, tuple[LargestFit, ...]]:
    """(model, largest fitting tiles) for one target, from the configs and the probes.
    ``cache_dir``: reuse a model fitted before on exactly these points."""
    points = [(point_params(v.config, spec), v.outcome.shared_bytes) for v in verdicts
              if v.arch == target.arch.name and v.outcome.shared_bytes is not None]
    points += [(p.params, o.shared_bytes) for p, o in probed if o.shared_bytes is not None and o.error is None]
    model = _cached_fit(points, cache_dir)
    if model is None:
        return None, ()
    return model, largest_fits(site, spec, target, model, verdicts)


def _cached_fit(points, cache_dir: Path | None) -> SmemModel | None:
    """``fit_smem_model(points)``, memoized on disk: the subset search is the one costly step
    left in a warm ``check`` (~0.2 s for 100 points), and it is a pure function of the points
    and of smem_model.py, both in the key."""
    if cache_dir is None:
        return smem_model.fit_smem_model(points)
    store = disk_cache.namespace("smem-models", _FIT_SCHEMA, cache_dir)
    key = store.key(disk_cache.file_digest(Path(smem_model.__file__)),
                    sorted([sorted(p.items()), b] for p, b in points))
    data = store.read_json(key)
    if data is not None:
        try:
            if data["model"] is None:
                return None
            m = data["model"]
            return SmemModel(coefficients=tuple((t, c) for t, c in m["coefficients"]),
                             max_residual=m["max_residual"], points=m["points"], text=m["text"])
        except (KeyError, TypeError, ValueError):
            pass  # corrupt: refit and overwrite
    model = smem_model.fit_smem_model(points)
    data = None if model is None else {"coefficients": [list(tc) for tc in model.coefficients],
                                       "max_residual": model.max_residual, "points": model.points,
                                       "text": model.text}
    store.write_json(key, {"model": data})
    return model


def largest_fits(
    site: AutotuneSite, spec: LaunchSpec, target: Target, model: SmemModel, verdicts: Sequence[ConfigVerdict],
) -> tuple[LargestFit, ...]:
    """For each tile parameter in the model (num_stages last), the largest value that fits
    (``BLOCK_T <= 16 at num_stages=2, BLOCK_H=16``, predicted 61,568 B of 101,376 B), the others
    held at the config that launches with the largest value of it (the first config if none
    launches)."""
    in_model = smem_model.model_parameters(model)
    names = [k for k in tile_params(site, spec) if k in in_model and k != "num_stages"]
    if "num_stages" in in_model:
        names.append("num_stages")
    mine = [v for v in verdicts if v.arch == target.arch.name]
    if not mine:
        return ()
    limit = target.arch.smem_optin_per_block
    out: list[LargestFit] = []
    for name in names:
        launching = [v for v in mine if v.launchable] or mine[:1]
        base = max(launching, key=lambda v: point_params(v.config, spec).get(name, 0))
        fixed = point_params(base.config, spec)
        held = tuple((k, x) for k, x in sorted(fixed.items()) if k != name and k in in_model)
        best = smem_model.largest_fit(model, target.arch, fixed, name)
        used = None if best is None else int(round(smem_model.predict(model, {**fixed, name: best})))
        if used is not None and used < 0:
            continue  # the fit is extrapolated past where it holds (a negative term wins): it says nothing there
        out.append(LargestFit(target.arch.name, name, best, held, used, limit))
    return tuple(out)

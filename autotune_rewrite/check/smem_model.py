"""Shared memory as a linear function of config/spec parameters, fitted on compiled points.

Candidate terms are monomials of the parameters that vary across the points (each parameter,
and products of two or three distinct ones such as ``num_stages*BLOCK_T``), plus a constant.
The fit takes the *simplest* model that explains the points: fewest terms first, then lowest
degree, then integer coefficients; an exact model (every point reproduced to the byte) wins over
any inexact one. A model of k terms needs at least k + 2 distinct points: with thousands of
candidate subsets, k + 1 points are too easily matched by a wrong model, so an exact fit must
be confirmed by points it was not forced through.

Least squares is small (a handful of terms): the subset search uses floats and the chosen model
is re-solved exactly with ``fractions.Fraction`` so the coefficients and residuals are exact.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

from autotune_rewrite.evidence import SmemModel
from autotune_rewrite.targets import Arch

Point = tuple[Mapping[str, int], int]  # (parameters, shared bytes)

MAX_TERMS = 4
MAX_DEGREE = 3
MAX_SUBSETS = 3000  # subsets of one size tried exhaustively; beyond that a beam search
BEAM = 60


def _varying(points: Sequence[Point]) -> list[str]:
    names = sorted({k for params, _ in points for k in params})
    out = []
    for name in names:
        values = {params.get(name) for params, _ in points}
        if len(values) > 1 and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            out.append(name)
    return out


def _terms(names: Sequence[str]) -> list[tuple[str, ...]]:
    """Monomials of distinct parameters up to MAX_DEGREE; () is the constant."""
    terms: list[tuple[str, ...]] = [()]
    # num_stages first in products so terms read like "num_stages*BLOCK_T"
    ordered = sorted(names, key=lambda n: (n != "num_stages", n))
    for degree in range(1, MAX_DEGREE + 1):
        for term in itertools.combinations(ordered, degree):
            # Three-way products only as num_stages x a tile (a pipelined buffer): keeps the
            # search small and the models physical.
            if degree < 3 or term[0] == "num_stages":
                terms.append(term)
    return terms


def _value(term: tuple[str, ...], params: Mapping[str, int]) -> int:
    return math.prod(params[n] for n in term) if term else 1


def term_text(term: tuple[str, ...]) -> str:
    return "*".join(term) if term else "1"


def _solve_float(gram: list[list[float]], rhs: list[float], subset: Sequence[int]) -> list[float] | None:
    """Least squares on the terms ``subset`` via the normal equations (the Gram matrix of all
    terms is computed once per fit) and Gaussian elimination with partial pivoting."""
    a = [[gram[i][j] for j in subset] for i in subset]
    b = [rhs[i] for i in subset]
    return _eliminate(a, b, 1e-9)


def _solve_exact(rows: list[list[int]], y: list[int]) -> list[Fraction] | None:
    k = len(rows[0])
    a = [[Fraction(sum(r[i] * r[j] for r in rows)) for j in range(k)] for i in range(k)]
    b = [Fraction(sum(r[i] * yy for r, yy in zip(rows, y))) for i in range(k)]
    return _eliminate(a, b, 0)


def _eliminate(a, b, eps):  # type: ignore[no-untyped-def]
    k = len(b)
    scale = max((abs(x) for row in a for x in row), default=1) or 1
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) <= eps * scale:
            return None  # singular: the points cannot tell these terms apart
        a[col], a[pivot] = a[pivot], a[col]
        b[col], b[pivot] = b[pivot], b[col]
        for r in range(k):
            if r != col and a[r][col] != 0:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * c for x, c in zip(a[r], a[col])]
                b[r] -= f * b[col]
    return [b[i] / a[i][i] for i in range(k)]


def _max_residual(coefs: Sequence[float | Fraction], rows: list[list[int]], y: list[int]) -> float:
    return max(abs(sum(c * x for c, x in zip(coefs, r)) - yy) for r, yy in zip(rows, y))


def fit_smem_model(points: Sequence[Point]) -> SmemModel | None:
    """The simplest linear model of shared bytes over the varying parameters, or None when the
    points cannot determine one (fewer than three distinct points, or every subset singular)."""
    clean = [(dict(p), int(s)) for p, s in points if s is not None]
    # identical parameter sets add nothing; conflicting ones make any model inexact (kept)
    unique = {tuple(sorted(p.items())): (p, s) for p, s in clean}
    pts = list(unique.values())
    if len(pts) < 3:
        return None
    names = _varying(pts)
    terms = _terms(names)
    y = [s for _, s in pts]
    table = {t: [_value(t, p) for p, _ in pts] for t in terms}
    columns = [[float(v) for v in table[t]] for t in terms]
    gram = [[sum(x * z for x, z in zip(ci, cj)) for cj in columns] for ci in columns]
    rhs = [sum(x * v for x, v in zip(ci, y)) for ci in columns]
    best: tuple | None = None  # (rank, coefficients, terms, residual)
    previous: list[tuple[float, tuple[int, ...]]] = []  # (residual, subset) of the last size
    for k in range(1, min(MAX_TERMS, len(pts) - 2) + 1):
        if math.comb(len(terms), k) <= MAX_SUBSETS:
            candidates: Iterable[tuple[int, ...]] = itertools.combinations(range(len(terms)), k)
        else:  # too many to try: grow the best smaller models by one term (a beam search)
            beam = [index for _, index in sorted(previous)[:BEAM]]
            candidates = sorted({tuple(sorted((*index, t))) for index in beam
                                 for t in range(len(terms)) if t not in index})
        previous = []
        for index in candidates:
            coefs = _solve_float(gram, rhs, index)
            if coefs is None:
                continue
            subset = tuple(terms[i] for i in index)
            residual = max(
                abs(sum(c * columns[i][p] for c, i in zip(coefs, index)) - y[p]) for p in range(len(y))
            )
            previous.append((residual, index))
            exact = residual < 0.5
            if any(abs(c) < 1e-6 for c in coefs):
                continue  # a zero coefficient means a smaller subset explains it
            integer = all(abs(c - round(c)) < 1e-6 for c in coefs)
            degree = sum(len(t) for t in subset)
            rank = (not exact, residual if not exact else 0, k, degree, not integer)
            if best is None or rank < best[0]:
                best = (rank, coefs, subset, residual)
        if best is not None and not best[0][0]:
            break  # the fewest-term exact model found; more terms would only overfit
    if best is None:
        return None
    _, _, subset, _ = best
    rows = [[table[t][i] for t in subset] for i in range(len(pts))]
    exact_coefs = _solve_exact(rows, y)
    if exact_coefs is None:
        return None
    residual = _max_residual(exact_coefs, rows, y)
    coefficients = tuple((term_text(t), float(c)) for t, c in zip(subset, exact_coefs))
    # Constant last, higher-degree terms after lower ones, as people write formulas.
    coefficients = tuple(sorted(coefficients, key=lambda tc: (tc[0] == "1", tc[0].count("*"), tc[0])))
    return SmemModel(
        coefficients=coefficients,
        max_residual=math.ceil(residual),
        points=len(pts),
        text=("SMEM = " if residual == 0 else "SMEM ~ ") + format_terms(coefficients),
    )


def _number(c: float) -> str:
    if abs(c - round(c)) < 1e-9:
        return f"{int(round(c))}"
    return f"{c:.3f}".rstrip("0")


def format_terms(coefficients: Sequence[tuple[str, float]]) -> str:
    parts: list[str] = []
    for term, c in coefficients:
        body = _number(abs(c)) if term == "1" else f"{_number(abs(c))}*{term}"
        if not parts:
            parts.append(body if c >= 0 else f"-{body}")
        else:
            parts.append(f"{'+' if c >= 0 else '-'} {body}")
    return " ".join(parts) if parts else "0"


def predict(model: SmemModel, params: Mapping[str, int]) -> float:
    """Shared bytes the model gives for ``params`` (every parameter in its terms must be given)."""
    total = 0.0
    for term, c in model.coefficients:
        total += c * (math.prod(params[n] for n in term.split("*")) if term != "1" else 1)
    return total


def model_parameters(model: SmemModel) -> set[str]:
    return {n for term, _ in model.coefficients if term != "1" for n in term.split("*")}


# --- which points to compile --------------------------------------------------------------------


def _neighbours(name: str, value: int) -> list[int]:
    """Two other values of a parameter worth compiling: stages step up by one (1 stage disables
    pipelining, a different regime); tile sizes double, and halve only down to 32: small tiles
    fall into another regime (fixed scratch buffers outweigh the pipelined tiles, so SMEM
    becomes a max() of terms, not a sum) and tl.dot rejects dimensions under 16."""
    if name == "num_stages":
        return [value + 1, value + 2]
    if value > 0 and value & (value - 1) == 0:  # a power of two: a tile size
        return [value * 2, value // 2] if value >= 64 else [value * 2, value * 4]
    return [value + 1, value + 2]


def probe_points(
    points: Sequence[Mapping[str, int]],
    vary: Sequence[str],
    min_values: int = 3,
) -> list[dict[str, int]]:
    """Extra parameter sets to compile so that a fit over ``vary`` is determined.

    For every parameter in ``vary`` with fewer than ``min_values`` distinct values among
    ``points``, the first point with that parameter moved to its neighbours; then, for products,
    points that move two (and all) of those parameters together. Points already present are
    not repeated. Failed compiles among the probes are simply left out of the fit by the caller."""
    if not points:
        return []
    base = dict(points[0])
    seen = {tuple(sorted(p.items())) for p in points}
    out: list[dict[str, int]] = []

    def add(p: dict[str, int]) -> None:
        key = tuple(sorted(p.items()))
        if key not in seen:
            seen.add(key)
            out.append(p)

    names = [n for n in vary if n in base]
    for n in names:
        have = {p.get(n) for p in points}
        if len(have) < min_values:
            for v in _neighbours(n, base[n]):
                if len(have) >= min_values:
                    break
                if v not in have:
                    have.add(v)
                    add({**base, n: v})
    # interactions: every pair, and all together, moved to their first neighbour
    for a, b in itertools.combinations(names, 2):
        add({**base, a: _neighbours(a, base[a])[0], b: _neighbours(b, base[b])[0]})
    if len(names) > 2:
        add({**base, **{n: _neighbours(n, base[n])[0] for n in names}})
    return out


def largest_fit(
    model: SmemModel,
    arch: Arch,
    fixed: Mapping[str, int],
    vary: str,
    candidates: Iterable[int] | None = None,
    margin: int | None = None,
) -> int | None:
    """The largest value of ``vary`` (powers of two up to 65,536; 1..16 for num_stages) whose
    predicted SMEM, plus ``margin`` (default: the model's max residual), stays within the
    target's opt-in limit, with ``fixed`` giving the other parameters. None when none fits, or
    when the model does not depend on ``vary`` (no limit to report)."""
    if vary not in model_parameters(model):
        return None
    if candidates is None:
        candidates = range(1, 17) if vary == "num_stages" else (2**i for i in range(17))
    extra = model.max_residual if margin is None else margin
    fitting = [v for v in candidates if predict(model, {**fixed, vary: v}) + extra <= arch.smem_optin_per_block]
    return max(fitting) if fitting else None

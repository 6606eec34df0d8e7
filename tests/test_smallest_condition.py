"""The smallest condition over loop variables that drops exactly the dead rows (pure, no compile).

Tables are written here, in the shapes config products take: block sizes x stages x warps, a
loop over (stages, warps) pairs, string-valued variables. Every condition returned is checked by
Python itself on every row, as the rewriter does before it writes one.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings, strategies as st

from autotune_rewrite.smallest_condition import DEAD, FREE, KEEP, smallest_condition


def _table(**loops):
    names = list(loops)
    return [dict(zip(names, combo)) for combo in itertools.product(*loops.values())]


def _exact(rows, labels, cond) -> None:
    code = compile(cond.text(), "<condition>", "eval")
    for row, label in zip(rows, labels):
        written = bool(eval(code, {"__builtins__": {}}, dict(row)))
        assert written == cond.keeps(row)
        if label != FREE:
            assert written == (label == KEEP), (cond.text(), row, label)


def test_one_stage_count_dead_everywhere_reads_as_what_stays():
    rows = _table(m=[64, 128], s=[3, 4, 7])
    labels = [DEAD if r["s"] == 7 else KEEP for r in rows]
    cond = smallest_condition(rows, labels)
    assert cond.text() == "s <= 4" and not cond.negated
    _exact(rows, labels, cond)


def test_a_middle_value_is_written_as_its_complement():
    rows = _table(m=[64, 128], s=[3, 4, 7])
    labels = [DEAD if r["s"] == 4 else KEEP for r in rows]
    cond = smallest_condition(rows, labels)
    # Kept: s <= 3 or s >= 7 (2 comparisons); dropped: s == 4 (1), written negated.
    assert cond.text() == "s != 4" and cond.negated and cond.terms == 1
    _exact(rows, labels, cond)


def test_one_dead_combination_is_named_when_that_is_shorter():
    rows = _table(m=[64, 128], n=[32, 64], s=[3, 4, 7], w=[4, 8])
    labels = [DEAD if (r["m"], r["s"]) == (128, 7) else KEEP for r in rows]
    cond = smallest_condition(rows, labels)
    # Kept would be "m == 64 or s <= 4": two terms (groups) against one.
    assert cond.text() == "not (m == 128 and s == 7)"
    _exact(rows, labels, cond)


def test_a_tie_keeps_the_kept_form():
    rows = _table(m=[64, 128], s=[3, 7])
    labels = [DEAD if r["m"] == 128 else KEEP for r in rows]
    cond = smallest_condition(rows, labels)
    assert cond.text() == "m == 64" and not cond.negated  # rather than "m != 128"


def test_free_rows_may_go_either_way_and_make_the_condition_smaller():
    rows = _table(m=[64, 128], s=[3, 4, 7])
    # (128, 4) is dead; (64, 4) is already dropped by the site's early_config_prune.
    labels = [DEAD if (r["m"], r["s"]) == (128, 4) else FREE if (r["m"], r["s"]) == (64, 4) else KEEP
              for r in rows]
    cond = smallest_condition(rows, labels)
    assert cond.text() == "s != 4"
    strict = smallest_condition(rows, [KEEP if label == FREE else label for label in labels])
    assert strict.text() == "not (m == 128 and s == 4)"
    _exact(rows, labels, cond)


def test_an_inner_interval_costs_two_comparisons():
    rows = _table(b=[16, 32, 64, 128])
    labels = [DEAD if r["b"] in (32, 64) else KEEP for r in rows]
    cond = smallest_condition(rows, labels)
    assert cond.text() == "not (b >= 32 and b <= 64)" and cond.terms == 2
    _exact(rows, labels, cond)


def test_tuple_loops_and_strings_are_compared_with_equality_only():
    rows = [dict(dtype=d, stages=s, warps=w) for d in ["fp16", "fp8"] for s, w in [(3, 4), (3, 8), (4, 4)]]
    labels = [DEAD if (r["dtype"], r["stages"]) == ("fp16", 4) else KEEP for r in rows]
    cond = smallest_condition(rows, labels)
    assert cond.text() == "not (dtype == 'fp16' and stages == 4)"
    _exact(rows, labels, cond)


def test_no_condition_when_a_dead_and_a_kept_row_read_the_same():
    rows = [dict(m=64, s=3), dict(m=64, s=3), dict(m=128, s=3)]
    assert smallest_condition(rows, [DEAD, KEEP, KEEP]) is None


def test_nothing_dead_or_nothing_kept_is_no_condition():
    rows = _table(m=[64, 128])
    assert smallest_condition(rows, [KEEP, KEEP]) is None
    assert smallest_condition(rows, [DEAD, DEAD]) is None  # an empty list is not a filter's job


def test_the_same_table_always_gives_the_same_text():
    rows = _table(m=[64, 128], n=[64, 128, 256], k=[32, 64, 128], s=[3, 4])
    labels = [DEAD if (r["m"] + r["n"]) * r["k"] * r["s"] > 100_000 else KEEP for r in rows]
    texts = {smallest_condition(rows, labels).text() for _ in range(3)}
    assert len(texts) == 1
    _exact(rows, labels, smallest_condition(rows, labels))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([DEAD, KEEP, FREE]), min_size=12, max_size=12))
def test_any_labelling_gets_an_exact_condition(labels):
    rows = _table(m=[64, 128], s=[2, 3, 4], w=[4, 8])
    cond = smallest_condition(rows, labels)
    if DEAD not in labels or KEEP not in labels:
        assert cond is None
        return
    assert cond is not None  # every row differs from the others: some condition always exists
    _exact(rows, labels, cond)
    # Never more comparisons than naming each dead row in full (3 each).
    assert cond.terms <= 3 * labels.count(DEAD)

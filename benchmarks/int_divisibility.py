"""Is "ints of unknown value are divisible by 16 (and not 1)" the upper bound for shared memory?

For every kernel of the given repositories that ``check`` judges with that assumption, compile
each config again with those ints generic (no divisibility hint, as an odd size would be) and
compare the shared memory. Prints JSON: per kernel the configs where the divisible spec needs
more, the same, or less SMEM than the generic one; and the totals.

    python benchmarks/int_divisibility.py /tmp/corpus/<repo> [...] > results.json
"""

from __future__ import annotations

import collections
import dataclasses
import json
import sys
from pathlib import Path

from autotune_rewrite.check.check import check, evaluate_configs


def main(paths: list[str]) -> None:
    rows, totals = [], collections.Counter()
    for path in paths:
        result = check(path, archs=["sm_120"], fit_model=False)
        for report in result.reports:
            spec = report.spec
            if spec is None or not spec.divisible or not report.status.judged or not report.verdicts:
                continue
            generic = dataclasses.replace(spec, divisible=())
            others = evaluate_configs(result.root, report.site, generic, report.site.configs, archs=["sm_120"])
            row = collections.Counter()
            for a, b in zip(report.verdicts, others):
                sa, sb = a.outcome.shared_bytes, b.outcome.shared_bytes
                if sa is None or sb is None:
                    row["not_compiled"] += 1
                else:
                    row["divisible_more" if sa > sb else "divisible_less" if sa < sb else "same"] += 1
            totals.update(row)
            rows.append({"kernel": report.site.ident, "spec": spec.name, "divisible_ints": list(spec.divisible), **row})
            print(json.dumps(rows[-1]), file=sys.stderr)
    import triton

    print(json.dumps({"triton": triton.__version__, "target": "sm_120", "kernels": rows, "totals": dict(totals)},
                     indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])

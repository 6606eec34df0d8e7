"""Does SMEM grow with num_stages exactly where ``kernel_facts`` says a loop is pipelined?

Compiles every loop of ``tests/fixtures/pipelined/kernels.py`` (written for this: recurrent
states, folded addends, arithmetic, transpositions, runtime ifs, ...) at num_stages 1 to 4 on
sm_80, sm_90 and sm_120 with the runtime's divisibility, and prints JSON: per kernel the SMEM per
stage count on each target, whether it grows from 2 stages on, what the source rule predicts, and
whether they agree. No GPU needed. Writes ``$OUT/pipelined_loads.json`` too when ``OUT`` is set.

    python benchmarks/pipelined_loads.py > benchmarks/results/pipelined_loads/pipelined_loads.json
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from autotune_rewrite.compile.crosscompile import compile_job
from autotune_rewrite.evidence import CompileJob
from autotune_rewrite.isolate.kernel_facts import facts_of
from autotune_rewrite.isolate.kernel_loader import load_bundle

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pipelined"
SIGNATURE = (("x_ptr", "*bf16"), ("w_ptr", "*bf16"), ("y_ptr", "*bf16"), ("S", "i32"), ("B", "constexpr"))
TARGETS = {"sm_80": 80, "sm_90": 90, "sm_120": 120}


def _kernels() -> dict[str, bool]:
    namespace: dict = {}
    exec(compile((FIXTURES / "kernels.py").read_text(), str(FIXTURES / "kernels.py"), "exec"), namespace)
    return namespace["PIPELINED"]


def main() -> None:
    import triton

    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for kernel, expected in _kernels().items():
            bundle = load_bundle(FIXTURES, "kernels.py", kernel)
            predicted = bool(facts_of(bundle).pipelined_loops)
            row = {"kernel": kernel, "predicted": predicted, "expected_sm120": expected, "smem": {}, "grows": {}}
            for arch, capability in TARGETS.items():
                smem = []
                for stages in (1, 2, 3, 4):
                    # Stopped right after shared-memory allocation: SMEM is all this reads.
                    job = CompileJob(bundle=bundle, signature=SIGNATURE, constexprs=(("B", 64),),
                                     divisible_by_16=("x_ptr", "w_ptr", "y_ptr", "S"), num_warps=4,
                                     num_stages=stages, num_ctas=1, maxnreg=None, capability=capability,
                                     stop_smem_above=0)
                    outcome = compile_job(job, triton_cache_dir=Path(cache))
                    smem.append(outcome.shared_bytes if outcome.error is None else outcome.error)
                row["smem"][arch] = smem
                row["grows"][arch] = len(set(smem[1:])) > 1
            row["agrees"] = {arch: row["grows"][arch] == predicted for arch in TARGETS}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    summary = {arch: sum(r["agrees"][arch] for r in rows) for arch in TARGETS}
    result = {"triton": triton.__version__, "num_warps": 4, "B": 64, "kernels": rows,
              "agree": summary, "of": len(rows)}
    text = json.dumps(result, indent=1)
    print(text)
    if os.environ.get("OUT"):
        (Path(os.environ["OUT"]) / "pipelined_loads.json").write_text(text)


if __name__ == "__main__":
    main()

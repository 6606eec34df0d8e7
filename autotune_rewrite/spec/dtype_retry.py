"""One more try for a spec whose assumed pointer dtype the kernel itself contradicts.

A kernel may fix its operands' dtype in code the spec inference does not read: AWQ/GPTQ kernels
dequantize int4 weights with inline PTX that returns ``tl.float16``, so ``tl.dot(a, b)`` compiles
only when ``a`` is fp16 too. With the default ``--assume-dtype bf16`` every config then fails
with Triton's "Both operands must be same dtype. Got bf16 and fp16": the spec is wrong, not the
configs. The compiler has named the dtype the kernel wants, so the assumed pointers are compiled
once more with it, and the verdict lists that assumption with the error that led to it. Only
the assumed pointers change (stated types are the user's), only once, and only between fp16 and
bf16.
"""

from __future__ import annotations

import re
from dataclasses import replace

from autotune_rewrite.evidence import LaunchSpec
from autotune_rewrite.outcomes import Assumption

# ``semantic.dot``'s assertion (Triton 3.6).
_MISMATCH = re.compile(r"Both operands must be same dtype\. Got (\w+) and (\w+)")
# Only the two 16-bit floats: a mismatch with fp32 more likely comes from an fp32 scale mixed into
# one operand, and retyping everything fp32 would compile another kernel (a tf32 dot).
_HALVES = {"fp16", "bf16"}


def retyped(spec: LaunchSpec, error: str) -> LaunchSpec | None:
    """``spec`` with its assumed pointer dtype replaced by the one ``error`` says the kernel
    fixes; None when the error is not such a mismatch or the spec assumed no pointer of it."""
    m = _MISMATCH.search(error or "")
    if m is None:
        return None
    got = set(m.groups())
    types = dict(spec.types)
    # Other assumed pointers (an index table as *i32, a scale as *fp32) keep their types.
    assumed = {types[p].lstrip("*") for p in spec.assumed if p in types} & _HALVES
    if len(assumed) != 1 or got != _HALVES:
        return None
    (old,) = assumed
    (new,) = got - assumed
    why = (f"with *{old} assumed every config failed to compile ({m.group(0)}): "
           f"assumed *{new}, the dtype the kernel's own code fixes")
    retyped_types = tuple((p, f"*{new}" if p in spec.assumed and t == f"*{old}" else t) for p, t in spec.types)
    assumptions = tuple(Assumption(a.parameter, f"*{new}", why) if a.parameter in spec.assumed and a.value == f"*{old}"
                        else a for a in spec.assumptions)
    return replace(spec, types=retyped_types, assumptions=assumptions)

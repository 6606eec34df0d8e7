"""A small projection kernel (a ``tl.dot`` loop over D), shared by the tests that need a real
kernel whose tile size decides its shared memory, and its launch-spec table."""

PROJECTION_DEF = '''def NAME(x_ptr, w_ptr, y_ptr, B, D, BLOCK_B: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    rb = tl.arange(0, BLOCK_B)
    rd = pid * BLOCK_D + tl.arange(0, BLOCK_D)
    acc = tl.zeros((BLOCK_B, BLOCK_D), dtype=tl.float32)
    for k in range(0, D, BLOCK_D):
        rk = k + tl.arange(0, BLOCK_D)
        x = tl.load(x_ptr + rb[:, None] * D + rk[None, :], mask=rb[:, None] < B, other=0.0)
        w = tl.load(w_ptr + rk[:, None] * D + rd[None, :])
        acc += tl.dot(x, w)
    tl.store(y_ptr + rb[:, None] * D + rd[None, :], acc, mask=rb[:, None] < B)
'''

# ``KERNEL``: the kernel's name in ``proj.py``.
PROJECTION_SETTINGS = '''[tool.autotune-rewrite]
arch = ["sm_120"]

[[tool.autotune-rewrite.kernels]]
kernel = "proj.py::KERNEL"
types = { x_ptr = "*fp16", w_ptr = "*fp16", y_ptr = "*fp32", B = "i32", D = "i32" }
values = { B = 16, D = 1024 }
constexprs = { BLOCK_B = 16 }
'''


def projection_def(name: str, indent: str = "") -> str:
    """The kernel's ``def`` named ``name``, each line prefixed with ``indent``."""
    return "".join(indent + line if line.strip() else line
                   for line in PROJECTION_DEF.replace("NAME", name).splitlines(keepends=True))

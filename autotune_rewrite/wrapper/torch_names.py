"""How torch and wrapper code spell tensors and dtypes: the tables ``launch_args`` reads with.

Torch dtype names are kept as torch spells them (``float32``); ``check`` maps them to Triton's
types with Triton's own table (``triton._utils.type_canonicalisation_dict``).
"""

from __future__ import annotations

import libcst as cst

# torch factories that take ``dtype=`` (default: torch's default dtype, float32) and return a
# fresh, contiguous tensor.
FACTORIES = {"empty", "zeros", "ones", "full", "rand", "randn", "empty_strided", "tensor", "arange", "randint"}
LIKE = {"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"}
NEW = {"new_empty", "new_zeros", "new_ones", "new_full", "new_tensor"}
# methods that keep a tensor's dtype (the ones in the first set also return it contiguous)
SAME_FRESH = {"contiguous", "clone"}
SAME = {"view", "reshape", "transpose", "t", "permute", "flatten", "squeeze", "unsqueeze", "expand",
        "detach", "narrow", "select", "unflatten", "view_as", "expand_as", "repeat", "T", "mT",
        "as_strided", "index_select", "masked_fill", "fill_", "zero_", "copy_", "mul", "add", "sub"}
# reductions and scans (method or ``torch.`` function): a new contiguous tensor of the input's
# dtype, except that the ones in the second set sum a bool or integer tensor in int64; ``dtype=``,
# when given, decides.
REDUCTIONS = {"sum", "mean", "amax", "amin", "cumsum", "cumprod", "prod", "nansum", "nanmean", "logsumexp", "norm"}
INT64_REDUCTIONS = {"sum", "cumsum", "cumprod", "prod", "nansum"}
# ``torch.cat([a, b])``: a new contiguous tensor, of its inputs' dtype when they all have the same one
JOINS = {"cat", "concat", "concatenate", "stack", "hstack", "vstack"}
CASTS = {"float": "float32", "half": "float16", "bfloat16": "bfloat16", "double": "float64",
         "int": "int32", "long": "int64", "short": "int16", "bool": "bool", "char": "int8", "byte": "uint8"}
INT_METHODS = {"stride", "size", "numel", "dim", "element_size", "nelement", "data_ptr", "get_device"}
INT_ATTRS = {"ndim"}
INT_CALLS = {"len", "int", "cdiv", "next_power_of_2", "ceil", "floor", "prod", "gcd", "lcm", "round"}
FLOAT_CALLS = {"float", "sqrt", "log", "log2", "exp", "pow", "rsqrt"}
TORCH_DTYPES = {"float32", "float", "float16", "half", "bfloat16", "float64", "double", "int8", "int16",
                "int32", "int", "int64", "long", "uint8", "uint16", "uint32", "uint64", "bool",
                "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "short"}
CANON = {"float": "float32", "half": "float16", "double": "float64", "int": "int32", "long": "int64",
         "short": "int16"}
TENSOR_HINTS = {"Tensor", "torch.Tensor"}
# torch's legacy tensor types, used as hints: a tensor (their dtype is too loosely used to trust:
# ``scales: torch.FloatTensor`` is often fp16), except the integer ones.
LEGACY_TENSORS = {"FloatTensor", "HalfTensor", "BFloat16Tensor", "DoubleTensor", "IntTensor", "LongTensor",
                  "ShortTensor", "ByteTensor", "CharTensor", "BoolTensor"}
LEGACY_INT_DTYPES = {"IntTensor": "int32", "LongTensor": "int64", "ShortTensor": "int16", "ByteTensor": "uint8",
                     "CharTensor": "int8", "BoolTensor": "bool"}



def dtype_name(node: cst.BaseExpression) -> str | None:
    """``torch.float32`` / ``tl.float32`` / ``torch.half`` -> ``float32``, else None."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, (cst.Name, cst.Attribute)):
        name = node.attr.value
        if name in TORCH_DTYPES:
            return CANON.get(name, name)
    return None



__all__ = ["CANON", "CASTS", "FACTORIES", "FLOAT_CALLS", "INT64_REDUCTIONS", "INT_ATTRS", "INT_CALLS", "INT_METHODS", "JOINS",
           "LEGACY_INT_DTYPES",
           "LEGACY_TENSORS", "LIKE", "NEW", "REDUCTIONS", "SAME", "SAME_FRESH", "TENSOR_HINTS", "TORCH_DTYPES", "dtype_name"]

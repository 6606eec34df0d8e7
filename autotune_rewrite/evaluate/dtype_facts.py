"""torch's dtype facts as constants: ``torch.finfo(torch.bfloat16).bits``,
``torch.iinfo(torch.int8).max``, ``torch.float16.itemsize``.

They are properties of the number formats (IEEE 754 and the OCP FP8 formats), the same on every
machine and in every torch release, so the evaluator answers them. Without them a module constant
such as ``LOAD_WIDTH = SECTOR_BYTES // torch.finfo(torch.bfloat16).bits`` left every config built
from it "a library's value, only known at run time". Nothing here imports torch.
"""

from __future__ import annotations

from autotune_rewrite.evaluate.device import DeviceRecord
from autotune_rewrite.evaluate.values import Unresolved

# name -> (bits, max, eps, smallest normal); min is -max. From the formats' definitions.
_FLOATS = {
    "float16": (16, 65504.0, 2.0**-10, 2.0**-14),
    "bfloat16": (16, 3.3895313892515355e38, 2.0**-7, 2.0**-126),
    "float32": (32, 3.4028234663852886e38, 2.0**-23, 2.0**-126),
    "float64": (64, 1.7976931348623157e308, 2.0**-52, 2.0**-1022),
    "float8_e4m3fn": (8, 448.0, 2.0**-3, 2.0**-6),
    "float8_e5m2": (8, 57344.0, 2.0**-2, 2.0**-14),
}
_INTS = {"int8": (8, True), "uint8": (8, False), "int16": (16, True), "int32": (32, True), "int64": (64, True)}
_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "short": "int16", "int": "int32",
            "long": "int64"}


class DtypeFacts(DeviceRecord):
    """A torch dtype: ``itemsize``, ``is_floating_point``, ``is_signed``; equal only to itself
    (``dtype == torch.float16``), since two formats of one width share their other fields."""

    def __init__(self, name: str):
        floating = name in _FLOATS
        bits = _FLOATS[name][0] if floating else _INTS[name][0]
        super().__init__({"itemsize": bits // 8, "is_floating_point": floating,
                          "is_signed": floating or _INTS[name][1]}, {}, f"torch.{name}")
        self.name = name

    def __eq__(self, other) -> bool:
        return isinstance(other, DtypeFacts) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


def _finfo(args, kwargs, apply):
    dtype = _dtype(args, "torch.finfo")
    if dtype.name not in _FLOATS:
        raise Unresolved(f"torch.finfo of {dtype.what}, which is not a floating-point dtype")
    bits, big, eps, tiny = _FLOATS[dtype.name]
    return DeviceRecord({"bits": bits, "max": big, "min": -big, "eps": eps, "tiny": tiny, "smallest_normal": tiny,
                         "dtype": dtype.name}, {}, f"torch.finfo({dtype.what})")


def _iinfo(args, kwargs, apply):
    dtype = _dtype(args, "torch.iinfo")
    if dtype.name not in _INTS:
        raise Unresolved(f"torch.iinfo of {dtype.what}, which is not an integer dtype")
    bits, signed = _INTS[dtype.name]
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return DeviceRecord({"bits": bits, "max": high, "min": low, "dtype": dtype.name}, {}, f"torch.iinfo({dtype.what})")


def _dtype(args, what: str) -> DtypeFacts:
    if len(args) != 1 or not isinstance(args[0], DtypeFacts):
        raise Unresolved(f"{what} of a value that is not a torch dtype named in the code")
    return args[0]


VALUES = {f"torch.{name}": DtypeFacts(name) for name in (*_FLOATS, *_INTS)} | {
    f"torch.{alias}": DtypeFacts(name) for alias, name in _ALIASES.items()}
CALLS = {"torch.finfo": _finfo, "torch.iinfo": _iinfo}

__all__ = ["CALLS", "VALUES", "DtypeFacts"]

"""Sparse MLA decode for SM120-class GPUs (example target of autotune-rewrite)."""

from .decode import sparse_mla_decode
from .reference import sparse_mla_decode_reference

__all__ = ["sparse_mla_decode", "sparse_mla_decode_reference"]

"""Which names ask the machine or the environment: device, backend and environment queries.

Both the device answers (``device``) and the words for what stays unknown (``unknowns``) need
this one test, so it lives below them."""

from __future__ import annotations

DEVICE_PREFIXES = ("torch.cuda.", "torch.version.", "torch.backends.cuda.", "triton.runtime.driver.",
                   "triton.backends.", "torch.xpu.", "torch.mps.")
ENV_CALLS = ("os.environ.get", "os.getenv")


def is_query(fq: str) -> bool:
    """A name whose answer is a fact about the machine or the environment."""
    return fq.startswith(DEVICE_PREFIXES) or fq in ENV_CALLS or fq.startswith("os.environ")


__all__ = ["DEVICE_PREFIXES", "ENV_CALLS", "is_query"]

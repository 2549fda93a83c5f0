"""Which compute device the model-based tools use. torch is imported only when it is
installed and a device question is actually asked (the core runs without it)."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from typing import Literal

Device = Literal["cuda", "mps", "cpu"]


@lru_cache(maxsize=1)
def accelerators() -> tuple[Device, ...]:
    """The accelerators torch can use here (none when torch is not installed)."""
    if importlib.util.find_spec("torch") is None:
        return ()
    import torch

    found: list[Device] = []
    if torch.cuda.is_available():
        found.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    return tuple(found)


def resolve_device(setting: str = "auto") -> Device:
    """The settings' device ('auto', 'cuda', 'mps', 'cpu') as one that exists here:
    auto prefers CUDA, then MPS, then the CPU; a named accelerator that is missing
    falls back to the CPU."""
    found = accelerators()
    if setting == "auto":
        return found[0] if found else "cpu"
    if setting in found:
        return setting
    return "cpu"

"""Which compute device the model-based tools use, which models stay loaded, and what
happens when the accelerator runs out of memory. torch is imported only when it is
installed and a device question is actually asked (the core runs without it)."""

from __future__ import annotations

import ctypes.util
import gc
import importlib.util
import logging
import os
import platform
import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, TypeVar

from layerpath.errors import ToolFailed

log = logging.getLogger(__name__)

Device = Literal["cuda", "mps", "cpu"]


def _driver_present() -> bool:
    """Whether this machine could have a GPU torch uses, asked without torch (importing
    it takes a second and a few hundred MB): an NVIDIA or ROCm driver, or Apple
    silicon."""
    if sys.platform == "darwin":
        return platform.machine() == "arm64"
    if sys.platform.startswith("linux"):
        return any(os.path.exists(p) for p in ("/proc/driver/nvidia/version", "/dev/kfd"))
    return ctypes.util.find_library("nvcuda") is not None  # Windows


@lru_cache(maxsize=1)
def accelerators() -> tuple[Device, ...]:
    """The accelerators torch can use here (none when torch is not installed)."""
    if not _driver_present() or importlib.util.find_spec("torch") is None:
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


class ModelCache:
    """Loaded models by key, least recently used out first. By default one model is
    resident at a time (`max_models`), and with a `budget_bytes` the resident models'
    weights must also fit it; an evicted model's GPU memory is given back."""

    def __init__(self, max_models: int = 1, budget_bytes: int | None = None) -> None:
        self.max_models = max_models
        self.budget_bytes = budget_bytes
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()

    def get(self, key: Hashable, loader: Callable[[], Any]) -> Any:
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key][0]
        self._fit(incoming=1)  # free memory before loading
        model = loader()
        size = weight_bytes(model)
        self._fit(incoming=1, incoming_bytes=size)
        self._items[key] = (model, size)
        return model

    def configure(self, max_models: int, budget_bytes: int | None) -> None:
        """New limits; models over them are unloaded now."""
        self.max_models, self.budget_bytes = max_models, budget_bytes
        self._fit()

    def _fit(self, incoming: int = 0, incoming_bytes: int = 0) -> None:
        """Unload least recently used models until `incoming` more fit the count and
        `incoming_bytes` more the budget (one model alone may exceed the budget)."""
        while self._items and len(self._items) + incoming > max(1, self.max_models):
            self._evict()
        while (
            self.budget_bytes is not None
            and len(self._items) + incoming > 1
            and self.resident_bytes() + incoming_bytes > self.budget_bytes
        ):
            self._evict()

    def resident_bytes(self) -> int:
        return sum(size for _, size in self._items.values())

    def keys(self) -> list[Hashable]:
        return list(self._items)

    def clear(self) -> None:
        while self._items:
            self._evict()

    def _evict(self) -> None:
        key, _ = self._items.popitem(last=False)
        log.info("unloading model %s", key)
        gc.collect()
        if "cuda" in accelerators():
            import torch

            torch.cuda.empty_cache()


def weight_bytes(model: Any) -> int:
    """The bytes of a torch model's parameters (0 for anything else); a tuple (model,
    tokenizer) and a diffusers pipeline count their parts."""
    if isinstance(model, tuple):
        return sum(weight_bytes(part) for part in model)
    components = getattr(model, "components", None)  # a diffusers pipeline
    if isinstance(components, dict):
        return sum(weight_bytes(part) for part in components.values())
    parameters = getattr(model, "parameters", None)
    if not callable(parameters):
        return 0
    return int(sum(p.numel() * p.element_size() for p in parameters()))


#: the models the model tools have loaded, shared by all of them
RESIDENT = ModelCache()


@dataclass
class Placement:
    """Where the model tools run, from the settings: the device ('auto', 'cuda', 'mps',
    'cpu') and whether large pipelines keep their parts in CPU memory, moving each to the
    GPU only while it runs (slower, for GPUs with little memory)."""

    device: str = "auto"
    cpu_offload: bool = False


#: the settings' placement, shared by all model tools
PLACEMENT = Placement()


def configure_residency(
    max_models: int,
    budget_gb: float | None,
    device: str = "auto",
    cpu_offload: bool = False,
) -> None:
    """Apply the settings to the shared cache (models over the new limits are unloaded)
    and to where the model tools run."""
    RESIDENT.configure(max_models, None if budget_gb is None else int(budget_gb * 1e9))
    PLACEMENT.device, PLACEMENT.cpu_offload = device, cpu_offload


def tool_device(params: Mapping[str, Any]) -> Device:
    """The device a tool runs on: its `device` param when a test or benchmark names one,
    else the settings' device, as one that exists here."""
    return resolve_device(str(params.get("device", PLACEMENT.device)))


def onnx_session(path: str, device: str) -> Any:
    """An ONNX Runtime session for the model file: CUDA first when the device allows it
    and this ONNX Runtime has it (no torch needed to know), else the CPU."""
    import onnxruntime as ort

    providers = ["CPUExecutionProvider"]
    if device in ("auto", "cuda") and "CUDAExecutionProvider" in ort.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")
    return ort.InferenceSession(path, providers=providers)


T = TypeVar("T")


def is_out_of_memory(exc: BaseException) -> bool:
    """CUDA's OutOfMemoryError, or the runtime errors MPS and older torch raise."""
    return type(exc).__name__ == "OutOfMemoryError" or (
        isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()
    )


def with_memory_fallback(
    run: Callable[[str, float], T], device: str, scales: tuple[float, ...] = (1.0, 0.5)
) -> T:
    """run(device, scale) at each scale on `device`, then at full scale on the CPU, moving
    on only when the accelerator runs out of memory. Never lets an OOM reach the host."""
    attempts = [(device, s) for s in scales]
    if device != "cpu":
        attempts.append(("cpu", 1.0))
    for attempt, (where, scale) in enumerate(attempts):
        try:
            return run(where, scale)
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            log.warning("out of memory on %s at scale %.2f; trying again smaller", where, scale)
            RESIDENT.clear()
            if attempt == len(attempts) - 1:
                raise ToolFailed(
                    "The model ran out of memory even at reduced size. Close other programs "
                    "using the GPU, or choose a lighter tool."
                ) from exc
    raise AssertionError("unreachable")

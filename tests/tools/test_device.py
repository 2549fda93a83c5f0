"""Model residency (LRU under a count and a byte budget) and the out-of-memory policy,
with real torch modules; the depth tool falls back to a smaller input when the forward
pass runs out of memory (raised by a hook on the real tiny model, as CUDA would)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from layerpath.errors import ToolFailed
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.tools.device import RESIDENT, ModelCache, weight_bytes, with_memory_fallback
from layerpath.tools.registry import Registry
from tests.conftest import Scene
from tests.tools.installed import install_built

torch = pytest.importorskip("torch")


def test_one_model_is_resident_by_default_least_recently_used_out() -> None:
    loads: list[str] = []

    def loader(name: str, size: int) -> Any:
        loads.append(name)
        return torch.nn.Linear(size, size)

    cache = ModelCache()
    first = cache.get("a", lambda: loader("a", 4))
    assert cache.get("a", lambda: loader("a", 4)) is first and loads == ["a"]
    cache.get("b", lambda: loader("b", 4))
    assert cache.keys() == ["b"]  # a was unloaded
    cache.get("a", lambda: loader("a", 4))
    assert loads == ["a", "b", "a"]

    roomy = ModelCache(max_models=3, budget_bytes=2 * weight_bytes(torch.nn.Linear(16, 16)))
    for name in ("x", "y", "z"):
        roomy.get(name, lambda: torch.nn.Linear(16, 16))
    assert roomy.keys() == ["y", "z"]  # the budget holds two
    roomy.get("y", lambda: torch.nn.Linear(16, 16))
    roomy.get("w", lambda: torch.nn.Linear(16, 16))
    assert roomy.keys() == ["y", "w"]  # z was the least recently used
    assert roomy.resident_bytes() == 2 * (16 * 16 + 16) * 4


def test_the_settings_set_how_many_models_stay_loaded() -> None:
    from layerpath.engine.factory import engine_for
    from layerpath.settings import Settings

    RESIDENT.clear()
    try:
        engine_for(Settings(resident_models=3))
        for name in ("a", "b", "c"):
            RESIDENT.get(name, lambda: torch.nn.Linear(8, 8))
        assert RESIDENT.keys() == ["a", "b", "c"]
        engine_for(Settings(resident_models=2))  # the next run's engine applies it
        assert RESIDENT.keys() == ["b", "c"]
        one = weight_bytes(torch.nn.Linear(8, 8)) / 1e9
        engine_for(Settings(resident_models=2, model_memory_gb=one * 1.5))
        assert RESIDENT.keys() == ["c"]
    finally:
        engine_for(Settings())
        RESIDENT.clear()
    assert RESIDENT.max_models == 1 and RESIDENT.budget_bytes is None


def test_the_settings_choose_where_the_model_tools_run() -> None:
    from layerpath.engine.factory import engine_for
    from layerpath.settings import Settings
    from layerpath.tools.device import PLACEMENT, accelerators, tool_device

    try:
        engine_for(Settings(device="cpu", cpu_offload=True))
        assert tool_device({}) == "cpu" and PLACEMENT.cpu_offload
        assert tool_device({"device": "auto"}) == (accelerators() or ("cpu",))[0]  # a param wins
        engine_for(Settings(device="cuda"))  # a missing accelerator falls back to the CPU
        assert tool_device({}) == ("cuda" if "cuda" in accelerators() else "cpu")
    finally:
        engine_for(Settings())
    assert PLACEMENT.device == "auto" and not PLACEMENT.cpu_offload


def test_out_of_memory_retries_smaller_then_on_the_cpu() -> None:
    tried: list[tuple[str, float]] = []

    def run(device: str, scale: float) -> str:
        tried.append((device, scale))
        if device == "cuda":
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return f"{device}@{scale}"

    assert with_memory_fallback(run, "cuda") == "cpu@1.0"
    assert tried == [("cuda", 1.0), ("cuda", 0.5), ("cpu", 1.0)]

    def always(device: str, scale: float) -> str:
        raise RuntimeError("MPS backend out of memory")

    with pytest.raises(ToolFailed, match="ran out of memory even at reduced size"):
        with_memory_fallback(always, "mps")

    def broken(device: str, scale: float) -> str:
        raise ValueError("a real bug")

    with pytest.raises(ValueError):  # only memory errors are retried
        with_memory_fallback(broken, "cuda")


def test_the_depth_tool_retries_at_half_size_when_memory_runs_out(
    scene: Scene, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from layerpath.tools import depth
    from tests.tools.test_depth import tiny_depth_anything

    tiny_depth_anything(tmp_path / "models" / "depth-anything-small")
    models = install_built(tmp_path / "models", "depth-anything-small")
    sizes: list[int] = []
    real_loader = depth.load_model

    def load_with_a_small_gpu(folder: str, device: str) -> Any:
        model = real_loader(folder, device)

        def check(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            pixels = kwargs["pixel_values"]
            sizes.append(min(pixels.shape[-2:]))
            if min(pixels.shape[-2:]) > 300:
                raise torch.cuda.OutOfMemoryError("CUDA out of memory (test: input too big)")

        model.register_forward_pre_hook(check, with_kwargs=True)
        return model

    RESIDENT.clear()
    monkeypatch.setattr(depth, "load_model", load_with_a_small_gpu)
    tool = Registry.from_catalogue(models=models).get("depth_anything")
    result = tool.run(
        ToolContext(SubtaskKind.DEPTH_ESTIMATION),
        {ArtifactKind.IMAGE: scene.image},
        tool.spec.param_schedule()[0],
    )
    RESIDENT.clear()
    assert sizes[0] > 300 and sizes[-1] <= 300 and len(sizes) == 2
    out = result.outputs[ArtifactKind.DEPTH]
    assert out.shape == scene.image.shape[:2] and np.isfinite(out).all()

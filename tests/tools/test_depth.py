"""Depth Anything through transformers + PyTorch on the CPU, with a tiny model this test
builds (random weights, a 4-layer DINOv2 backbone) and saves with save_pretrained. It is
served by a hub mirror on 127.0.0.1, downloaded with `layerpath models download` and
loaded by the tool's real from_pretrained path, as a user's would be."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from layerpath.engine.files.io import read_layered
from layerpath.engine.types import EditRequest
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.plugin.cli import main
from layerpath.tools.models import ModelManager, load_catalogue
from layerpath.tools.registry import Registry
from tests.conftest import Scene, made_by
from tests.file_server import FileServer

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def tiny_depth_anything(folder: Path) -> None:
    config = transformers.DepthAnythingConfig(
        backbone_config=transformers.Dinov2Config(
            hidden_size=32,
            num_hidden_layers=4,
            num_attention_heads=2,
            intermediate_size=64,
            image_size=56,
            patch_size=14,
            out_features=["stage1", "stage2", "stage3", "stage4"],
            reshape_hidden_states=False,
        ),
        neck_hidden_sizes=[8, 16, 32, 32],
        fusion_hidden_size=16,
        reassemble_hidden_size=32,
        head_hidden_size=8,
        patch_size=14,
    )
    transformers.DepthAnythingForDepthEstimation(config).save_pretrained(folder)


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FileServer:
    """A hub mirror serving the tiny model under the catalogue's repo name."""
    built = tmp_path / "built"
    tiny_depth_anything(built)
    spec = load_catalogue()["depth-anything-small"]
    server = FileServer()
    for file in spec.files:
        data = (built / file.path).read_bytes()
        path = f"/{spec.hub_repo}/resolve/{spec.revision}/{file.path}"
        server.files[path] = data
        if not file.trust_on_first_use:  # what Hugging Face sends for LFS files
            server.headers[path] = {"X-Linked-Etag": f'"{hashlib.sha256(data).hexdigest()}"'}
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-hf-cache"))
    with server:
        yield server


def test_download_then_estimate_depth_from_the_command_line(
    hub: FileServer, scene: Scene, tmp_path: Path
) -> None:
    image, _ = scene.save(tmp_path / "in")
    out = tmp_path / "depth.ora"
    assert main(["edit", str(image), "estimate the depth", "-o", str(out)]) == 1  # no model
    assert main(["models", "download", "depth-anything-small"]) == 0
    assert main(["edit", str(image), "estimate the depth", "-o", str(out)]) == 0
    layers = read_layered(out)
    group = layers.layers[-1]
    (step,) = group.children  # type: ignore[union-attr]
    assert made_by(layers, "depth_anything") == [step] and not step.visible
    pixels = np.asarray(step.pixels)
    assert pixels.shape[:2] == scene.image.shape[:2]  # full size, not the model's 56-ish
    assert pixels[..., 3].min() == 255 and pixels[..., 0].max() == 255
    assert pixels[..., 0].min() == 0  # normalised: near = white, far = black


def test_the_depth_tool_output(hub: FileServer, scene: Scene, tmp_path: Path) -> None:
    from layerpath.settings import data_dir

    models = ModelManager(data_dir() / "models")
    models.download("depth-anything-small")
    tool = Registry.from_catalogue(models=models).get("depth_anything")
    assert tool.availability().ok
    result = tool.run(
        ToolContext(SubtaskKind.DEPTH_ESTIMATION),
        {ArtifactKind.IMAGE: scene.image},
        tool.spec.param_schedule()[0],
    )
    depth = result.outputs[ArtifactKind.DEPTH]
    assert depth.shape == scene.image.shape[:2] and depth.dtype == np.float32
    assert np.isfinite(depth).all() and depth.min() == 0.0 and depth.max() == 1.0


def test_depth_in_a_run_is_one_hidden_full_size_layer(
    hub: FileServer, scene: Scene, tmp_path: Path
) -> None:
    from layerpath.engine.execute.executor import Engine
    from layerpath.settings import data_dir

    ModelManager(data_dir() / "models").download("depth-anything-small")
    result = Engine(Registry.from_catalogue()).run(
        EditRequest("estimate the depth and recolor the wall to navy", scene.snapshot())
    )
    assert result.ok
    steps = [s for o in result.outcomes for s in o.steps]
    depth = next(s for s in steps if s.tool == "depth_anything")
    assert depth.pixels is not None and depth.pixels.shape[:2] == scene.image.shape[:2]
    assert not depth.visible
    # the picture itself is the recolour only: the depth map does not cover it
    wall = scene.masks["wall"]
    assert np.any(result.image[wall] != scene.image[wall])
    assert np.array_equal(result.image[~wall], scene.image[~wall])

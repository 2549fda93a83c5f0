"""The Tool base class: a data-described tool with an implementation."""

from __future__ import annotations

import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from layerpath.errors import ToolFailed
from layerpath.kit.types import ArtifactKind, Availability, ToolContext, ToolResult, ToolSpec
from layerpath.tools.device import PLACEMENT, RESIDENT, accelerators, onnx_session
from layerpath.tools.models import ModelManager, ModelState, human_size


class Tool(ABC):
    """One tool. Its description (`spec`) is data; `run` is the only code."""

    @property
    def reads_user_region(self) -> bool:
        """It hands on the user's own mask or selection (no finder: nothing is guessed)."""
        return self.spec.user_region

    @property
    def finds_regions(self) -> bool:
        """A finder: it looks for the target in the picture alone (a mask, boxes); the
        user's own region, handed on, is not a found one."""
        spec = self.spec
        return (
            not self.reads_user_region
            and set(spec.inputs) == {ArtifactKind.IMAGE}
            and bool({ArtifactKind.BOXES, ArtifactKind.MASK} & set(spec.outputs))
        )

    def __init__(self, spec: ToolSpec, models: ModelManager | None = None) -> None:
        self.spec = spec
        self._models = models

    @property
    def models(self) -> ModelManager:
        """Where this tool's weights live (from the settings unless the registry says)."""
        if self._models is None:
            from layerpath.settings import load_settings

            self._models = ModelManager.from_settings(load_settings())
        return self._models

    def model_file(self) -> Path:
        """The model's first catalogued file (its weights), once downloaded."""
        assert self.spec.model is not None
        folder = self.models.require(self.spec.model)
        return folder / self.models.catalogue[self.spec.model].files[0].path

    def checked_model_file(self) -> Path:
        """The model file re-hashed first: for a pickled checkpoint, which may be
        unpickled only once verified; a clear error when it does not match."""
        assert self.spec.model is not None
        problems = self.models.verify(self.spec.model)
        if problems:
            raise ToolFailed(
                f"The model {self.spec.model} failed its check ({'; '.join(problems)}); "
                f"download it again: layerpath models download {self.spec.model}"
            )
        return self.model_file()

    def availability(self) -> Availability:
        """Whether this tool can run here: its packages, its model, its device. Cheap:
        nothing is imported or loaded to answer."""
        spec = self.spec
        if spec.model is not None and spec.model in self.models.catalogue:
            unpinned = [
                f.path
                for f in self.models.catalogue[spec.model].files
                if f.runs_code and not f.sha256
            ]
            if unpinned:
                return Availability(
                    f"its checkpoint {unpinned[0]} is a pickle, which can run code when "
                    "loaded, and layerpath's model catalogue pins no sha256 for it",
                    "use the tool for the same job whose model is ONNX or safetensors "
                    "(layerpath tools lists them)",
                )
        missing = [m for m in spec.requires if importlib.util.find_spec(m) is None]
        if missing:
            return Availability(
                f"the Python package{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                f"{'are' if len(missing) > 1 else 'is'} not installed",
                spec.install
                or (
                    f'pip install "layerpath[{spec.extra}]"'
                    if spec.extra
                    else "pip install " + " ".join(missing)
                ),
            )
        if spec.model is not None:
            if spec.model not in self.models.catalogue:
                return Availability(
                    f"its model {spec.model} is not in the model catalogue",
                    "reinstall layerpath (tools/data/models.json lists the models)",
                )
            status = self.models.status(spec.model)
            if status.state != ModelState.PRESENT:
                return Availability(
                    f"its model {spec.model} ({human_size(status.spec.size)}) is "
                    f"{status.state.value}",
                    f"layerpath models download {spec.model}",
                )
        if spec.needs_gpu and not accelerators():
            return Availability(
                "it needs a GPU (too slow on a CPU)",
                "use a machine with an NVIDIA GPU or Apple silicon, or another tool",
            )
        return Availability()

    @property
    def name(self) -> str:
        return self.spec.name

    def available(self) -> str | None:
        """None when the tool can run here, else why not and how to fix it."""
        found = self.availability()
        return None if found.ok else f"{found.reason} (fix: {found.fix})"

    def declines(self, ctx: ToolContext) -> str | None:
        """Why this tool cannot do this subtask at all, said before it runs (a finder
        asked for a thing it never finds); None when it may."""
        return None

    @abstractmethod
    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        """Run on the input values (keyed by artifact kind) and return output values."""

    def __repr__(self) -> str:
        return f"<Tool {self.name}>"


class AnyDepth(Tool):
    """A tool whose arithmetic works on a 16-bit picture as on an 8-bit one: a 16-bit
    photo's accepted step is made again from its own values (engine/execute/deepsteps.py)."""

    def run_deep(
        self,
        ctx: ToolContext,
        inputs: Mapping[ArtifactKind, Any],
        params: Mapping[str, Any],
        deep: np.ndarray,
    ) -> np.ndarray:
        result: np.ndarray = self.run(ctx, {**inputs, ArtifactKind.IMAGE: deep}, params).outputs[
            ArtifactKind.IMAGE
        ]
        return result


class OnnxModelTool(Tool):
    """A tool whose model is one ONNX file, run by ONNX Runtime (CUDA when it has it)."""

    def session(self, params: Mapping[str, Any]) -> Any:
        """The model's session on the params' or the settings' device, loaded once."""
        path, device = str(self.model_file()), str(params.get("device", PLACEMENT.device))
        return RESIDENT.get((self.name, path, device), lambda: onnx_session(path, device))

"""The Tool base class: a data-described tool with an implementation."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from layerpath.tools.types import ArtifactKind, ToolContext, ToolResult, ToolSpec


class Tool(ABC):
    """One tool. Its description (`spec`) is data; `run` is the only code."""

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec

    @property
    def name(self) -> str:
        return self.spec.name

    def available(self) -> str | None:
        """None when the tool can run here, else why not (and how to fix it)."""
        return None

    @abstractmethod
    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        """Run on the input values (keyed by artifact kind) and return output values."""

    def __repr__(self) -> str:
        return f"<Tool {self.name}>"

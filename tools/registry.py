"""The tool registry: loads the catalogue (data) and binds each entry to its class."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from layerpath.errors import BadInput
from layerpath.kit.types import ArtifactKind, Prior, Remedy, SubtaskKind, ToolSpec
from layerpath.tools.base import Tool
from layerpath.tools.models import ModelManager


def spec_from_record(record: dict[str, Any]) -> ToolSpec:
    """One catalogue entry -> ToolSpec (priors given as [seconds, quality])."""
    return ToolSpec(
        name=record["name"],
        impl=record["impl"],
        backend=record.get("backend", ""),
        description=record.get("description", ""),
        subtasks=tuple(SubtaskKind(s) for s in record["subtasks"]),
        helps=tuple(SubtaskKind(s) for s in record.get("helps", ())),
        inputs=tuple(ArtifactKind(a) for a in record["inputs"]),
        outputs=tuple(ArtifactKind(a) for a in record["outputs"]),
        priors={
            SubtaskKind(k): Prior(float(v[0]), float(v[1])) for k, v in record["priors"].items()
        },
        params=dict(record.get("params", {})),
        retry_params=tuple(record.get("retry_params", ())),
        remedies=tuple(
            Remedy(
                when=tuple(r["when"]),
                why=str(r["why"]),
                set=dict(r.get("set", {})),
                step=dict(r.get("step", {})),
                factor=dict(r.get("factor", {})),
                limits={k: (float(v[0]), float(v[1])) for k, v in r.get("limits", {}).items()},
            )
            for r in record.get("remedies", ())
        ),
        model=record.get("model"),
        requires=tuple(record.get("requires", ())),
        extra=record.get("extra"),
        install=record.get("install"),
        needs_gpu=bool(record.get("needs_gpu", False)),
        user_region=bool(record.get("user_region", False)),
        label=str(record.get("label") or record["name"]),
    )


@dataclass(frozen=True)
class Service:
    """What a tool family offers the engine besides its tools (reading text back for a
    check, CLIP's similarity for the critic): bound by name in the catalogue's
    "services", so the engine names what it needs and never imports the family."""

    name: str
    impl: str  # module:function
    description: str = ""
    model: str | None = None  # the weights it needs (models catalogue)


def _built_in() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        resources.files("layerpath.tools").joinpath("data/catalogue.json").read_text()
    )
    return loaded


@cache
def services() -> dict[str, Service]:
    """The built-in catalogue's services, by name."""
    return {
        name: Service(name, r["impl"], r.get("description", ""), r.get("model"))
        for name, r in _built_in()["services"].items()
        if not name.startswith("_")
    }


@cache
def service(name: str) -> Callable[..., Any]:
    """The function a service names, imported when first asked for."""
    try:
        impl = services()[name].impl
    except KeyError:
        raise KeyError(f"no tool family offers the service {name!r}") from None
    module_name, _, function = impl.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module_name), function)
    return found


def _instantiate(spec: ToolSpec, models: ModelManager | None) -> Tool:
    module_name, _, class_name = spec.impl.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    tool: Tool = cls(spec, models)
    return tool


class Registry:
    """All tools known to this install, by name."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools = {t.name: t for t in tools}
        self._settled: dict[str, str | None] | None = None

    @classmethod
    def from_catalogue(
        cls, path: Path | None = None, models: ModelManager | None = None
    ) -> Registry:
        """The built-in catalogue (tools/data/catalogue.json) or another file; `models`
        is where model-based tools find their weights (default: from the settings)."""
        try:
            if path is None:
                records = _built_in()["tools"]
            else:
                records = json.loads(Path(path).read_text(encoding="utf-8"))["tools"]
        except (json.JSONDecodeError, KeyError) as exc:
            raise BadInput(f"The tool catalogue is not valid: {exc}") from exc
        return cls(_instantiate(spec_from_record(r), models) for r in records)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def available(self) -> list[Tool]:
        """Tools that can run here now (the planner and search use only these)."""
        return [t for t in self._tools.values() if self.why_unavailable(t.name) is None]

    def why_unavailable(self, name: str) -> str | None:
        """None when the tool can run here, else why not and the fix."""
        if self._settled is not None:
            return self._settled[name]
        return self._tools[name].available()

    @contextmanager
    def settled(self) -> Iterator[None]:
        """Each tool's availability asked once for the whole block (a run asks it
        thousands of times; a model downloaded meanwhile counts from the next block)."""
        if self._settled is not None:  # already inside one
            yield
            return
        self._settled = {name: tool.available() for name, tool in self._tools.items()}
        try:
            yield
        finally:
            self._settled = None

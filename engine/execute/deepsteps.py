"""Step layers of a 16-bit photo at 16 bits.

The tools work on the run's 8-bit picture; a 16-bit photo's own values come back
untouched wherever no step changed them (engine/execute/deep.py). For the pixels a step did
change, a tool that computes in float (it has `run_deep`) works the accepted step out
again on the 16-bit picture, so a recoloured gradient keeps its 16-bit gradations; any
other tool's change is its 8-bit result, scaled up. The run's 16-bit picture is carried
from step to step as the 8-bit one is.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

import numpy as np

from layerpath.engine.execute.deep import sixteen_bit
from layerpath.engine.execute.search import Node
from layerpath.engine.execute.steps import removal_bound
from layerpath.engine.types import ArtifactKind, LayerKind, StepLayer, ToolContext
from layerpath.kit.regions import confined

log = logging.getLogger(__name__)


@dataclasses.dataclass
class DeepTrack:
    """The run's picture at 16 bits (None: the photo is 8-bit, or a step changed the
    canvas's size and the 16-bit picture is no longer followed)."""

    image: np.ndarray | None

    def deepen(
        self, steps: Sequence[StepLayer], path: Sequence[Node], ctx: ToolContext
    ) -> list[StepLayer]:
        """The accepted path's step layers, each picture step with its 16-bit pixels;
        the run's 16-bit picture moved on past the path."""
        if self.image is None:
            return list(steps)
        pending = list(steps)
        done: list[StepLayer] = []
        for node in path:
            assert node.result is not None and node.parent is not None
            produced = node.result.produced
            if ArtifactKind.IMAGE not in produced or self.image is None:
                continue
            before = node.parent.state[ArtifactKind.IMAGE].value
            after = produced[ArtifactKind.IMAGE].value
            if self.image.shape != before.shape:
                self.image = None
                continue
            framing = ArtifactKind.PLACEMENT in produced  # a crop, a turn, a grown canvas
            if after.shape != before.shape or framing:  # a new frame, at 16 bits too
                deep = self._framed(node, after, ctx)
                if deep is None:
                    self.image = None  # (a grown canvas: 8-bit from here on)
                    continue
            else:
                changed = np.any(before != after, axis=2)
                deep = self._after(node, changed, after, ctx)
            # its layer: the first picture layer of this tool not yet given 16 bits (a
            # cut-out's destination-in layer keeps its 8-bit alpha)
            name = node.tool.name if node.tool else None
            for index, step in enumerate(pending):
                if (
                    step.tool == name
                    and step.kind == LayerKind.PIXELS
                    and step.blend == "normal"
                    and step.pixels is not None
                ):
                    pending[index] = _with_deep(step, deep)
                    done.extend(pending[: index + 1])
                    pending = pending[index + 1 :]
                    break
            self.image = deep
        return done + pending

    def _redo(self, node: Node, ctx: ToolContext) -> np.ndarray | None:
        """The step worked out again by its tool on the 16-bit picture (its run_deep, from
        the inputs the step saw); None when the tool has no such way or it failed (the
        8-bit result stands; nothing is lost)."""
        assert self.image is not None and node.tool is not None and node.result is not None
        redo = getattr(node.tool, "run_deep", None)
        if redo is None or node.parent is None:
            return None
        inputs = {k: a.value for k, a in node.parent.state.items()}
        try:
            # (with what the tool settled on the 8-bit picture: a contrast's pivot)
            params = {**node.result.params, **node.result.settled}
            answer = redo(ctx, inputs, params, self.image)
        except Exception as exc:
            log.warning(
                "%s could not work its step out at 16 bits (%s: %s); its 8-bit result stands",
                node.tool.name, type(exc).__name__, exc,
            )  # fmt: skip
            log.info("the traceback:", exc_info=True)
            return None
        ok = isinstance(answer, np.ndarray) and answer.dtype == np.uint16
        return answer if ok else None

    def _framed(self, node: Node, after: np.ndarray, ctx: ToolContext) -> np.ndarray | None:
        """A crop's or a rotation's result made again from the 16-bit picture (the tool's
        run_deep), when it gives the same frame; None when the tool has no such way."""
        answer = self._redo(node, ctx)
        if answer is None or answer.shape != after.shape:
            return None
        # the same frame as the 8-bit step the checks judged, not another one
        sample = (slice(None, None, 7), slice(None, None, 7))
        if np.abs((answer[sample] >> 8).astype(np.int32) - after[sample]).max() > 2:
            log.warning("%s framed the 16-bit picture otherwise; 8-bit from here", node.tool.name)
            return None
        return answer

    def _after(
        self, node: Node, changed: np.ndarray, after: np.ndarray, ctx: ToolContext
    ) -> np.ndarray:
        """The step's result at 16 bits: the photo's own values where it changed
        nothing; where it did, the tool's 16-bit answer, or its 8-bit one scaled up."""
        assert self.image is not None
        deep = self.image.copy()
        answer = self._redo(node, ctx)
        assert node.tool is not None and node.parent is not None
        bound = removal_bound(node.tool, ctx, {k: a.value for k, a in node.parent.state.items()})
        if (
            answer is not None
            and answer.shape == deep.shape
            and bound is not None
            and bound.shape == deep.shape[:2]
        ):
            answer = confined(self.image, answer, bound)  # as the 8-bit step was
        if answer is not None and answer.shape == deep.shape:
            deep[changed] = answer[changed]
        else:
            deep[changed] = sixteen_bit(after[changed])
        return deep


def _with_deep(step: StepLayer, deep: np.ndarray) -> StepLayer:
    """The step layer with its pixels at 16 bits: the same place, size and transparency."""
    assert step.pixels is not None
    x, y = step.offset
    h, w = step.pixels.shape[:2]
    pixels = deep[y : y + h, x : x + w].copy()
    if pixels.shape[:2] != (h, w):
        return step
    pixels[..., 3] = sixteen_bit(step.pixels[..., 3])
    return dataclasses.replace(step, deep=pixels)

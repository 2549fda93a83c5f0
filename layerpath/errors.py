"""The one error hierarchy of layerpath.

It sits at the package root, below every layer, because tools raise these errors
as well as the engine. Each message says what happened and what the user can do.
"""

from __future__ import annotations


class LayerpathError(Exception):
    """Base of every error a user can cause or act on."""


class UnsupportedInstruction(LayerpathError):
    """The instruction asks for nothing layerpath can do."""


class TargetNotFound(LayerpathError):
    """The instruction names an object that no mask, selection or detector provides."""


class ModelMissing(LayerpathError):
    """A tool needs model weights that are not on this machine."""


class DownloadFailed(LayerpathError):
    """Model weights could not be downloaded or did not pass their sha256 check."""


class ToolFailed(LayerpathError):
    """A tool ran but could not produce a result."""


class ToolUnavailable(LayerpathError):
    """No available tool can do a subtask."""


class BadInput(LayerpathError):
    """An input file or argument is unreadable or inconsistent."""


class PlannerError(LayerpathError):
    """The LLM planner could not produce a valid plan."""


class Cancelled(LayerpathError):
    """The user cancelled the run."""

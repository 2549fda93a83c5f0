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


def shown(text: str, limit: int = 120) -> str:
    """User text (an instruction, a mask's name, words read from a picture) as it may
    appear inside a message: control characters escaped (a terminal escape code in an
    instruction must not recolour or clear the terminal it is echoed to) and anything
    past `limit` characters cut with an ellipsis (a 100 kB instruction is not echoed
    whole)."""
    escaped = "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text
    )
    return escaped if len(escaped) <= limit else escaped[: limit - 1] + "…"


def printable(message: str) -> str:
    """A whole message for a terminal: control characters escaped, line breaks kept."""
    return "\n".join(shown(line, limit=1 << 30) for line in message.split("\n"))

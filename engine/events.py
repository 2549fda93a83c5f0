"""Typed events a run emits through `on_event` (the panel and CLI render them).

A run's events come in this order: PlanReady (or PlanWarning, then PlanReady); for
each subtask SubtaskStarted, then for each tool call ToolStarted (ToolProgress from a
long tool, Retry when it is tried again), FallbackToSearch when the rule's result did
not pass, StepDone for each step kept, and SubtaskDone or SubtaskFailed; last RunDone
(or RunFailed). LearntRuleUsed says a rule learnt from the user's runs served.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from layerpath.engine.types import RunResult, StepLayer, Subtask, SubtaskOutcome


@dataclass(frozen=True)
class PlanReady:
    plan: tuple[Subtask, ...]
    planner: str


@dataclass(frozen=True)
class PlanWarning:
    message: str


@dataclass(frozen=True)
class LearntRuleUsed:
    """A rule learnt from the user's runs serves a subtask: said, never silent."""

    subtask: Subtask
    rule_id: str
    message: str


@dataclass(frozen=True)
class SubtaskStarted:
    subtask: Subtask
    index: int
    total: int
    route: str  # 'rule:<id>' or 'search'


@dataclass(frozen=True)
class ToolStarted:
    subtask: Subtask
    tool: str
    params: dict[str, Any]


@dataclass(frozen=True)
class ToolProgress:
    """How far a long tool is (share 0..1): denoising steps, iterations."""

    subtask: Subtask
    tool: str
    share: float


@dataclass(frozen=True)
class Retry:
    """A tool tried again: its last score and the next try's parameters, and why they
    are those (what reflection answered, or the tool's retry schedule)."""

    subtask: Subtask
    tool: str
    quality: float
    next_params: dict[str, Any]
    why: str = ""


@dataclass(frozen=True)
class FallbackToSearch:
    subtask: Subtask
    reason: str  # 'no rule' or 'rule failed: ...'


@dataclass(frozen=True)
class StepDone:
    subtask: Subtask
    step: StepLayer


@dataclass(frozen=True)
class SubtaskDone:
    outcome: SubtaskOutcome


@dataclass(frozen=True)
class SubtaskFailed:
    outcome: SubtaskOutcome


@dataclass(frozen=True)
class RunDone:
    result: RunResult


@dataclass(frozen=True)
class RunFailed:
    message: str


Event = (
    PlanReady
    | PlanWarning
    | LearntRuleUsed
    | SubtaskStarted
    | ToolStarted
    | ToolProgress
    | Retry
    | FallbackToSearch
    | StepDone
    | SubtaskDone
    | SubtaskFailed
    | RunDone
    | RunFailed
)

#: what a run tells its host as it goes
OnEvent = Callable[[Event], None]

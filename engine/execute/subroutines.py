"""Subroutine rules (FaSTA*): proven tool sequences with symbolic activation conditions.

One table, each rule with its provenance (`source`): shipped with layerpath
(engine/data/subroutines.json, read-only), mined here from traces, or a user's saved
action (engine/learn/rulebook.py keeps the last two in the data folder). A rule activates when
every condition holds for the probed features of its subtask; a user's rule that
activates is preferred, and among the others the one minimising
C_avg^alpha * (2 - Q_avg)^(2 - alpha) is chosen.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from layerpath.engine.execute.search import combine
from layerpath.engine.learn.knowledge import BenchmarkTable
from layerpath.engine.types import Prior, SubtaskKind
from layerpath.tools.registry import Registry


class Condition(BaseModel):
    """feature <op> value; exactly one operator is set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    feature: str
    eq: Any = None
    ne: Any = None
    in_: list[Any] | None = Field(default=None, alias="in")
    lt: float | None = None
    gt: float | None = None

    def holds(self, features: Mapping[str, Any]) -> bool:
        if self.feature not in features:
            return False  # an unknown feature never activates a rule
        value = features[self.feature]
        if self.in_ is not None:
            return value in self.in_
        if self.lt is not None:
            return float(value) < self.lt
        if self.gt is not None:
            return float(value) > self.gt
        if self.ne is not None:
            return bool(value != self.ne)
        return bool(value == self.eq)


Source = Literal["shipped", "mined", "user"]


class Rule(BaseModel):
    """A tool sequence for one kind of subtask, the conditions it is proven under, and
    where it comes from. `params` (one mapping per tool) makes it replay exactly those
    parameters, as a saved action does; without them each tool runs its schedule."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    subtask: SubtaskKind
    tools: list[str]
    conditions: list[Condition] = []
    source: Source = "shipped"
    note: str = ""  # where it comes from, in words
    params: list[dict[str, Any]] | None = None
    support: int = 0  # the traces it was mined from
    cost: float | None = None  # measured mean seconds
    quality: float | None = None  # measured mean quality
    accepted: str | None = None  # when it was accepted or saved (ISO date)
    # a saved action's subtask: the object (a mask's name), the colour or text, its words
    target: str | None = None
    to: str | None = None
    subtask_params: dict[str, Any] = {}

    def active(self, features: Mapping[str, Any]) -> bool:
        return all(c.holds(features) for c in self.conditions)

    @property
    def route(self) -> str:
        """How a run names what solved a subtask: rule:SR4, or action:NAME."""
        return f"{'action' if self.source == 'user' else 'rule'}:{self.id}"

    def params_for(self, index: int) -> dict[str, Any] | None:
        return None if self.params is None else self.params[index]


class RuleTable:
    """The rules, with availability resolved against this install's registry."""

    def __init__(
        self, rules: Iterable[Rule], registry: Registry, pinned: Iterable[str] = ()
    ) -> None:
        self.rules = list(rules)
        self.registry = registry
        # rules the user pinned: each serves its kind wherever it applies, whatever rule
        # is learnt later (`layerpath rules pin`)
        self.pinned = set(pinned)

    @classmethod
    def load(cls, registry: Registry, path: Path | None = None) -> RuleTable:
        if path is None:
            text = resources.files("layerpath.engine").joinpath("data/subroutines.json").read_text()
        else:
            text = Path(path).read_text(encoding="utf-8")
        return cls((Rule.model_validate(r) for r in json.loads(text)["rules"]), registry)

    def unavailable_reason(self, rule: Rule) -> str | None:
        for name in rule.tools:
            if name not in self.registry:
                return f"tool {name} is not installed"
            reason = self.registry.why_unavailable(name)
            if reason:
                return f"{name}: {reason}"
        return None

    def expected(self, rule: Rule, table: BenchmarkTable) -> Prior:
        """C_avg and Q_avg of the rule from its tools' benchmark entries."""
        priors = [table.prior(self.registry.get(name), rule.subtask) for name in rule.tools]
        return Prior(sum(p.cost for p in priors), math.prod(p.quality for p in priors))

    def select(
        self, kind: SubtaskKind, features: Mapping[str, Any], table: BenchmarkTable, alpha: float
    ) -> Rule | None:
        """The user's own rule (a saved action) whose conditions hold, else a rule they
        pinned, else the cheapest available rule whose conditions hold, or None."""
        candidates = [
            r
            for r in self.rules
            if r.subtask == kind and r.active(features) and self.unavailable_reason(r) is None
        ]
        candidates = [r for r in candidates if r.source == "user"] or candidates
        candidates = [r for r in candidates if r.id in self.pinned] or candidates
        if not candidates:
            return None

        def value(rule: Rule) -> float:
            prior = self.expected(rule, table)
            return combine(prior.cost, prior.quality, alpha)

        return min(candidates, key=value)

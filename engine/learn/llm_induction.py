"""The LLM inducer: rules proposed by a model through the configured OpenAI-compatible
endpoint, in the shape of FaSTA*'s induction prompt (the traces summarised per subtask
kind, tool path and features, with the current rule table and the tools), answered as
JSON. Every proposed rule is validated (its kind, its tools exist and finish the kind,
its conditions name features the traces have, one operator each); one that does not
validate is dropped with the reason logged and kept as a decision. A rule that verification rejects goes back to the model with the measured cost
and accuracy change, up to two times.

The traces hold no pixels, no OCR text and no secrets, so neither does the prompt.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from layerpath.engine.execute.subroutines import Condition, Rule, RuleTable
from layerpath.engine.learn.induction import Candidate, Decision, Evidence, rule_id
from layerpath.engine.plan.llm_planner import LlmPlanner
from layerpath.engine.types import SubtaskKind
from layerpath.errors import LayerpathError, shown
from layerpath.settings.secrets import redact
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)

#: summary lines of traces in one prompt
MAX_LINES = 200

SYSTEM_PROMPT = """You induce subroutine rules for an image-editing agent (FaSTA*).
A rule is a tool path that solves one kind of subtask, with activation conditions over
the subtask's probed features: {{"subtask": KIND, "tools": [TOOL, ...], "conditions":
[{{"feature": NAME, "eq"|"ne"|"in"|"lt"|"gt": VALUE}}], "why": "one sentence"}}.
You get the execution traces (per kind, tool path and features: how often the checks
accepted or rejected the result, its mean cost in seconds and quality), the current
rules, and the tools with the kinds they finish. Propose rules that let the agent skip
the search where a path reliably works, with conditions that keep each rule away from
where it failed; refine a current rule by proposing a narrower one. Use only the tools
and feature names given. Answer only JSON: {{"rules": [...]}} (an empty list if none)."""


def summary(found: Sequence[Evidence], limit: int = MAX_LINES) -> list[str]:
    """The traces as lines: kind | tools | features | accepted/rejected | cost | quality."""
    groups: dict[tuple[str, tuple[str, ...], str], list[Evidence]] = defaultdict(list)
    for item in found:
        key = (item.kind.value, item.tools, json.dumps(dict(item.features), sort_keys=True))
        groups[key].append(item)
    lines = []
    for (kind, tools, features), items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        ok = sum(1 for e in items if e.ok)
        cost = sum(e.cost for e in items) / len(items)
        quality = sum(e.quality for e in items) / len(items)
        lines.append(
            f"{kind} | {' > '.join(tools)} | {features} | accepted {ok}, rejected "
            f"{len(items) - ok} | {cost:.2f} s | q {quality:.2f}"
        )
    return lines[:limit]


class LlmInducer:
    """Proposes rules through the endpoint; PlannerError/APIError are the caller's to
    report (learning goes on with the offline inducer)."""

    name = "llm"

    def __init__(self, planner: LlmPlanner, registry: Registry) -> None:
        self.planner = planner
        self.registry = registry
        self.rejected: list[Decision] = []  # proposals that did not validate
        self._messages: list[dict[str, Any]] = []
        self._features: set[str] = set()

    def _tools(self) -> str:
        return "\n".join(
            f"{t.name}: finishes {', '.join(k.value for k in t.spec.subtasks) or 'nothing'}; "
            f"needs {', '.join(a.value for a in t.spec.inputs)}"
            for t in self.registry
        )

    def propose(self, found: Sequence[Evidence], table: RuleTable) -> Sequence[Candidate]:
        if not found:
            return []
        self._features = {name for e in found for name in e.features}
        rules = "\n".join(
            json.dumps(
                r.model_dump(
                    mode="json", by_alias=True, include={"id", "subtask", "tools", "conditions"}
                )
            )
            for r in table.rules
        )
        self._messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {
                "role": "user",
                "content": "Traces (kind | tools | features | checks | cost | quality):\n"
                + "\n".join(summary(found))
                + f"\n\nCurrent rules:\n{rules}\n\nTools:\n{self._tools()}",
            },
        ]
        from openai import APIError

        try:
            answer = self.planner.ask(self._messages)
        except (APIError, LayerpathError) as exc:  # learning goes on without it
            reason = redact(shown((str(exc).splitlines() or [""])[0], 200))
            self._drop({}, f"the endpoint gave no rules ({reason})")
            return []
        self._messages.append({"role": "assistant", "content": answer})
        return self._parse(answer, found)

    def retry(self, candidate: Candidate, decision: Decision) -> Candidate | None:
        self._messages.append(
            {
                "role": "user",
                "content": f"Rule {json.dumps(decision.rule)} was rejected on the replay set: "
                f"{decision.reason}. Propose one corrected rule for that kind, or none. "
                'Answer only JSON: {"rules": [...]}.',
            }
        )
        from openai import APIError

        try:
            answer = self.planner.ask(self._messages)
        except (APIError, LayerpathError) as exc:
            log.warning("the LLM inducer could not retry: %s", redact(str(exc)))
            return None
        self._messages.append({"role": "assistant", "content": answer})
        again = [c for c in self._parse(answer, ()) if c.rule.subtask == candidate.rule.subtask]
        return again[0] if again else None

    def _parse(self, answer: str, found: Sequence[Evidence]) -> list[Candidate]:
        try:
            raw = json.loads(answer)
            items = raw["rules"] if isinstance(raw, dict) else None
            if not isinstance(items, list):
                raise ValueError("no list of rules")
        except (ValueError, KeyError, TypeError) as exc:
            self._drop({"answer": shown(answer, 200)}, f"the answer is not JSON rules ({exc})")
            return []
        out = []
        for item in items:
            rule = self._validated(item)
            if rule is not None:
                positive = tuple(
                    e.features
                    for e in found
                    if e.ok and e.kind == rule.subtask and e.tools == tuple(rule.tools)
                )
                out.append(Candidate(rule, positive, ()))
        return out

    def _validated(self, item: Any) -> Rule | None:
        """The proposed rule as a mined Rule, or None (dropped, reason logged)."""
        if not isinstance(item, dict):
            self._drop({"rule": shown(repr(item), 200)}, "a rule is a JSON object")
            return None
        why = str(item.get("why", ""))[:200]
        body = {k: item.get(k) for k in ("subtask", "tools", "conditions") if k in item}
        try:
            kind = SubtaskKind(body.get("subtask"))
            tools = [str(t) for t in body.get("tools") or []]
            conditions = [Condition.model_validate(c) for c in body.get("conditions") or []]
        except (ValueError, TypeError, ValidationError) as exc:
            self._drop(body, f"it does not validate: {shown(str(exc), 160)}")
            return None
        unknown = [t for t in tools if t not in self.registry]
        if not tools or unknown:
            self._drop(body, f"unknown tools: {', '.join(unknown) or 'none given'}")
            return None
        if kind not in self.registry.get(tools[-1]).spec.subtasks:
            self._drop(body, f"{tools[-1]} does not finish {kind.value}")
            return None
        for condition in conditions:
            operators = [
                op for op in ("eq", "ne", "in_", "lt", "gt") if getattr(condition, op) is not None
            ]
            if condition.feature not in self._features or len(operators) != 1:
                self._drop(body, f"condition on '{shown(condition.feature, 40)}' is not usable")
                return None
        return Rule(
            id=rule_id(kind, tools, conditions, prefix="L"),
            subtask=kind,
            tools=tools,
            conditions=conditions,
            source="mined",
            note=f"proposed by the LLM inducer: {why}" if why else "proposed by the LLM inducer",
        )

    def _drop(self, rule: dict[str, Any], reason: str) -> None:
        log.warning("the LLM inducer's rule was dropped: %s", reason)
        self.rejected.append(
            Decision(rule, self.name, 0, None, None, None, False, f"dropped: {reason}")
        )

"""Rules learnt from experience (FaSTA*'s induction), verified before use.

Induction reads the trace store: for each kind of subtask, the tool paths that solved it
and the probed features of the subtasks they solved. It learns only from attempts the
quality checks judged: an accepted path (the checks passed it) or a rule the checks
turned down; a subtask the checks could not vouch for at all (the ground too varied, a
user error, a budget spent: route 'failed') teaches nothing.

The offline inducer proposes, for each path with enough support, a rule whose conditions
(feature in the values seen where it worked) exclude as many of the places it did not
work as they can: where a rule of that path was turned down, and where the search
found another path. The LLM inducer (engine/learn/llm_induction.py) proposes through the
configured endpoint.

Every proposal is verified against the current table on a replay set with ground truth
(the generated scenes suite, tasks with a subtask of the rule's kind): with the rule
added, the change in cost (ΔC %, in the benchmark table's seconds) and in accuracy
(ΔQ %); net benefit B = ΔC % − ΔQ %. A rule is accepted when B < 0, or when B = 0
without a loss of accuracy (it does what the search did and spares the search; see
verify); else the inducer may tighten it (one more condition) up to two times. Every
decision is kept.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

from layerpath.engine.execute.subroutines import Condition, Rule, RuleTable
from layerpath.engine.learn.knowledge import BenchmarkTable
from layerpath.engine.types import RunResult, SubtaskKind
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)

#: successful attempts a path needs before a rule is proposed for it
MIN_SUPPORT = 3
#: conditions a mined rule may have
MAX_CONDITIONS = 3
#: retries the inducer gets after a rejection
RETRIES = 2
#: proposals per kind of subtask in one induction
PER_KIND = 2


@dataclass(frozen=True)
class Evidence:
    """One judged attempt from the traces."""

    kind: SubtaskKind
    route: str
    tools: tuple[str, ...]
    features: Mapping[str, Any]
    ok: bool
    cost: float
    quality: float


def judged(
    rows: Iterable[Mapping[str, Any]], table: RuleTable
) -> Iterator[tuple[Mapping[str, Any], tuple[str, ...], dict[str, Any]]]:
    """The trace rows of attempts the checks judged, each with its tool path (a
    turned-down rule's row recorded without one gets the rule's) and its features. A
    subtask the checks could not vouch for (route 'failed') teaches nothing."""
    tools_of = {r.route: tuple(r.tools) for r in table.rules}
    kinds = {k.value for k in SubtaskKind}
    for row in rows:
        route = str(row.get("route", ""))
        if route == "failed" or row.get("subtask_kind") not in kinds:
            continue
        try:
            tools = tuple(json.loads(row["tool_path"])) or tools_of.get(route, ())
            features = json.loads(row["features"])
        except (KeyError, TypeError, ValueError):
            continue
        if tools and isinstance(features, dict):
            yield row, tools, features


def evidence(rows: Iterable[Mapping[str, Any]], table: RuleTable) -> list[Evidence]:
    """The attempts the checks judged, as induction reads them."""
    return [
        Evidence(
            SubtaskKind(row["subtask_kind"]),
            str(row["route"]),
            tools,
            features,
            bool(row.get("ok")),
            float(row.get("cost") or 0.0),
            float(row.get("quality") or 0.0),
        )
        for row, tools, features in judged(rows, table)
    ]


def _categorical(features: Mapping[str, Any]) -> dict[str, Any]:
    """The features a condition may name: words, flags and small counts."""
    return {
        k: v
        for k, v in features.items()
        if isinstance(v, (str, bool)) or (isinstance(v, int) and 0 <= v <= 8)
    }


def _holds(conditions: Sequence[Condition], features: Mapping[str, Any]) -> bool:
    return all(c.holds(features) for c in conditions)


def _best_condition(
    positive: Sequence[Mapping[str, Any]],
    negative: Sequence[Mapping[str, Any]],
    used: set[str],
) -> Condition | None:
    """The condition (a feature in the values the path worked with) that keeps every
    positive and excludes the most negatives; None when none excludes any."""
    best: tuple[int, str, Condition] | None = None
    names = set().union(*(_categorical(f) for f in positive)) - used if positive else set()
    for name in sorted(names):
        if not all(name in f for f in positive):
            continue
        values = sorted({json.dumps(f[name]) for f in positive})
        condition = Condition.model_validate(
            {"feature": name, "in": [json.loads(v) for v in values]}
        )
        excluded = sum(1 for f in negative if not condition.holds(f))
        if excluded and (best is None or excluded > best[0]):
            best = (excluded, name, condition)
    return None if best is None else best[2]


@dataclass(frozen=True)
class Candidate:
    """A proposed rule and what it was learnt from (for the retries)."""

    rule: Rule
    positive: tuple[Mapping[str, Any], ...]
    negative: tuple[Mapping[str, Any], ...]


def rule_id(
    kind: SubtaskKind, tools: Sequence[str], conditions: Sequence[Condition], prefix: str = "M"
) -> str:
    """A learnt rule's id: the same kind, tools and conditions give the same id (the
    prefix says which inducer: M offline, L the LLM's)."""
    key = json.dumps(
        [
            kind.value,
            list(tools),
            [c.model_dump(by_alias=True, exclude_none=True) for c in conditions],
        ]
    )
    return f"{prefix}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def _mined(
    kind: SubtaskKind,
    tools: Sequence[str],
    conditions: Sequence[Condition],
    works: Sequence[Evidence],
    note: str,
) -> Rule:
    return Rule(
        id=rule_id(kind, tools, conditions),
        subtask=kind,
        tools=list(tools),
        conditions=list(conditions),
        source="mined",
        note=note,
        support=len(works),
        cost=round(float(np.mean([e.cost for e in works])), 4),
        quality=round(float(np.mean([e.quality for e in works])), 4),
    )


def induce_offline(
    found: Sequence[Evidence], table: RuleTable, min_support: int = MIN_SUPPORT
) -> list[Candidate]:
    """Rules proposed from the judged attempts: per kind, its best-supported paths."""
    known = {rule_id(r.subtask, r.tools, r.conditions) for r in table.rules}
    by_kind: dict[SubtaskKind, list[Evidence]] = defaultdict(list)
    for item in found:
        by_kind[item.kind].append(item)
    proposals: list[Candidate] = []
    for kind, items in by_kind.items():
        support = Counter(e.tools for e in items if e.ok)
        for tools, count in support.most_common(PER_KIND):
            if count < min_support:
                continue
            works = [e for e in items if e.ok and e.tools == tools]
            positive = [e.features for e in works]
            # where it did not work: a rule of this path turned down, or another path
            # was the answer
            negative = [e.features for e in items if (e.tools == tools) != e.ok]
            conditions: list[Condition] = []
            while len(conditions) < MAX_CONDITIONS:
                left = [f for f in negative if _holds(conditions, f)]
                chosen = _best_condition(positive, left, {c.feature for c in conditions})
                if chosen is None:
                    break
                conditions.append(chosen)
            if rule_id(kind, tools, conditions) in known:
                continue
            note = f"mined from {count} accepted {' → '.join(tools)} results"
            proposals.append(
                Candidate(
                    _mined(kind, tools, conditions, works, note), tuple(positive), tuple(negative)
                )
            )
    return proposals


def tightened(candidate: Candidate) -> Candidate | None:
    """The inducer's retry after a rejection: the rule with one more condition, the one
    that keeps all its positives and excludes the most of what remains; None when no
    condition narrows it further."""
    rule = candidate.rule
    used = {c.feature for c in rule.conditions}
    if len(rule.conditions) >= MAX_CONDITIONS:
        return None
    left = [f for f in candidate.negative if _holds(rule.conditions, f)]
    chosen = _best_condition(candidate.positive, left, used)
    if chosen is None:
        # nothing separates it from its failures: keep it to where it worked most
        counts: Counter[tuple[str, str]] = Counter()
        for features in candidate.positive:
            for name, value in _categorical(features).items():
                if name not in used:
                    counts[(name, json.dumps(value))] += 1
        if not counts:
            return None
        (name, value), _ = counts.most_common(1)[0]
        chosen = Condition.model_validate({"feature": name, "in": [json.loads(value)]})
    conditions = [*rule.conditions, chosen]
    narrowed = rule.model_copy(
        update={"conditions": conditions, "id": rule_id(rule.subtask, rule.tools, conditions)}
    )
    return Candidate(narrowed, candidate.positive, candidate.negative)


# --- verification ----------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    """A table's runs on the replay set: cost in the benchmark table's seconds, mean
    accuracy against the truth, and how many subtasks the rule in question solved."""

    cost: float
    accuracy: float
    applied: int = 0


@dataclass
class Decision:
    """One proposal and what verification made of it."""

    rule: dict[str, Any]
    inducer: str
    attempt: int
    delta_cost: float | None
    delta_quality: float | None
    benefit: float | None
    accepted: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


ReplayRun = Callable[[RuleTable, SubtaskKind, str | None], Measured]


def charged(result: RunResult, table: BenchmarkTable, registry: Registry) -> float:
    """A run's cost in the benchmark table's seconds (repeatable, unlike the clock)."""
    kind_of = {o.subtask.id: o.subtask.kind for o in result.outcomes}
    return sum(
        table.prior(registry.get(call.tool), kind_of[call.subtask_id]).cost
        for call in result.calls
        if call.subtask_id in kind_of and call.tool in registry
    )


def verify(candidate: Rule, current: RuleTable, replay: ReplayRun) -> Decision:
    """Net benefit of adding `candidate` to the current table on the replay set."""
    before = replay(current, candidate.subtask, None)
    after = replay(
        RuleTable([*current.rules, candidate], current.registry), candidate.subtask, candidate.id
    )
    rule = candidate.model_dump(mode="json", by_alias=True, exclude_none=True)
    if after.applied == 0:
        return Decision(rule, "", 0, 0.0, 0.0, 0.0, False, "it never applied on the replay set")
    delta_cost = 100.0 * (after.cost - before.cost) / max(before.cost, 1e-6)
    delta_quality = 100.0 * (after.accuracy - before.accuracy) / max(before.accuracy, 1e-6)
    benefit = delta_cost - delta_quality
    # B < 0: cheaper or better. B = 0 with no loss of accuracy: the rule does what the
    # search found, and spares it its own work (the candidates it probes and checks:
    # outside the tools' seconds that C counts, a third of the engine's time on the suite)
    accepted = benefit < 0 or (benefit == 0 and delta_quality >= 0)
    reason = f"cost {delta_cost:+.1f} %, accuracy {delta_quality:+.1f} %: " + (
        "accepted" if accepted else "no net benefit"
    )
    return Decision(
        rule,
        "",
        0,
        round(delta_cost, 2),
        round(delta_quality, 2),
        round(benefit, 2),
        accepted,
        reason,
    )


class Inducer(Protocol):
    """What proposes rules from the judged attempts, and another try after a rejection."""

    name: str

    def propose(self, found: Sequence[Evidence], table: RuleTable) -> Sequence[Candidate]: ...

    def retry(self, candidate: Candidate, decision: Decision) -> Candidate | None: ...


class OfflineInducer:
    """The symbolic inducer: paths and separating conditions; a retry tightens."""

    name = "offline"

    def __init__(self, min_support: int = MIN_SUPPORT) -> None:
        self.min_support = min_support

    def propose(self, found: Sequence[Evidence], table: RuleTable) -> Sequence[Candidate]:
        return induce_offline(found, table, self.min_support)

    def retry(self, candidate: Candidate, decision: Decision) -> Candidate | None:
        return tightened(candidate)


def learn(
    rows: Iterable[Mapping[str, Any]],
    current: RuleTable,
    replay: ReplayRun,
    inducers: Sequence[Inducer] = (OfflineInducer(),),
    on_decision: Callable[[Decision], None] = lambda d: None,
    rejected: set[str] | None = None,
) -> tuple[list[Rule], list[Decision]]:
    """Propose, verify, retry (up to RETRIES times): the accepted rules and every
    decision. `rejected`: ids verification turned down before (the replay set is the
    same, so they are not replayed again; the ids rejected now are added)."""
    rejected = set() if rejected is None else rejected
    found = evidence(rows, current)
    accepted: list[Rule] = []
    decisions: list[Decision] = []
    table = current
    for inducer in inducers:
        for candidate in inducer.propose(found, table):
            attempt: Candidate | None = candidate
            for number in range(RETRIES + 1):
                if attempt is None:
                    break
                if any(r.id == attempt.rule.id for r in table.rules):
                    break  # (another inducer's rule, already in)
                if attempt.rule.id in rejected:  # decided before: straight to a retry
                    before = Decision(
                        attempt.rule.model_dump(mode="json", by_alias=True, exclude_none=True),
                        inducer.name,
                        number,
                        None,
                        None,
                        None,
                        False,
                        "verification rejected it before",
                    )
                    attempt = inducer.retry(attempt, before) if number < RETRIES else None
                    continue
                decision = verify(attempt.rule, table, replay)
                decision.inducer, decision.attempt = inducer.name, number
                decisions.append(decision)
                on_decision(decision)
                if decision.accepted:
                    rule = attempt.rule.model_copy(
                        update={"accepted": datetime.date.today().isoformat()}
                    )
                    accepted.append(rule)
                    table = RuleTable([*table.rules, rule], table.registry)
                    break
                rejected.add(attempt.rule.id)
                attempt = inducer.retry(attempt, decision) if number < RETRIES else None
    return accepted, decisions

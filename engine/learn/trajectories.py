"""Trajectories: the trace store as training data for a local planner.

Each judged attempt at a subtask becomes one trajectory step: the state (the subtask's
kind, object, new value and parameters, the probed features, the speed/quality
setting), the action (the tool path and each tool's parameters) and what came of it
(cost, quality, whether the checks accepted it, a reward). As induction does
(engine/learn/induction.py), only what the checks judged is kept: a subtask they could not
vouch for, a user error or a spent budget (route 'failed') teaches nothing, and a rule
they turned down is the rule's path with its failure.

Three exports:
- `jsonl`: one trajectory step per line, everything above.
- `sft`: chat examples (system, user = the state, assistant = the path as JSON) of the
  accepted attempts whose reward reaches a bar; with `weighted`, every accepted attempt,
  each with its reward as the example's weight.
- `dpo`: preference pairs from one subtask's attempts: the accepted path chosen over a
  path the checks turned down for the same subtask in the same run.

The features hold no text read from the image (engine/execute/probe.py), so neither does this;
the subtask's words are the user's own instruction.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from layerpath.choices import TRACE_FORMATS
from layerpath.engine.execute.subroutines import RuleTable
from layerpath.engine.learn.induction import judged

#: the reward's price of a second of tool time (a path that takes a minute longer has
#: to be 1.2 better in quality to be worth it: quality runs 0..1)
REWARD_PER_SECOND = 0.02
SYSTEM = (
    "You choose layerpath's tool path for one subtask of a photo edit. You are given the "
    "subtask, the features probed on the photo and the speed/quality setting alpha (0 = best "
    'quality, 2 = cheapest). Answer with JSON only: {"tools": [tool names in order], '
    '"params": [one object of parameters per tool]}.'
)


def reward(ok: bool, quality: float, cost: float) -> float:
    """The checks' quality for an accepted path, nothing for a turned-down one, less
    REWARD_PER_SECOND for every second of tool time."""
    return round((quality if ok else 0.0) - REWARD_PER_SECOND * cost, 4)


def trajectories(rows: Iterable[Mapping[str, Any]], rules: RuleTable) -> list[dict[str, Any]]:
    """The judged attempts of the trace store's rows (TraceStore.attempts()), oldest
    first, as trajectory steps."""
    found = []
    for row, path, features in judged(rows, rules):
        tools = list(path)
        try:
            params = list(json.loads(row["params"]))
            subtask = json.loads(row.get("subtask") or "{}")
            failures = list(json.loads(row.get("failures") or "[]"))
        except (KeyError, TypeError, ValueError):
            continue
        if not isinstance(subtask, dict):
            continue
        route = str(row["route"])
        ok, quality, cost = bool(row.get("ok")), float(row["quality"]), float(row["cost"])
        found.append(
            {
                "run": row.get("run_id"),
                "subtask_id": row.get("subtask_id") or None,
                "state": {
                    "subtask": subtask or {"kind": row["subtask_kind"]},
                    "features": features,
                    "alpha": float(row.get("alpha") or 1.0),
                },
                "route": route,
                "mode": row.get("mode"),
                "tool_path": tools,
                "params": params if len(params) == len(tools) else [{} for _ in tools],
                "cost": round(cost, 4),
                "quality": round(quality, 4),
                "ok": ok,
                "failures": failures,
                "reward": reward(ok, quality, cost),
            }
        )
    return found


def _prompt(step: Mapping[str, Any]) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": json.dumps(step["state"], sort_keys=True, default=str)},
    ]


def _answer(step: Mapping[str, Any]) -> dict[str, str]:
    path = {"tools": step["tool_path"], "params": step["params"]}
    return {"role": "assistant", "content": json.dumps(path, sort_keys=True, default=str)}


def sft_examples(
    steps: Iterable[Mapping[str, Any]], min_reward: float = 0.5, weighted: bool = False
) -> list[dict[str, Any]]:
    """Chat examples of the accepted paths: those reaching `min_reward` (reward-filtered)
    or, `weighted`, all of them with their reward as weight (reward-weighted)."""
    examples = []
    for step in steps:
        if not step["ok"] or (not weighted and step["reward"] < min_reward):
            continue
        example: dict[str, Any] = {"messages": [*_prompt(step), _answer(step)]}
        if weighted:
            example["weight"] = max(0.0, float(step["reward"]))
        examples.append(example)
    return examples


def dpo_pairs(steps: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Preference pairs (TRL's conversational format): for each subtask with both, its
    best accepted path chosen over each path the checks turned down."""
    by_subtask: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for step in steps:
        if step["subtask_id"]:
            by_subtask[str(step["subtask_id"])].append(step)
    pairs = []
    for attempts in by_subtask.values():
        accepted = [s for s in attempts if s["ok"]]
        if not accepted:
            continue
        best = max(accepted, key=lambda s: s["reward"])
        for turned_down in (s for s in attempts if not s["ok"]):
            if turned_down["tool_path"] == best["tool_path"]:
                continue  # the same path with other parameters: no preference of paths
            pairs.append(
                {
                    "prompt": _prompt(best),
                    "chosen": [_answer(best)],
                    "rejected": [_answer(turned_down)],
                    "margin": round(best["reward"] - turned_down["reward"], 4),
                }
            )
    return pairs


#: the export formats: a trajectory step, a chat example, a preference pair per line
FORMATS = TRACE_FORMATS


def export(
    attempts: Iterable[Mapping[str, Any]],
    rules: RuleTable,
    format: str = "jsonl",
    min_reward: float = 0.5,
    weighted: bool = False,
) -> tuple[list[dict[str, Any]], int]:
    """The trace store's attempts as records of `format` (FORMATS), and how many judged
    attempts they came from."""
    steps = trajectories(attempts, rules)
    if format == "sft":
        return sft_examples(steps, min_reward, weighted), len(steps)
    if format == "dpo":
        return dpo_pairs(steps), len(steps)
    return steps, len(steps)


def as_lines(records: Iterable[Mapping[str, Any]]) -> bytes:
    """Records as JSON Lines (UTF-8)."""
    return "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records).encode()

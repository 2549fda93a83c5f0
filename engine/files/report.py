"""The run report (--report RUN.json). Benchmarks and other tools read it: keep it stable.

Top-level keys: version, prompt, mode, alpha, planner, plan, subtasks, tool_calls,
totals, warnings, ok. Each subtask: its plan entry, solved_by, tools, steps (each tool
with the parameters it ran with), seconds, quality, features, layers, texts, experts
(each expert's verdict: expert, by, score, reason). Each tool call: its try (attempt),
why a retry's parameters are what they are, and each expert's verdict.
"""

from __future__ import annotations

import json
from typing import Any

from layerpath.engine.types import RunResult
from layerpath.settings.secrets import redact

REPORT_VERSION = 1


def build_report(result: RunResult, planner: str = "offline") -> dict[str, Any]:
    request = result.request
    subtasks = []
    for outcome in result.outcomes:
        entry: dict[str, Any] = {
            **outcome.subtask.to_json(),
            "solved_by": outcome.solved_by,
            "tools": list(outcome.tools),
            # what each tool of the accepted path ran with (`layerpath actions save` reads it)
            "steps": [
                {"tool": tool, "params": dict(params)}
                for tool, params in zip(outcome.tools, outcome.params, strict=False)
            ],
            "seconds": round(outcome.cost, 4),
            "quality": round(outcome.quality, 4),
            "features": dict(outcome.features),
            "layers": [step.name for step in outcome.steps],
            "texts": [step.text for step in outcome.steps if step.text],
            # each expert's verdict on its last step (failed: on the best attempt)
            "experts": [opinion.to_json() for opinion in outcome.opinions],
        }
        if outcome.origin:  # which rule served it, and where that rule comes from
            entry["rule_origin"] = outcome.origin
        if outcome.fallback_reason:
            entry["fallback_reason"] = outcome.fallback_reason
        if outcome.error:
            entry["error"] = outcome.error
        if outcome.failure is not None:  # the same in parts, for a program to show
            failure = outcome.failure
            entry["failure"] = {
                "said": failure.plain(),
                "reason": failure.reason,
                "tried": list(failure.tried or ()),
                "turned_down": failure.turned_down,
                "by": failure.by,
                "helps": failure.helps,
                "kept": failure.kept,
                "region": failure.region,
            }
        subtasks.append(entry)
    fallbacks = sum(1 for o in result.outcomes if o.fallback_reason)
    report = {
        "version": REPORT_VERSION,
        "prompt": request.prompt,
        "mode": request.mode.value,
        "alpha": request.alpha,
        "planner": planner,
        "plan": [s.to_json() for s in result.plan],
        "subtasks": subtasks,
        "tool_calls": [call.to_json() for call in result.calls],
        "totals": {
            "seconds": round(sum(c.seconds for c in result.calls), 4),
            "wall_seconds": round(result.seconds, 4),
            "tool_calls": len(result.calls),
            "fallbacks": fallbacks,
            "subtasks_ok": sum(1 for o in result.outcomes if o.ok),
            "subtasks_failed": sum(1 for o in result.outcomes if not o.ok),
        },
        "warnings": list(result.warnings),
        # each reference given and what was read from it (its colour, words, colours)
        "references": [r.to_json() for r in request.references.values()],
        "cancelled": result.cancelled,
        "ok": result.ok,
    }
    # no API key in a report, even one a server echoed into an error message
    hidden: dict[str, Any] = json.loads(redact(json.dumps(report)))
    return hidden


def refusal_report(prompt: str, error: Exception) -> dict[str, Any]:
    """The report of a request refused before any tool ran (nothing in it layerpath can
    do, a bad input): the words, and why, as the command line said it."""
    report = {
        "version": REPORT_VERSION,
        "prompt": prompt,
        "plan": [],
        "subtasks": [],
        "tool_calls": [],
        "refused": str(error),
        "error_kind": type(error).__name__,
        "ok": False,
    }
    hidden: dict[str, Any] = json.loads(redact(json.dumps(report)))
    return hidden

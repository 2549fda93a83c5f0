"""Reflection: a failed try's feedback turned into the next try's parameters
(IMAGAgent's plan-execute-reflect loop, per tool step).

After a try the experts turned down, what they found, worst first, is matched against
the tool's remedies (tools/data/catalogue.json: 'not the asked colour' -> a higher
`lightness` for lab_recolor, 'highlight detail blown to white' -> `protect` for an
adjustment, 'the object left in part' -> a larger `grow` for a fill). A generative
tool's prompt also takes the words the experts said to avoid or add. When no remedy
answers what was found, or its answer was tried already, the tool's fixed retry
schedule goes on where it is (the blind retry the engine made before reflection).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from typing import Any

from layerpath.engine.judge.checks.verdict import Opinion
from layerpath.kit.types import Remedy, ToolSpec

#: prompt words a generative tool's try may carry at most, each of avoid and add
MAX_HINTS = 8
#: how a retry from the tool's schedule is said (not reflection's answer)
SCHEDULED = "the tool's retry"


@dataclass(frozen=True)
class NextTry:
    """The parameters of the next try and why they changed, in plain words."""

    params: Mapping[str, Any]
    why: str


def _key(params: Mapping[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, default=str)


def complaints(objections: Sequence[Opinion]) -> list[tuple[float, str, str]]:
    """What the experts found wrong, worst first: (size, defect, expert); an opinion that
    names no defect (a model critic's) counts as its expert's own complaint."""
    found: list[tuple[float, str, str]] = []
    for opinion in objections:
        named = [(size, name) for name, size in opinion.defects.items() if size >= 0.5]
        if not named:
            named = [(2.0 * (1.0 - opinion.score), opinion.expert.value)]
        found += [(size, name, opinion.expert.value) for size, name in named]
    return sorted(found, key=lambda c: -c[0])


def _answers(remedy: Remedy, defect: str, expert: str) -> bool:
    return any(w == expert or w == defect or ("*" in w and fnmatch(defect, w)) for w in remedy.when)


def _apply(remedy: Remedy, params: dict[str, Any], fixed: set[str]) -> list[str]:
    """The remedy's changes laid over `params` (a parameter an earlier, worse complaint
    already changed is left as it is); the changes it made, in words."""
    said = []
    for name, value in remedy.set.items():
        if name not in fixed and params.get(name) != value:
            params[name] = value
            fixed.add(name)
            said.append(f"{name} {value}")
    for name, amount in {**remedy.step, **remedy.factor}.items():
        if name in fixed or not isinstance(params.get(name), (int, float)):
            continue
        now = float(params[name])
        new = now + amount if name in remedy.step else now * amount
        low, high = remedy.limits.get(name, (-float("inf"), float("inf")))
        new = min(high, max(low, new))
        if isinstance(params[name], int) and not isinstance(params[name], bool):
            new = round(new)
        if abs(new - now) > 1e-9:
            params[name] = new
            fixed.add(name)
            said.append(f"{name} {now:g} -> {new:g}")
    return said


def _with_hints(spec: ToolSpec, params: dict[str, Any], objections: Sequence[Opinion]) -> list[str]:
    """A prompted tool's (its params have 'avoid' and 'add') prompt words extended by
    what the experts said to avoid and add."""
    said = []
    for key in ("avoid", "add"):
        if key not in spec.params:
            continue
        words = list(params.get(key) or ())
        new = [w for o in objections for w in getattr(o, key) if w not in words]
        if new:
            params[key] = list(dict.fromkeys(words + new))[:MAX_HINTS]
            said.append(f"{key} '{', '.join(dict.fromkeys(new))}'")
    return said


def reflect(
    spec: ToolSpec,
    current: Mapping[str, Any],
    objections: Sequence[Opinion],
    tried: Sequence[Mapping[str, Any]],
) -> NextTry | None:
    """The parameters the experts' `objections` to the try with `current` call for,
    unless they were `tried` already (then None: the blind schedule takes over)."""
    params = dict(current)
    fixed: set[str] = set()
    said: list[str] = []
    reasons: list[str] = []
    for _, defect, expert in complaints(objections):
        for remedy in spec.remedies:
            if _answers(remedy, defect, expert):
                changed = _apply(remedy, params, fixed)
                if changed:
                    said += changed
                    reasons.append(f"{remedy.why} ({defect})")
    said += _with_hints(spec, params, objections)
    if not said or _key(params) in {_key(t) for t in tried}:
        return None
    because = "; ".join(dict.fromkeys(reasons)) or "what the experts found"
    return NextTry(params, f"{because}: {', '.join(said)}")


def next_scheduled(
    spec: ToolSpec, tried: Sequence[Mapping[str, Any]], within: int
) -> NextTry | None:
    """The first entry of the tool's retry schedule (of its first `within`) not tried."""
    seen = {_key(t) for t in tried}
    schedule = spec.param_schedule()
    for index, params in enumerate(schedule[:within]):
        if _key(params) not in seen:
            changed = ", ".join(f"{k} {v}" for k, v in params.items() if schedule[0].get(k) != v)
            return NextTry(params, f"{SCHEDULED} {index}: {changed}")
    return None

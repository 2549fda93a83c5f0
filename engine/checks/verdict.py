"""A check's answer: a score and the reason for it, from named defects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Verdict:
    """0..1 (0.5 = just acceptable) and, when below 1, what is wrong in plain words;
    `defects`: each measured defect in units of its tolerance; `final`: see below."""

    score: float
    reason: str = ""
    defects: Mapping[str, float] = field(default_factory=dict)
    #: no other result for the same region could pass: the picture, not this result, is
    #: why (ground too varied for any fill to be vouched for); trying more is no use
    final: bool = False


def verdict(
    defects: Mapping[str, float], untouched: float = 1.0, strictness: float = 1.0
) -> Verdict:
    """The score from defects measured in units of their tolerance (0 = none, 1 = at the
    tolerance): 0.5 ** their 4-norm (close to the worst one, a little worse when several
    add up), times `untouched` (1 when nothing outside the edit's region changed). The
    reason names the worst defects. `strictness` scales every defect: a checker's
    working point, set on the labelled check set so that it passes at most 5 % of the
    bad results there."""
    sizes = {name: max(0.0, float(size)) * strictness for name, size in defects.items()}
    combined = sum(size**4 for size in sizes.values()) ** 0.25
    score = 0.5**combined * max(0.0, min(1.0, untouched))
    worst = [name for name, size in sorted(sizes.items(), key=lambda kv: -kv[1]) if size >= 0.5]
    reasons = [f"{name} ({sizes[name]:.1f}x the tolerance)" for name in worst[:2]]
    if untouched < 0.9:
        reasons.append("pixels changed outside the region")
    return Verdict(score, "; ".join(reasons), sizes)

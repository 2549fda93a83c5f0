"""A check's answer: a score and the reason for it, from named defects, and the
experts' opinions it is made of."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Expert(str, Enum):
    """What an expert judges of a step (IMAGAgent's critics)."""

    MEANING = "meaning"  # semantic alignment: the step does what the subtask asked
    QUALITY = "quality"  # perceptual: no smear, seam, halo, streak, texture lost
    AESTHETICS = "aesthetics"  # highlights, shadows and colours keep their detail
    CONSISTENCY = "consistency"  # nothing else changed; the earlier steps are kept

    @property
    def short(self) -> str:
        """A word or two for a step list's row."""
        return EXPERT_WORDS[self][0]

    @property
    def words(self) -> str:
        """The expert's question in a photographer's words (the panel shows them)."""
        return EXPERT_WORDS[self][1]


#: each expert's words: a step list row's few, and its question
EXPERT_WORDS = {
    Expert.MEANING: ("as asked", "does what was asked"),
    Expert.QUALITY: ("clean", "clean, no artefacts"),
    Expert.AESTHETICS: ("tones kept", "keeps detail in highlights, shadows and colours"),
    Expert.CONSISTENCY: ("rest kept", "leaves the rest and the earlier steps as they were"),
}


@dataclass(frozen=True)
class Opinion:
    """One expert's verdict on one step: a score 0..1 (0.5 = just acceptable), why, the
    defects it measured (in units of their tolerance), who judged ('checks', 'clip',
    'vlm') and, for a generative tool's next try, words its prompt should avoid or add."""

    expert: Expert
    by: str
    score: float
    reason: str = ""
    defects: Mapping[str, float] = field(default_factory=dict)
    avoid: tuple[str, ...] = ()
    add: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "expert": self.expert.value,
            "by": self.by,
            "score": round(self.score, 4),
        }
        if self.reason:
            data["reason"] = self.reason
        if self.avoid:
            data["avoid"] = list(self.avoid)
        if self.add:
            data["add"] = list(self.add)
        return data


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
    #: the factor for pixels changed outside the region (1: none), already in `score`
    untouched: float = 1.0
    #: the experts' opinions the score is the lowest of (engine/judge/experts.py); empty for
    #: a checker's own verdict, which the experts split by what each defect says
    opinions: tuple[Opinion, ...] = ()
    #: the checks cannot read the result's meaning (an object a generative model added):
    #: it fails unless a vision critic's meaning opinion stands in for theirs
    critic_decides: bool = False


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
    return Verdict(score, "; ".join(reasons), sizes, untouched=untouched)

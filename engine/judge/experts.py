"""The experts that judge each step, and the aggregator that makes one verdict of them
(IMAGAgent's critics, offline first).

- meaning, quality, consistency from the subtask's checker: its defects, each said to
  belong to one expert in engine/data/defects.json ('not the asked colour' is meaning,
  'smeared detail' quality, 'pixels changed outside the region' consistency);
- aesthetics: tones pushed into the clip (highlights blown, shadows crushed, colours
  clipped) where a step changed the picture's tones;
- consistency with the earlier steps: a step that overlaps what an earlier subtask did
  must not undo it (its check, which passed before this step, still passes after);
- model critics (CLIP, a vision model through the endpoint) when they are set.

The verdict is the lowest opinion: a step passes only when every expert agrees. Each
opinion keeps its reason and, for a generative tool's next try, words for its prompt;
engine/judge/reflection.py turns the failing ones into the next try's parameters.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatch
from functools import lru_cache
from importlib import resources

import cv2
import numpy as np

from layerpath.engine.judge.checks.verdict import Expert, Opinion, Verdict
from layerpath.engine.kinds import kind_spec
from layerpath.engine.types import Box, Subtask, SubtaskKind
from layerpath.errors import BadInput
from layerpath.kit.imaging import rgb
from layerpath.kit.regions import overlap

K = SubtaskKind
#: the name the checkers' own opinions go by
CHECKS = "checks"
#: a share of the changed pixels pushed into the clip that a viewer notices (the
#: aesthetics expert's tolerance for an everyday amount: at it, the opinion is 0.5)
CLIPPED_TOLERANCE = 0.02
#: pixels the aesthetics expert samples (every n-th row and column of a larger picture)
SAMPLED_PIXELS = 2_000_000


@dataclass(frozen=True)
class DefectSense:
    """What one defect says: the expert it belongs to, prompt words to avoid or add."""

    expert: Expert
    avoid: tuple[str, ...] = ()
    add: tuple[str, ...] = ()


@lru_cache(maxsize=1)
def _senses() -> tuple[tuple[str, DefectSense], ...]:
    text = resources.files("layerpath.engine.data").joinpath("defects.json").read_text()
    return tuple(
        (
            str(entry["name"]),
            DefectSense(
                Expert(entry["expert"]),
                tuple(entry.get("avoid", ())),
                tuple(entry.get("add", ())),
            ),
        )
        for entry in json.loads(text)["defects"]
    )


def sense_of(defect: str) -> DefectSense:
    """What a defect says (an exact name first, then a pattern); unlisted: quality."""
    for name, sense in _senses():
        if name == defect:
            return sense
    for name, sense in _senses():
        if "*" in name and fnmatch(defect, name):
            return sense
    return DefectSense(Expert.QUALITY)


def _words(phrases: Sequence[str], subtask: Subtask) -> tuple[str, ...]:
    filled = (
        p.replace("{target}", subtask.target or "object").replace("{to}", subtask.to or "")
        for p in phrases
    )
    return tuple(dict.fromkeys(" ".join(p.split()) for p in filled if p.strip()))


def _named(defects: Mapping[str, float]) -> str:
    """The worst defects in plain words, as verdict() names them."""
    worst = sorted((kv for kv in defects.items() if kv[1] >= 0.5), key=lambda kv: -kv[1])
    return "; ".join(f"{name} ({size:.1f}x the tolerance)" for name, size in worst[:2])


def checker_opinions(found: Verdict, subtask: Subtask) -> tuple[Opinion, ...]:
    """A checker's verdict as the opinions of the experts its defects belong to. The
    lowest of them is the checker's own score (its calibrated working point: several
    small defects of different experts add up there), the others their own defects'."""
    groups: dict[Expert, dict[str, float]] = {}
    for name, size in found.defects.items():
        groups.setdefault(sense_of(name).expert, {})[name] = size
    if found.untouched < 1.0:
        outside = (1.0 - found.untouched) / 0.1  # (0.9 left: at the tolerance)
        groups.setdefault(Expert.CONSISTENCY, {})["pixels changed outside the region"] = outside
    if not groups:  # a plain score: whether the step did its job at all
        return (Opinion(Expert.MEANING, CHECKS, found.score, found.reason),)
    scores = {
        expert: 0.5 ** (sum(s**4 for s in sizes.values()) ** 0.25)
        for expert, sizes in groups.items()
    }
    worst = min(scores, key=lambda e: (scores[e], list(Expert).index(e)))
    opinions = []
    for expert in Expert:
        if expert not in groups:
            continue
        sizes = groups[expert]
        reason = found.reason if expert == worst and not _named(sizes) else _named(sizes)
        score = found.score if expert == worst else max(found.score, min(1.0, scores[expert]))
        senses = [sense_of(n) for n, s in sizes.items() if s >= 0.5]
        opinions.append(
            Opinion(
                expert,
                CHECKS,
                score,
                reason,
                sizes,
                _words([w for s in senses for w in s.avoid], subtask),
                _words([w for s in senses for w in s.add], subtask),
            )
        )
    return tuple(opinions)


# --- aesthetics: tones pushed into the clip --------------------------------------------


def clipped_shares(before: np.ndarray, after: np.ndarray, spared: np.ndarray) -> dict[str, float]:
    """Of the pixels a step changed, the shares it pushed into the clip from a tone they
    had: to white in every channel (highlights blown), to black (shadows crushed), or a
    colour's brightest channel to its top (a saturated colour flattened: a red petal's
    shading gone). A channel already at its end, or one the step is asked to take there
    (`spared`: per channel, low end and high end), does not count. Sampled on every n-th
    row and column of a large picture."""
    step = max(1, int(np.ceil(np.sqrt(before.shape[0] * before.shape[1] / SAMPLED_PIXELS))))
    b, a = _sampled(before, step), _sampled(after, step)
    kept = cv2.inRange(cv2.absdiff(a, b), (0, 0, 0), (2, 2, 2))  # 255: no channel moved > 2
    count = kept.size - cv2.countNonZero(kept)
    if count < 64:
        return {}
    # every share counts pixels with a channel at an end (1 or below, 254 or above): only
    # those are looked at (the same counts; a photo has few of them)
    ends = np.flatnonzero(cv2.inRange(a, (2, 2, 2), (253, 253, 253)).ravel() == 0)
    a, b = a.reshape(-1, 3)[ends], b.reshape(-1, 3)[ends]
    changed = kept.ravel()[ends] == 0
    low, high = spared
    # pushed from a tone with room to spare (twenty levels) into the clip: a tone near
    # white already may end there when eased in, without a visible loss
    at_top, at_bottom = a >= 254, a <= 1
    top = at_top & (b <= 235) & ~high
    bottom = at_bottom & (b >= 20) & ~low
    white = _any3(top) & _all3(at_top)
    black = _any3(bottom) & _all3(at_bottom)
    brightest = a == np.maximum(np.maximum(a[..., 0], a[..., 1]), a[..., 2])[..., None]
    colour = _any3(top & brightest) & ~white
    return {
        "highlight detail blown to white": float((white & changed).sum()) / count,
        "shadow detail crushed to black": float((black & changed).sum()) / count,
        "colours clipped, their detail lost": float((colour & changed).sum()) / count,
    }


def _sampled(picture: np.ndarray, step: int) -> np.ndarray:
    """Every `step`-th row and column's colours, as 8-bit levels in one block."""
    colours = np.ascontiguousarray(rgb(picture[::step, ::step]))
    return colours if colours.dtype == np.uint8 else (colours >> 8).astype(np.uint8)


def _any3(channels: np.ndarray) -> np.ndarray:
    return channels[..., 0] | channels[..., 1] | channels[..., 2]


def _all3(channels: np.ndarray) -> np.ndarray:
    return channels[..., 0] & channels[..., 1] & channels[..., 2]


def aesthetics(
    subtask: Subtask,
    before: np.ndarray,
    after: np.ndarray,
    colour: Callable[[str], tuple[int, int, int]] | None = None,
) -> Opinion | None:
    """Whether the step kept the picture's tones out of the clip (None: not a step that
    changes tones). (The looks, high key and low key among them, were measured on 16
    photos: none takes tones into the clip.)"""
    if not kind_spec(subtask.kind).tonal or before.shape != after.shape:
        return None
    spared = np.zeros((2, 3), dtype=bool)  # (low end, high end) x channel
    if subtask.kind == K.OBJECT_RECOLORATION and subtask.to and colour is not None:
        try:
            target = np.array(colour(subtask.to))
        except BadInput:  # (not a colour: the recolour's own check says so)
            target = None
        if target is not None:  # a colour at a channel's end may take it there
            spared[0] |= target <= 10
            spared[1] |= target >= 245
    shares = clipped_shares(before, after, spared)
    if subtask.kind == K.OBJECT_RECOLORATION:
        # a colour darker than the object is, at the object's brightness, beyond the
        # gamut: its top channel clips while the shading stays in the others, which
        # the recolour's own check measures ('texture lost')
        shares.pop("colours clipped, their detail lost", None)
    if not shares:
        return None
    tolerance = CLIPPED_TOLERANCE * _strength(subtask) ** 2
    sizes = {name: share / tolerance for name, share in shares.items()}
    score = 0.5 ** (sum(s**4 for s in sizes.values()) ** 0.25)
    reason = _named(sizes)
    avoid = [w for n, s in sizes.items() if s >= 0.5 for w in sense_of(n).avoid]
    return Opinion(Expert.AESTHETICS, CHECKS, score, reason, sizes, _words(avoid, subtask))


def _strength(subtask: Subtask) -> float:
    """How many times the everyday amount an adjustment asks (1 at most: any other
    step). The clip a photo's tones reach grows with what was asked: +2 stops on a
    bright photo takes its brightest tones to white however they are eased there, so
    the tolerance grows with the square of it (+2 stops: 16 times the everyday +0.5's)."""
    from layerpath.kit.adjustments import ADJUSTMENTS

    spec = ADJUSTMENTS.get(str(subtask.params.get("op")))
    amount = subtask.params.get("amount")
    if spec is None or amount is None or not spec.default or spec.name == "Look":
        return 1.0
    return max(1.0, abs(float(amount)) / abs(spec.default))


# --- consistency with the earlier steps -------------------------------------------------


@dataclass(frozen=True, eq=False)
class Earlier:
    """A subtask done earlier in the run, to judge whether a later step undoes it:
    `recheck(picture)` is its check's opinions on a picture (the whole canvas), and
    `window` where it changed the picture."""

    number: int
    subtask: Subtask
    window: Box
    recheck: Callable[[np.ndarray], tuple[Opinion, ...]] = field(repr=False)
    # the last picture its meaning was judged on, and that meaning: a later subtask's
    # every try (and every tool the search runs) starts from one picture
    judged: list[tuple[np.ndarray, float]] = field(default_factory=list, repr=False)


def consistency(
    subtask: Subtask,
    before: np.ndarray,
    after: np.ndarray,
    window: Box | None,
    earlier: Sequence[Earlier],
    threshold: float = 0.5,
) -> Opinion | None:
    """Whether a step keeps what the earlier subtasks did where it overlaps them: each
    such subtask's meaning, which held on the picture this step started from, must
    still hold after it. None when the step overlaps no earlier one (or changes the
    whole picture on purpose)."""
    if kind_spec(subtask.kind).overrides or window is None or before.shape != after.shape:
        return None
    touched = [e for e in earlier if overlap(e.window, window) > 0]
    if not touched:
        return None
    worst: Opinion | None = None
    for done in touched:
        was, now = _meaning(done, before, keep=True), _meaning(done, after)
        if was < threshold or now >= threshold:
            continue  # it did not hold anyway, or it still holds
        said = f"it undoes step {done.number} ({done.subtask.describe()})"
        found = Opinion(Expert.CONSISTENCY, CHECKS, now, said, {"it undoes an earlier step": 1.0})
        if worst is None or found.score < worst.score:
            worst = found
    return worst or Opinion(Expert.CONSISTENCY, CHECKS, 1.0)


def _meaning(done: Earlier, picture: np.ndarray, keep: bool = False) -> float:
    """How well an earlier subtask's meaning holds on a picture; with `keep`, judged once
    for the picture the later subtask's tries all start from."""
    if done.judged and done.judged[0][0] is picture:
        return done.judged[0][1]
    found = [o.score for o in done.recheck(picture) if o.expert == Expert.MEANING]
    meaning = min(found, default=1.0)
    if keep:
        done.judged[:] = [(picture, meaning)]
    return meaning


# --- the aggregator --------------------------------------------------------------------


def aggregate(found: Verdict, opinions: Sequence[Opinion]) -> Verdict:
    """One verdict from every expert's opinion: the lowest score counts (a step passes
    only when all agree); the reason names what the failing experts found (the checker's
    own words first, as the checks have always said them)."""
    if not opinions:
        return found
    lowest = min(opinions, key=lambda o: o.score)
    failing = sorted((o for o in opinions if o.score < 0.5 and o.reason), key=lambda o: o.score)
    reasons = list(dict.fromkeys(o.reason for o in failing))
    if lowest.by == CHECKS and found.reason and found.score <= lowest.score + 1e-9:
        reasons = [found.reason, *(r for r in reasons if r not in found.reason)]
    elif not reasons and lowest.reason:
        reasons = [lowest.reason]
    defects = {name: size for o in opinions for name, size in o.defects.items()}
    return replace(
        found,
        score=float(np.clip(lowest.score, 0.0, 1.0)),
        reason="; ".join(reasons),
        defects={**found.defects, **defects},
        opinions=tuple(opinions),
    )


def objections(opinions: Sequence[Opinion], threshold: float) -> list[Opinion]:
    """The opinions that turned a step down at this threshold."""
    return [o for o in opinions if o.score < threshold]

"""`layerpath bench checks`: how far the quality checks can be trusted.

Every case of the labelled check set (benchmarks/checkset.py) is judged through the
engine's own scoring (`engine/judge/quality.py` score, as a run calls it: the step's window, the
subtask's mask or the text boxes OCR finds in the picture before). Per checker the table
gives the ROC AUC (how well its score ranks good results above bad ones) and, at the
working threshold, the false passes (bad results it would call done) and the false fails
(good results it would reject); per kind of result, how many pass.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import date
from functools import partial
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from layerpath.benchmarks.checkset import CHECKERS, CheckCase, check_cases, patch_fill, rgba
from layerpath.benchmarks.photos import Photo, split_photos
from layerpath.benchmarks.sources import TUNING
from layerpath.engine.judge.checks.removal import tried_nearby
from layerpath.engine.judge.quality import judge as judge_step
from layerpath.engine.types import ArtifactKind, Subtask, SubtaskKind
from layerpath.errors import TargetNotFound
from layerpath.kit.regions import changed_window
from layerpath.kit.types import ToolContext
from layerpath.tools.base import Tool
from layerpath.tools.ocr import read_text
from layerpath.tools.registry import Registry

K = SubtaskKind
THRESHOLD = 0.5  # the engine's default quality threshold (EditRequest.quality_threshold)
KINDS = {
    "removal": K.OBJECT_REMOVAL,
    "recolour": K.OBJECT_RECOLORATION,
    "cut-out": K.BACKGROUND_REMOVAL,
    "text replacement": K.TEXT_REPLACEMENT,
    "text removal": K.TEXT_REMOVAL,
}


@dataclass
class Judged:
    checker: str
    photo: str
    family: str
    good: bool
    score: float
    seconds: float


#: the found-region checkers and what they are asked to vouch for
REGION_CHECKERS = {"found sky": "sky", "found background": "background"}
#: the checkers in the order the tables list them
ORDER = (*CHECKERS, *REGION_CHECKERS)


def judge(case: CheckCase) -> Judged:
    """The case through the engine's scoring, as a run would score the step (a region a
    finder found: as the run judges a finder's mask; a removal patch_fill made: with the
    same fill tried on ground nearby, which a run asks for where the ground is too varied
    for the checks to say what belongs in the hole)."""
    if case.checker in REGION_CHECKERS:
        assert case.mask is not None
        started = time.perf_counter()
        subtask = Subtask(K.REGION_ADJUSTMENT, REGION_CHECKERS[case.checker], id="c1")
        produced = {ArtifactKind.MASK: case.mask}
        found = judge_step(subtask, produced, produced, case.before, None, None, True)
        return Judged(
            case.checker, case.photo, case.family, case.good, found.score,
            time.perf_counter() - started,
        )  # fmt: skip
    kind = KINDS[case.checker]
    subtask = Subtask(kind, "object", case.to, id="c1")
    state: dict[ArtifactKind, Any] = {ArtifactKind.IMAGE: case.after}
    if case.mask is not None:
        state[ArtifactKind.MASK] = case.mask
    started = time.perf_counter()
    if case.checker.startswith("text"):
        state[ArtifactKind.TEXT_BOXES] = read_text(case.before)
    window = changed_window(case.before, case.after)
    produced = {ArtifactKind.IMAGE: case.after}
    trial = None
    if case.params is not None and case.mask is not None:  # (made by patch_fill)
        fill = partial(patch_fill, params=case.params)
        after, hole = case.after, case.mask
        trial = lambda: tried_nearby(fill, after, hole)  # noqa: E731
    quality = judge_step(subtask, produced, state, case.before, None, window, trial=trial).score
    return Judged(
        case.checker, case.photo, case.family, case.good, quality, time.perf_counter() - started
    )


def roc_auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """The probability that a good result scores above a bad one (ties count half)."""
    good = np.array([s for s, g in zip(scores, labels, strict=True) if g])
    bad = np.array([s for s, g in zip(scores, labels, strict=True) if not g])
    if not len(good) or not len(bad):
        return float("nan")
    above = (good[:, None] > bad[None, :]).sum() + 0.5 * (good[:, None] == bad[None, :]).sum()
    return float(above / (len(good) * len(bad)))


def summary(judged: Sequence[Judged], threshold: float = THRESHOLD) -> dict[str, Any]:
    by_checker: dict[str, list[Judged]] = defaultdict(list)
    for j in judged:
        by_checker[j.checker].append(j)
    rows = []
    for checker in ORDER:
        group = by_checker.get(checker, [])
        if not group:
            continue
        good = [j for j in group if j.good]
        bad = [j for j in group if not j.good]
        rows.append(
            {
                "checker": checker,
                "cases": len(group),
                "good": len(good),
                "bad": len(bad),
                "auc": roc_auc([j.score for j in group], [j.good for j in group]),
                "false_pass": sum(j.score >= threshold for j in bad) / max(1, len(bad)),
                "false_fail": sum(j.score < threshold for j in good) / max(1, len(good)),
                "seconds": float(np.mean([j.seconds for j in group])),
            }
        )
    families: dict[tuple[str, str, bool], list[Judged]] = defaultdict(list)
    for j in judged:
        families[(j.checker, j.family, j.good)].append(j)
    return {
        "threshold": threshold,
        "checkers": rows,
        "families": [
            {
                "checker": c,
                "family": f,
                "good": g,
                "cases": len(group),
                "pass": sum(j.score >= threshold for j in group) / len(group),
                "mean_score": float(np.mean([j.score for j in group])),
            }
            for (c, f, g), group in sorted(
                families.items(),
                key=lambda item: (ORDER.index(item[0][0]), not item[0][2], item[0][1]),
            )
        ],
    }


def markdown(data: dict[str, Any]) -> str:
    from layerpath.benchmarks.bench import table

    lines = [
        f"Labelled check set ({data.get('split', TUNING)} photos): {data['cases']} results on "
        f"{data['photos']} photos "
        f"(seed {data['seed']}); {data['machine']}; {data['date']}. "
        f"Threshold {data['summary']['threshold']}.",
        "",
    ]
    lines += table(
        "",
        ("checker", "good / bad", "ROC AUC", "false pass", "false fail", "s / check"),
        (
            (
                r["checker"],
                f"{r['good']} / {r['bad']}",
                f"{r['auc']:.3f}",
                f"{r['false_pass']:.1%}",
                f"{r['false_fail']:.1%}",
                f"{r['seconds']:.2f}",
            )
            for r in data["summary"]["checkers"]
        ),
    )
    lines += table(
        "Per kind of result: the share the checks pass",
        ("checker", "result", "label", "cases", "pass", "mean score"),
        (
            (
                f["checker"],
                f["family"],
                "good" if f["good"] else "bad",
                str(f["cases"]),
                f"{f['pass']:.0%}",
                f"{f['mean_score']:.2f}",
            )
            for f in data["summary"]["families"]
        ),
    )
    return "\n".join(lines).rstrip()


def judge_all(cases: Iterable[CheckCase], progress: bool = True) -> list[Judged]:
    judged = []
    started = time.perf_counter()
    for number, case in enumerate(cases, start=1):
        judged.append(judge(case))
        if progress:
            if number % 25 == 0:
                elapsed = time.perf_counter() - started
                print(f"{number} results judged, {elapsed:.0f} s", file=sys.stderr, flush=True)
    return judged


def region_cases(
    photos: Sequence[Photo], cache: Path, split: str, seed: int = 0
) -> Iterator[CheckCase]:
    """The found-region checks' cases: skies put above the split's photos without one,
    things put on its photos without a subject, each with its truth and the regions a
    finder could wrongly return (benchmarks/region_tasks.py); and what the offline finder
    itself finds in its photos without a sky or without a subject, and in its photos
    with a sky whose found sky was judged by eye (sources.FOUND_SKIES; held out, also
    in the photos of sources.SKY_PHOTO_SOURCES)."""
    from layerpath.benchmarks import region_tasks as regions
    from layerpath.benchmarks.sources import (
        BACKDROPS,
        FOUND_SKIES,
        GROUNDS,
        NO_SKY,
        load_cutout,
        photo_name,
        sky_bands,
        sky_photo_files,
        skyline_frames,
        stamp_files,
    )  # fmt: skip

    skies = sky_bands(cache, split)
    things = [load_cutout(p) for p in stamp_files(cache, split)]
    finder = Registry.from_catalogue().get("offline_finder")
    for photo in photos:
        if photo.name in NO_SKY[split]:
            family = "a sky found in a photo without one"
            yield from found_by(finder, photo, "found sky", family, right=False)
        if photo.name in FOUND_SKIES[split]:
            yield from sky_by_eye(finder, photo, FOUND_SKIES[split][photo.name])
        if photo.name in BACKDROPS[split]:
            family = "a background found around no subject"
            yield from found_by(finder, photo, "found background", family, right=False)
    for path in sky_photo_files(cache, split):
        if photo_name(path) in FOUND_SKIES[split]:
            photo = Photo(photo_name(path), np.asarray(Image.open(path).convert("RGB")))
            yield from sky_by_eye(finder, photo, FOUND_SKIES[split][photo.name])
    for index, (name, skyline) in enumerate(skyline_frames(cache, split)):
        if not skies:
            break
        rng = np.random.default_rng([seed, index, 23])
        _, band = skies[int(rng.integers(len(skies)))]
        picture, coverage = regions.sky_behind(skyline, band)
        for family, good, region in regions.sky_regions(rng, coverage):
            family = f"{family}, behind a real skyline"
            yield CheckCase("found sky", name, family, good, rgba(picture), rgba(picture), region)
        found = list(found_by(finder, Photo(name, picture), "found sky", "", right=False))
        if found:
            right = regions.found_sky_right(found[0].mask, coverage)
            family = (
                f"the sky the finder found behind a real skyline, {'right' if right else 'wrong'}"
            )
            yield dataclasses.replace(found[0], family=family, good=right)
    for index, photo in enumerate(photos):
        rng = np.random.default_rng([seed, index, 17])
        if skies and photo.name in GROUNDS[split]:
            _, band = skies[int(rng.integers(len(skies)))]
            picture, coverage = regions.sky_over(rng, photo.rgb, band)
            for family, good, region in regions.sky_regions(rng, coverage):
                yield CheckCase(
                    "found sky", photo.name, family, good, rgba(picture), rgba(picture), region
                )
        if things and photo.name in BACKDROPS[split]:
            thing = things[int(rng.integers(len(things)))]
            picture, alpha = regions.pasted(rng, photo.rgb, thing, (0.35, 0.6))
            for family, good, region in regions.background_regions(rng, alpha):
                yield CheckCase(
                    "found background",
                    photo.name,
                    family,
                    good,
                    rgba(picture),
                    rgba(picture),
                    region,
                )


def sky_by_eye(finder: Tool, photo: Photo, right: bool) -> Iterator[CheckCase]:
    """The sky the offline finder finds in a photo with one, judged `right` or wrong by
    eye (sources.FOUND_SKIES)."""
    family = f"the sky the finder found, {'right' if right else 'wrong'} by eye"
    yield from found_by(finder, photo, "found sky", family, right=right)


def found_by(
    finder: Tool, photo: Photo, checker: str, family: str, *, right: bool
) -> Iterator[CheckCase]:
    """The region the offline `finder` (as a run calls it) finds for what `checker`
    vouches for, labelled `right` or wrong (a sky in a photo without one, a background
    around no subject, a sky judged by eye), when the finder finds one at all."""
    picture = rgba(photo.rgb)
    try:
        found = finder.run(
            ToolContext(K.REGION_ADJUSTMENT, target=REGION_CHECKERS[checker]),
            {ArtifactKind.IMAGE: picture},
            finder.spec.param_schedule()[0],
        ).outputs[ArtifactKind.MASK]
    except TargetNotFound:
        return
    yield CheckCase(checker, photo.name, family, right, picture, picture, found)


def bench_checks(
    out: Path, seed: int = 0, debian: bool = True, rounds: int = 1, split: str = TUNING
) -> dict[str, Any]:
    """Judge the whole check set of a split's photos; the tables on stdout, every
    judgement in the JSON."""
    from layerpath.benchmarks.bench import machine

    cache = out / "photos-cache"
    photos = split_photos(cache, debian, split)
    cases = check_cases(photos, seed, rounds)
    if debian:
        cases = chain(cases, region_cases(photos, cache, split, seed))
    judged = judge_all(cases)
    data = {
        "suite": "checks",
        "split": split,
        "seed": seed,
        "photos": len(photos),
        "cases": len(judged),
        "machine": machine(),
        "date": date.today().isoformat(),
        "summary": summary(judged),
        "judged": [asdict(j) for j in judged],
    }
    out.mkdir(parents=True, exist_ok=True)
    name = "bench-checks.json" if split == TUNING else f"bench-checks-{split}.json"
    (out / name).write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(markdown(data))
    return data

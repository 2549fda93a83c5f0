"""`layerpath bench photos`: the engine on real photographs at their native size, scored
against the truth of what was put into them.

Each photo (benchmarks/photos.py: scikit-image's, and Debian's mate-backgrounds where
they can be fetched) gets an object to remove, another to recolour and a sign in
perspective whose word is to be replaced, with the masks a photographer would draw; or,
in a second task, a subject on its own for "remove the background". The engine runs the
instruction (fast-slow, alpha 1) as a user would, and each subtask is scored {0, ½, 1}
against the truth: the photo as it was under the removed object (by what a photographer
sees: colour once softened, and texture), the asked colour reaching all of the object
with its texture and nothing past it, the sign reading the new word with no old letters
and its frame whole, the cut-out's overlap with the subject's own alpha.

What matters most is the promise: of the subtasks the engine reports done, how many are
wrong by the truth (a 0). A subtask the checks could not vouch for is reported failed,
which costs accuracy but never trust.
"""

from __future__ import annotations

import json
import sys
import time
import zlib
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from layerpath.benchmarks import region_tasks as regions
from layerpath.benchmarks.checkset import (
    COLOURS,
    _draw_word,
    _hue,
    fill_distance,
    judged_fill,
    named_as,
)
from layerpath.benchmarks.photos import (
    SIGN_FONTS,
    WORDS,
    Photo,
    free_spot,
    make_object,
    make_subject,
    place,
    place_in_perspective,
    split_photos,
    texture_sources,
)
from layerpath.benchmarks.region_tasks import RegionTruth
from layerpath.benchmarks.sources import BACKDROPS, GROUNDS, TUNING, Cutout
from layerpath.engine.execute.executor import Engine
from layerpath.engine.types import CostBasis, EditRequest, Mode, RunResult, Snapshot, SubtaskKind
from layerpath.errors import LayerpathError
from layerpath.kit.colours import MOSTLY_BLACK, left_black, parse_color, to_lab
from layerpath.kit.imaging import dilate, erode
from layerpath.kit.types import Box
from layerpath.tools.ocr import read_text
from layerpath.tools.registry import Registry

K = SubtaskKind
OBJECT_NAMES = ("vase", "box", "ball", "lamp", "bottle", "stone")


@dataclass
class PhotoTruth:
    """What one subtask must reach, and where."""

    kind: str
    region: np.ndarray  # bool: where the subtask's result is judged
    truth: np.ndarray | None = None  # RGB the region should look like (removal)
    alpha: np.ndarray | None = None  # the subject's alpha (background removal)
    mask: np.ndarray | None = None  # the mask the photographer drew (recolour)
    colour: str | None = None
    old: str | None = None
    new: str | None = None
    #: a region task's truth: where it must change and where not (region_tasks.py)
    where: RegionTruth | None = None


@dataclass
class PhotoTask:
    id: str
    photo: str
    megapixels: float
    instruction: str
    image: np.ndarray  # RGBA
    masks: dict[str, np.ndarray]
    truths: list[PhotoTruth] = field(default_factory=list)
    references: dict[str, np.ndarray] = field(default_factory=dict)  # name -> RGB


def edit_task(photo: Photo, rng: np.random.Generator, number: int) -> PhotoTask | None:
    """An object to remove, another to recolour, a sign whose word to replace."""
    h, w = photo.rgb.shape[:2]
    sources = texture_sources()
    picture = photo.rgb
    taken: list[Box] = []
    names = [str(n) for n in rng.choice(OBJECT_NAMES, 2, replace=False)]
    placed = []
    for _ in names:
        side = int(min(h, w) * rng.uniform(0.1, 0.18))
        size = (side, int(side * rng.uniform(0.7, 1.3)))
        spot = free_spot(rng, picture.shape, size, taken)
        if spot is None:
            return None
        thing = place(
            picture, make_object(rng, sources[int(rng.integers(len(sources)))], size), spot
        )
        taken.append(
            Box(
                thing.box.x0 - side // 3,
                thing.box.y0 - side // 3,
                thing.box.x1 + side // 3,
                thing.box.y1 + side // 3,
            )
        )
        placed.append(thing)
        picture = thing.image
    old, new = (str(s) for s in rng.choice(WORDS, 2, replace=False))
    height = int(min(h, w) * rng.uniform(0.1, 0.14))
    width = int(height * (0.6 * max(len(old), len(new)) + 1.0))
    spot = free_spot(rng, picture.shape, (width, height), taken)
    if spot is None or width > w * 0.8:
        return None
    blank = np.full((height, width, 3), (242, 238, 228), np.uint8)
    cv2.rectangle(blank, (0, 0), (width - 1, height - 1), (70, 55, 40), max(2, height // 16))
    font = str(rng.choice(SIGN_FONTS))
    with_old, _ = _draw_word(blank, old, font, height * 0.5, (width / 2, height / 2))
    sign, _ = place_in_perspective(
        picture, with_old, spot, np.random.default_rng(int(rng.integers(1 << 30)))
    )
    removed, recoloured = placed
    colour = _far_colour(rng, recoloured.image, recoloured.alpha > 0.5)
    # the photo without the removed object (the recoloured one and the sign stay)
    ground = sign.image.copy()
    covered = removed.alpha > 0
    ground[covered] = photo.rgb[covered]
    image = np.dstack([sign.image, np.full((h, w), 255, np.uint8)])
    masks = {names[0]: removed.mask, names[1]: recoloured.mask}
    instruction = f"remove the {names[0]}, recolor the {names[1]} to {colour} and replace the sign text with {new}"
    truths = [
        PhotoTruth("object_removal", removed.mask, truth=ground),
        PhotoTruth(
            "object_recoloration", recoloured.alpha > 0.5, colour=colour, mask=recoloured.mask
        ),
        PhotoTruth("text_replacement", sign.alpha > 0.5, old=old, new=new),
    ]
    return PhotoTask(
        f"{photo.name}-{number}", photo.name, photo.megapixels, instruction, image, masks, truths
    )


def cutout_task(photo: Photo, rng: np.random.Generator, number: int) -> PhotoTask | None:
    """A subject with ears and a tail, alone on the photo: remove the background."""
    h, w = photo.rgb.shape[:2]
    side = int(min(h, w) * rng.uniform(0.45, 0.6))
    size = (side, min(int(h * 0.85), int(side * rng.uniform(0.9, 1.2))))
    spot = free_spot(rng, photo.rgb.shape, size)
    if spot is None:
        return None
    sources = texture_sources()
    placed = place(
        photo.rgb, make_subject(rng, sources[int(rng.integers(len(sources)))], size), spot
    )
    image = np.dstack([placed.image, np.full((h, w), 255, np.uint8)])
    truth = PhotoTruth("background_removal", placed.alpha > 0.5, alpha=placed.alpha)
    return PhotoTask(
        f"{photo.name}-{number}",
        photo.name,
        photo.megapixels,
        "remove the background",
        image,
        {},
        [truth],
    )


def _far_colour(rng: np.random.Generator, image: np.ndarray, region: np.ndarray) -> str:
    own = _hue(image[region].mean(axis=0).astype(np.uint8))
    far = [c for c in COLOURS if abs((_hue(parse_color(c)) - own + 180) % 360 - 180) > 70]
    return str(rng.choice(far or COLOURS))


@dataclass(frozen=True)
class Assets:
    """What the region tasks put into photos: skies (name, RGB band) and photographed
    things with their alpha, of one split; `split` names it."""

    skies: Sequence[tuple[str, np.ndarray]] = ()
    things: Sequence[Cutout] = ()
    split: str = TUNING


def photo_tasks(
    photos: Sequence[Photo], seed: int, assets: Assets | None = None
) -> Iterator[PhotoTask]:
    """Per photo: an edit task, and a cut-out task on the photos whose own content does
    not compete with a subject put in (texture and landscape photos); with `assets`,
    the region tasks too: a sky above the photos without one, a background edit around
    a thing put in on the photos without a subject of their own, a thing recoloured
    through a loose mask on every photo."""
    for photo in photos:
        rng = np.random.default_rng([seed, zlib.crc32(photo.name.encode())])
        task = edit_task(photo, rng, 1)
        if task is not None:
            yield task
        if photo.name not in ("coffee", "chelsea", "astronaut", "rocket", "motorcycle"):
            task = cutout_task(photo, rng, 2)
            if task is not None:
                yield task
        if assets is None:
            continue
        if assets.skies and photo.name in GROUNDS[assets.split]:
            yield sky_task(photo, rng, assets, 3)
        if assets.things and photo.name in BACKDROPS[assets.split]:
            yield background_task(photo, rng, assets, 4)
        if assets.things:
            yield recolour_task(photo, rng, assets, 5)


def sky_task(photo: Photo, rng: np.random.Generator, assets: Assets, number: int) -> PhotoTask:
    """A sky of the split above a ridge cut into the photo, edited in everyday words."""
    name, band = assets.skies[int(rng.integers(len(assets.skies)))]
    picture, coverage = regions.sky_over(rng, photo.rgb, band)
    instruction, asked = regions.SKY_EDITS[int(rng.integers(len(regions.SKY_EDITS)))]
    image = np.dstack([picture, np.full(picture.shape[:2], 255, np.uint8)])
    references = {}
    if asked == "replaced":  # another sky of the split, as the reference
        others = [b for n, b in assets.skies if n != name] or [band]
        references["ref"] = others[int(rng.integers(len(others)))]
    truth = PhotoTruth(
        "region", coverage > 0.5, where=regions.sky_truth(coverage, asked), colour=name
    )
    return PhotoTask(
        f"{photo.name}-{number}",
        photo.name,
        photo.megapixels,
        instruction,
        image,
        {},
        [truth],
        references,
    )


def background_task(
    photo: Photo, rng: np.random.Generator, assets: Assets, number: int
) -> PhotoTask:
    """A photographed thing put on the photo, its background edited in everyday words."""
    thing = assets.things[int(rng.integers(len(assets.things)))]
    picture, alpha = regions.pasted(rng, photo.rgb, thing, (0.35, 0.6))
    instruction = regions.BACKGROUND_EDITS[int(rng.integers(len(regions.BACKGROUND_EDITS)))]
    image = np.dstack([picture, np.full(picture.shape[:2], 255, np.uint8)])
    where = regions.background_truth(alpha, picture, instruction)
    truth = PhotoTruth("region", alpha > 0.5, alpha=alpha, where=where, colour=thing.name)
    return PhotoTask(
        f"{photo.name}-{number}", photo.name, photo.megapixels, instruction, image, {}, [truth]
    )


def recolour_task(photo: Photo, rng: np.random.Generator, assets: Assets, number: int) -> PhotoTask:
    """A photographed thing with a soft edge put on the photo and recoloured through a
    mask drawn 2 px loose."""
    thing = assets.things[int(rng.integers(len(assets.things)))]
    picture, alpha = regions.pasted(rng, photo.rgb, thing, (0.2, 0.35))
    colour = regions.RECOLOURS[int(rng.integers(len(regions.RECOLOURS)))]
    mask = regions.loose_mask(alpha)
    image = np.dstack([picture, np.full(picture.shape[:2], 255, np.uint8)])
    truth = PhotoTruth("object_recoloration", alpha > 0.5, alpha=alpha, mask=mask, colour=colour)
    return PhotoTask(
        f"{photo.name}-{number}",
        photo.name,
        photo.megapixels,
        f"recolor the object to {colour}",
        image,
        {"object": mask},
        [truth],
    )


# --- scoring against the truth ------------------------------------------------------------


def score_removal(truth: PhotoTruth, final: np.ndarray) -> tuple[float, str]:
    assert truth.truth is not None
    verdict = judged_fill(final[..., :3], truth.truth, truth.region)
    low, texture = fill_distance(final[..., :3], truth.truth, truth.region)
    reason = f"colour {low:.1f} off once softened, texture {texture:.2f} of the truth's"
    return (1.0 if verdict else 0.0 if verdict is False else 0.5), reason


def score_recolour(truth: PhotoTruth, before: np.ndarray, final: np.ndarray) -> tuple[float, str]:
    value, reason = _recolour(truth, before, final)
    if truth.alpha is None or truth.mask is None:
        return value, reason
    # the ground a loose mask took in: it keeps its colour
    ground = regions.ground_recoloured(truth.alpha, truth.mask, before, final)
    reason = f"{reason}, {ground:.0%} of the ground inside the mask recoloured"
    if ground > 0.3:
        return 0.0, reason
    return (min(value, 0.5) if ground > 0.1 else value), reason


def _recolour(truth: PhotoTruth, before: np.ndarray, final: np.ndarray) -> tuple[float, str]:
    assert truth.colour is not None
    core = erode(truth.region, 2)
    target = to_lab(np.array([[parse_color(truth.colour)]], np.uint8))[0, 0]
    lab = to_lab(final[..., :3])
    pixels = lab[core]
    hue = np.degrees(np.arctan2(pixels[:, 2], pixels[:, 1]) - np.arctan2(target[2], target[1]))
    hue = np.abs((hue + 180) % 360 - 180)
    chroma = np.hypot(pixels[:, 1], pixels[:, 2])
    target_chroma = float(np.hypot(target[1], target[2]))
    if target_chroma < 12:
        reached = chroma < 18
    else:
        reached = (hue < 35) & (chroma > 0.3 * target_chroma)
    lab_before = to_lab(before[..., :3])[core]
    grey_before = lab_before[:, 0]
    # a thing's black parts (a suit, a badger's legs, letters) stay black, as a
    # retoucher keeps them: black can carry no colour to speak of (sRGB's greens reach
    # chroma 20 at L* 15, the scorer's mark for green is 22). Where the thing is mostly
    # dark it must take the colour, black or not
    black = left_black(grey_before, pixels[:, 0])
    if black.mean() < MOSTLY_BLACK:
        reached |= black
    coverage = float(reached.mean())
    named = named_as(lab_before, pixels, target, truth.colour)
    texture = float(np.corrcoef(grey_before, pixels[:, 0])[0, 1]) if grey_before.std() > 1 else 1.0
    drawn = truth.mask if truth.mask is not None else truth.region
    outside = dilate(drawn, 6) & ~dilate(drawn, 1)  # past what the photographer drew
    spill = np.abs(final[..., :3].astype(int) - before[..., :3].astype(int)).max(axis=2) > 20
    leak = float(spill[outside].mean()) if outside.any() else 0.0
    reason = f"{coverage:.0%} of it {truth.colour}, texture kept {texture:.2f}, {leak:.0%} of the rim around it changed"
    good = coverage >= 0.9 and texture >= 0.7 and leak <= 0.1
    poor = coverage < 0.6 or texture < 0.4 or leak > 0.3
    value = 1.0 if good else 0.0 if poor else 0.5
    if named:
        reason, value = f"{reason}, {named[0]}", min(value, named[1])
    return value, reason


def score_text(truth: PhotoTruth, before: np.ndarray, final: np.ndarray) -> tuple[float, str]:
    from layerpath.engine.judge.checks.text import similarity

    region = truth.region
    rows, columns = np.flatnonzero(region.any(axis=1)), np.flatnonzero(region.any(axis=0))
    y0, y1, x0, x1 = int(rows[0]), int(rows[-1]) + 1, int(columns[0]), int(columns[-1]) + 1
    pad = max(8, (y1 - y0) // 2)
    crop = final[max(0, y0 - pad) : y1 + pad, max(0, x0 - pad) : x1 + pad]
    lines = [tb.text for tb in read_text(crop)]
    read = max((similarity(line, truth.new or "") for line in lines), default=0.0)
    # the sign's frame: its dark line pixels before, which should still be dark
    sign = before[max(0, y0 - pad) : y1 + pad, max(0, x0 - pad) : x1 + pad, :3].astype(int)
    now = crop[..., :3].astype(int)
    inside = region[max(0, y0 - pad) : y1 + pad, max(0, x0 - pad) : x1 + pad]
    frame = inside & ~erode(inside, max(2, (y1 - y0) // 10)) & (sign.sum(axis=2) < 3 * 120)
    kept = float((now[frame].sum(axis=1) < 3 * 140).mean()) if frame.any() else 1.0
    reason = f"reads {' | '.join(lines) or 'nothing'} ({read:.2f}), frame {kept:.0%} whole"
    good = read >= 0.99 and kept >= 0.9
    poor = read < 0.8 or kept < 0.7
    return (1.0 if good else 0.0 if poor else 0.5), reason


def score_cutout(truth: PhotoTruth, final: np.ndarray) -> tuple[float, str]:
    kept = final[..., 3] > 127
    overlap = float((kept & truth.region).sum() / max(1, (kept | truth.region).sum()))
    return (1.0 if overlap >= 0.9 else 0.5 if overlap >= 0.75 else 0.0), f"overlap {overlap:.2f}"


@dataclass
class Scored:
    task: str
    photo: str
    megapixels: float
    kind: str
    reported: str  # "done" or "failed"
    route: str
    tools: list[str]
    score: float
    reason: str
    seconds: float


def save_crops(folder: Path, task: PhotoTask, truth: PhotoTruth, final: np.ndarray) -> None:
    """Before, truth and result around the subtask's region, side by side (a PNG to
    look at)."""
    from PIL import Image

    from layerpath.kit.imaging import mask_box

    box = mask_box(truth.region, pad=max(24, int(np.sqrt(truth.region.sum()) * 0.6)))
    if box is None:
        return
    if truth.kind == K.BACKGROUND_REMOVAL.value:  # the cut-out over a checkerboard
        yy, xx = np.mgrid[: final.shape[0], : final.shape[1]]
        board = (((yy // 16 + xx // 16) % 2) * 80 + 90)[..., None]
        alpha = final[..., 3:4].astype(np.float32) / 255.0
        shown = (final[..., :3] * alpha + board * (1 - alpha)).astype(np.uint8)
        tiles = [task.image[..., :3], shown]
    else:
        expected = truth.truth if truth.truth is not None else task.image[..., :3]
        tiles = [task.image[..., :3], expected, final[..., :3]]
    side = 360
    scale = side / max(box.width, box.height)
    size = (max(1, round(box.width * scale)), max(1, round(box.height * scale)))
    row = [
        np.asarray(
            Image.fromarray(np.ascontiguousarray(t[box.y0 : box.y1, box.x0 : box.x1])).resize(
                size, Image.Resampling.LANCZOS
            )
        )
        for t in tiles
    ]
    folder.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.concatenate(row, axis=1)).save(folder / f"{task.id}-{truth.kind}.png")


def run_task(engine: Engine, task: PhotoTask, crops: Path | None = None) -> list[Scored]:
    from layerpath.engine.plan.references import Reference, ReferenceKind

    references = {
        name: Reference(name, ReferenceKind.PICTURE, f"{name}.png", pixels=pixels)
        for name, pixels in task.references.items()
    }
    request = EditRequest(
        task.instruction,
        Snapshot(task.image, task.masks),
        mode=Mode.FAST_SLOW,
        references=references,
    )
    try:
        result = engine.run(request)
    except LayerpathError as exc:  # refused before any tool ran: every subtask failed
        return [
            Scored(task.id, task.photo, task.megapixels, t.kind, "failed", "refused", [], 0.0,
                   f"refused: {exc}", 0.0)
            for t in task.truths
        ]  # fmt: skip
    return score_photo_task(task, result, crops)


def score_photo_task(task: PhotoTask, result: RunResult, crops: Path | None = None) -> list[Scored]:
    """Each of the task's subtasks scored against its truth in the run's final picture."""
    by_kind = {o.subtask.kind.value: o for o in result.outcomes}
    scored = []
    for truth in task.truths:
        # (a region task is the instruction's one subtask, whatever its kind)
        outcome = result.outcomes[0] if truth.where is not None else by_kind.get(truth.kind)
        if outcome is None:
            scored.append(
                Scored(
                    task.id,
                    task.photo,
                    task.megapixels,
                    truth.kind,
                    "failed",
                    "not planned",
                    [],
                    0.0,
                    "not in the plan",
                    0.0,
                )
            )
            continue
        final = result.image
        if truth.kind == K.OBJECT_REMOVAL.value:
            value, reason = score_removal(truth, final)
        elif truth.kind == K.OBJECT_RECOLORATION.value:
            value, reason = score_recolour(truth, task.image, final)
        elif truth.kind == K.TEXT_REPLACEMENT.value:
            value, reason = score_text(truth, task.image, final)
        elif truth.where is not None:
            value, reason = regions.score_region(truth.where, task.image, final)
        else:
            value, reason = score_cutout(truth, final)
        if not outcome.ok:
            reason = f"{reason}; reported failed: {outcome.error}"
        if crops is not None:
            save_crops(crops, task, truth, final)
        scored.append(
            Scored(
                task.id,
                task.photo,
                task.megapixels,
                truth.kind,
                "done" if outcome.ok else "failed",
                outcome.solved_by,
                list(outcome.tools),
                value,
                reason,
                outcome.cost,
            )
        )
    return scored


def summary(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    by_kind: dict[str, list[Scored]] = defaultdict(list)
    for s in scored:
        by_kind[s.kind].append(s)
    by_kind["all"] = list(scored)
    rows = []
    for kind, group in by_kind.items():
        done = [s for s in group if s.reported == "done"]
        rows.append(
            {
                "kind": kind,
                "subtasks": len(group),
                "accuracy": float(np.mean([s.score for s in group])),
                "done": len(done),
                "wrong_when_done": sum(s.score == 0.0 for s in done) / max(1, len(done)),
                "failed_but_right": sum(s.reported == "failed" and s.score == 1.0 for s in group),
                "tool_seconds": float(np.mean([s.seconds for s in group])),
            }
        )
    return rows


def markdown(data: dict[str, Any]) -> str:
    from layerpath.benchmarks.bench import table

    lines = [
        f"Suite `photos` ({data.get('split', TUNING)} photos), seed {data['seed']}: "
        f"{data['tasks']} tasks on {data['photos']} photos "
        f"at their native size ({data['megapixels']}); fast-slow, alpha 1; {data['machine']}; "
        f"{data['date']}.",
        "",
    ]
    lines += table(
        "",
        ("subtask", "subtasks", "accuracy", "reported done", "wrong when done", "tool s / subtask"),
        (
            (
                r["kind"],
                str(r["subtasks"]),
                f"{r['accuracy']:.2f}",
                f"{r['done']} ({r['done'] / max(1, r['subtasks']):.0%})",
                f"{r['wrong_when_done']:.1%}",
                f"{r['tool_seconds']:.2f}",
            )
            for r in data["summary"]
        ),
    )
    tools: dict[str, int] = defaultdict(int)
    for s in data["scored"]:
        if s["reported"] == "done" and s["tools"]:
            tools[f"{s['kind']}: {s['tools'][-1]}"] += 1
    lines.append("Done by: " + ", ".join(f"{k} {v}" for k, v in sorted(tools.items())))
    return "\n".join(lines).rstrip()


def bench_photos(
    out: Path,
    seed: int = 0,
    debian: bool = True,
    limit: int | None = None,
    split: str = TUNING,
) -> dict[str, Any]:
    """Every task of a split's photos; the tables on stdout, every subtask's score and
    reason in the JSON."""
    from layerpath.benchmarks.bench import machine
    from layerpath.benchmarks.sources import load_cutout, sky_bands, stamp_files

    cache = out / "photos-cache"
    photos = split_photos(cache, debian, split)
    assets = None
    if debian:
        things = [load_cutout(p) for p in stamp_files(cache, split)]
        assets = Assets(sky_bands(cache, split), things, split)
    engine = Engine(Registry.from_catalogue(), costs=CostBasis.TABLE)
    tasks = list(photo_tasks(photos, seed, assets))[:limit]
    scored: list[Scored] = []
    started = time.perf_counter()
    for number, task in enumerate(tasks, start=1):
        scored += run_task(engine, task, out / "photos")
        print(
            f"{number}/{len(tasks)} tasks, {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
            flush=True,
        )
    sizes = [p.megapixels for p in photos]
    data = {
        "suite": "photos",
        "split": split,
        "seed": seed,
        "tasks": len(tasks),
        "photos": len(photos),
        "megapixels": f"{min(sizes):.1f}-{max(sizes):.1f} MP",
        "machine": machine(),
        "date": date.today().isoformat(),
        "summary": summary(scored),
        "scored": [asdict(s) for s in scored],
        "wall_seconds": time.perf_counter() - started,
    }
    out.mkdir(parents=True, exist_ok=True)
    name = "bench-photos.json" if split == TUNING else f"bench-photos-{split}.json"
    (out / name).write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(markdown(data))
    return data

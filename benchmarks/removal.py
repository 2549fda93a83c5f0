"""`layerpath bench removal`: object removal side by side with the removals photographers
already have, scored against the truth.

Photographed things (Tux Paint's stamps, with their own alpha) are put on real photos
(the splits of benchmarks/sources.py: tuning and held-out photos and things come from
different sources) at about 2 MP, so the ground under each is known. The mask is what a
photographer would paint: the thing grown by GROW pixels. Each placement is filled by

- OpenCV's Telea inpainting (the free smear),
- GIMP 2.10's Heal selection (the Resynthesizer plug-in; `--peer gimp`, run headless by
  ../shared/peers/gimp-heal/heal, which installs Debian's gimp on first use),
- layerpath's fill tool alone (its first try, `patch_fill` with the catalogue's
  parameters), and
- layerpath as a user runs it ("remove the object" with the mask: planning, the checks,
  retries, other tools); *delivered* is a subtask reported done.

Scored inside the mask against the truth: PSNR, SSIM, the fine-detail ratio (texture
energy against the truth's: 1 = as detailed, below = smeared, above = noisy), clean by
the truth (engine/judge/checks/removal.judged_fill: right colour once softened, right texture),
pixels changed outside the mask, and seconds per fill (GIMP's start is shared by all
its fills and spread over them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from layerpath.benchmarks.photos import Photo, split_photos
from layerpath.benchmarks.region_tasks import pasted
from layerpath.benchmarks.sources import HELD_OUT, TUNING, Cutout, load_cutout, stamp_files
from layerpath.engine.judge.checks.removal import fill_distance, judged_fill
from layerpath.errors import BadInput, LayerpathError
from layerpath.kit.imaging import dilate, mask_box
from layerpath.kit.types import Box

#: photos are brought down to about this size (the peer's own measure, and where most
#: removals are painted); a smaller photo is used as it is
MEGAPIXELS = 2.0
#: photos smaller than this are left out (scikit-image's are a fifth of this)
MINIMUM = 1.0
#: the mask a photographer paints: the thing grown by this many pixels
GROW = 8
#: the thing's long side, as a share of the photo's shorter side
SHARE = (0.07, 0.16)
#: placements per split unless told
PLACEMENTS = 24
#: the peer's script, beside the repository
HEAL = Path(__file__).resolve().parents[1].parent / "shared" / "peers" / "gimp-heal" / "heal"
FILLS = ("telea", "gimp", "layerpath fill", "layerpath")


@dataclass
class Placement:
    id: str
    photo: str
    thing: str
    image: np.ndarray  # RGB uint8, the thing put in
    truth: np.ndarray  # RGB uint8, the photo as it was
    mask: np.ndarray  # bool, the thing grown by GROW


@dataclass
class Filled:
    placement: str
    photo: str
    fill: str
    psnr: float
    ssim: float
    detail: float
    colour_off: float
    clean: bool
    wrong: bool
    outside: int  # pixels changed outside the mask
    seconds: float
    delivered: bool | None = None  # layerpath only: reported done
    tools: list[str] = field(default_factory=list)
    reason: str = ""


def _at_size(rgb: np.ndarray, megapixels: float) -> np.ndarray:
    """The photo brought down to `megapixels` (a smaller one as it is); above the
    bench's own size (camera size: 24) every photo is brought to it, enlarged where
    smaller."""
    h, w = rgb.shape[:2]
    scale = (megapixels * 1e6 / (h * w)) ** 0.5
    if megapixels <= MEGAPIXELS:
        scale = min(1.0, scale)
    if scale == 1.0:
        return rgb
    size = (round(w * scale), round(h * scale))
    return cv2.resize(rgb, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)


def placements(
    photos: Sequence[Photo], things: Sequence[Cutout], count: int, seed: int, megapixels: float
) -> list[Placement]:
    """`count` things put on the photos in turn (each photo's placements seeded by its
    name and their number, so a placement does not change when others are added)."""
    if not photos or not things:
        raise BadInput("The removal bench needs photos and photographed things to put on them.")
    found = []
    for number in range(count):
        photo = photos[number % len(photos)]
        rng = np.random.default_rng([seed, zlib.crc32(photo.name.encode()), number])
        thing = things[int(rng.integers(len(things)))]
        ground = _at_size(photo.rgb, megapixels)
        image, alpha = pasted(rng, ground, thing, SHARE)
        mask = dilate(alpha > 0.02, GROW)
        found.append(
            Placement(f"{photo.name}-{number}", photo.name, thing.name, image, ground, mask)
        )
    return found


# --- scores -------------------------------------------------------------------------------


def _psnr(after: np.ndarray, truth: np.ndarray, mask: np.ndarray) -> float:
    error = (after[mask].astype(np.float64) - truth[mask].astype(np.float64)) ** 2
    return float(10 * np.log10(255.0**2 / max(error.mean(), 1e-9)))


def _ssim(after: np.ndarray, truth: np.ndarray, mask: np.ndarray) -> float:
    from skimage.metrics import structural_similarity

    box = mask_box(mask, pad=8)
    assert box is not None

    def cut(picture: np.ndarray) -> np.ndarray:
        part = np.ascontiguousarray(picture[box.y0 : box.y1, box.x0 : box.x1])
        return cv2.cvtColor(part, cv2.COLOR_RGB2GRAY)

    _, full = structural_similarity(cut(after), cut(truth), data_range=255, full=True)
    return float(full[mask[box.y0 : box.y1, box.x0 : box.x1]].mean())


def scored(
    placement: Placement, fill: str, after: np.ndarray, seconds: float, **extra: Any
) -> Filled:
    """One fill scored against the truth inside the mask, and what it changed outside."""
    mask, truth = placement.mask, placement.truth
    colour_off, detail = fill_distance(after, truth, mask)
    verdict = judged_fill(after, truth, mask)
    outside = int((np.abs(after.astype(np.int16) - placement.image).max(axis=2) > 0)[~mask].sum())
    return Filled(
        placement.id,
        placement.photo,
        fill,
        _psnr(after, truth, mask),
        _ssim(after, truth, mask),
        detail,
        colour_off,
        verdict is True,
        verdict is False,
        outside,
        seconds,
        **extra,
    )


# --- the fills ----------------------------------------------------------------------------


def telea(placement: Placement) -> np.ndarray:
    return cv2.inpaint(placement.image, placement.mask.astype(np.uint8) * 255, 5, cv2.INPAINT_TELEA)


def heal_available() -> Path | None:
    """The peer's script, where it is beside the repository (or LAYERPATH_HEAL)."""
    path = Path(os.environ.get("LAYERPATH_HEAL", HEAL))
    return path if path.is_file() else None


def gimp_heal(found: Sequence[Placement], work: Path) -> tuple[list[np.ndarray], float]:
    """Every placement healed in one GIMP start; the results and the seconds per fill."""
    script = heal_available()
    if script is None:
        raise BadInput(
            f"GIMP's Heal selection peer is not at {HEAL}: set LAYERPATH_HEAL to its 'heal' "
            "script, or leave out --peer gimp."
        )
    work.mkdir(parents=True, exist_ok=True)
    triples: list[str] = []
    for p in found:
        Image.fromarray(p.image).save(work / f"{p.id}-in.png")
        Image.fromarray(p.mask.astype(np.uint8) * 255).save(work / f"{p.id}-mask.png")
        triples += [str(work / f"{p.id}-{k}.png") for k in ("in", "mask", "healed")]
    started = time.perf_counter()
    subprocess.run(
        ["bash", str(script), *triples],
        check=True,
        timeout=60 * 60,
        env={**os.environ, "PYTHON": sys.executable},
    )
    seconds = (time.perf_counter() - started) / max(1, len(found))
    return [
        np.asarray(Image.open(work / f"{p.id}-healed.png").convert("RGB")) for p in found
    ], seconds


def tool_fill(tool: Any, placement: Placement) -> tuple[np.ndarray, float]:
    """layerpath's fill tool (patch_fill) alone, its first try."""
    from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext

    rgba = np.dstack([placement.image, np.full(placement.mask.shape, 255, np.uint8)])
    started = time.perf_counter()
    result = tool.run(
        ToolContext(SubtaskKind.OBJECT_REMOVAL, "object"),
        {ArtifactKind.IMAGE: rgba, ArtifactKind.MASK: placement.mask},
        tool.spec.param_schedule()[0],
    )
    seconds = time.perf_counter() - started
    return np.ascontiguousarray(result.outputs[ArtifactKind.IMAGE][..., :3]), seconds


def delivered(engine: Any, placement: Placement) -> tuple[Filled, np.ndarray]:
    """layerpath as a user runs it: "remove the object" with the mask painted over it."""
    from layerpath.engine.types import EditRequest, Mode, Snapshot

    rgba = np.dstack([placement.image, np.full(placement.mask.shape, 255, np.uint8)])
    request = EditRequest(
        "remove the object", Snapshot(rgba, {"object": placement.mask}), mode=Mode.FAST_SLOW
    )
    started = time.perf_counter()
    try:
        result = engine.run(request)
    except LayerpathError as exc:
        refused = scored(placement, "layerpath", placement.image, 0.0, delivered=False)
        refused.reason = str(exc)
        return refused, placement.image
    seconds = time.perf_counter() - started
    outcome = next(o for o in result.outcomes if o.subtask.kind.value == "object_removal")
    after = np.ascontiguousarray(result.image[..., :3])
    if not outcome.ok:  # nothing delivered: its best attempt is hidden, the photo as it was
        after = placement.image
    run = scored(placement, "layerpath", after, seconds, delivered=outcome.ok)
    run.tools, run.reason = list(outcome.tools), "" if outcome.ok else str(outcome.error)
    return run, after


# --- the report ---------------------------------------------------------------------------


def summary(results: Sequence[Filled]) -> list[dict[str, Any]]:
    by_fill: dict[str, list[Filled]] = defaultdict(list)
    for r in results:
        by_fill[r.fill].append(r)
    rows = []
    for fill in FILLS:
        group = by_fill.get(fill)
        if not group:
            continue
        done = [r for r in group if r.delivered is not False]
        rows.append(
            {
                "fill": fill,
                "placements": len(group),
                "psnr": float(np.mean([r.psnr for r in done])) if done else float("nan"),
                "ssim": float(np.mean([r.ssim for r in done])) if done else float("nan"),
                "detail": float(np.median([r.detail for r in done])) if done else float("nan"),
                "clean": sum(r.clean for r in done),
                "delivered": len(done),
                "wrong_when_done": sum(r.wrong for r in done) / max(1, len(done)),
                "outside": max((r.outside for r in group), default=0),
                "seconds": float(np.mean([r.seconds for r in group])),
            }
        )
    return rows


def markdown(data: dict[str, Any]) -> str:
    from layerpath.benchmarks.bench import table

    lines = [
        f"Suite `removal` ({data['split']} photos), seed {data['seed']}: {data['placements']} "
        f"things put on {data['photos']} photos at about {data['megapixels']} MP, the mask "
        f"the thing grown {GROW} px; {data['machine']}; {data['date']}. Scored inside the "
        "mask against the truth (PSNR, SSIM and detail over what each delivered; "
        "layerpath's over the subtasks it reported done).",
        "",
    ]
    lines += table(
        "",
        ("fill", "PSNR in mask", "SSIM", "detail (1 = truth)", "clean by the truth",
         "delivered", "wrong when done", "px changed outside", "s / fill"),
        (
            (
                r["fill"],
                f"{r['psnr']:.1f} dB",
                f"{r['ssim']:.2f}",
                f"{r['detail']:.2f}",
                f"{r['clean']}/{r['placements']} ({r['clean'] / max(1, r['placements']):.0%})",
                f"{r['delivered']}/{r['placements']}",
                f"{r['wrong_when_done']:.1%}",
                str(r["outside"]),
                f"{r['seconds']:.2f}",
            )
            for r in data["summary"]
        ),
    )  # fmt: skip
    return "\n".join(lines).rstrip()


def save_crops(folder: Path, placement: Placement, fills: dict[str, np.ndarray]) -> None:
    """Before, the truth and each fill around the mask, side by side (a PNG to look at)."""
    box = mask_box(placement.mask, pad=max(24, int(np.sqrt(placement.mask.sum()) * 0.5)))
    assert box is not None
    tiles = [placement.image, placement.truth, *fills.values()]
    side = 240
    scale = side / max(box.width, box.height)
    size = (max(1, round(box.width * scale)), max(1, round(box.height * scale)))
    row = [_tile(t, box, size) for t in tiles]
    folder.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.concatenate(row, axis=1)).save(folder / f"{placement.id}.png")


def _tile(rgb: np.ndarray, box: Box, size: tuple[int, int]) -> np.ndarray:
    cut = np.ascontiguousarray(rgb[box.y0 : box.y1, box.x0 : box.x1])
    return np.asarray(Image.fromarray(cut).resize(size, Image.Resampling.LANCZOS))


def bench_removal(
    out: Path,
    seed: int = 0,
    split: str = HELD_OUT,
    count: int = PLACEMENTS,
    peer: str | None = None,
    megapixels: float = MEGAPIXELS,
    progress: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> dict[str, Any]:
    """Every fill on `count` placements of a split; the table on stdout, every fill's
    scores in bench-removal-SPLIT.json, crops (before, truth, the fills) under
    removal-SPLIT/."""
    from layerpath.benchmarks.bench import machine
    from layerpath.engine.execute.executor import Engine
    from layerpath.engine.types import CostBasis
    from layerpath.tools.registry import Registry

    if split not in (TUNING, HELD_OUT):
        raise BadInput(f"No split {split!r}: tuning or held-out.")
    cache = out / "photos-cache"
    photos = [p for p in split_photos(cache, True, split) if p.megapixels >= MINIMUM]
    things = [load_cutout(p) for p in stamp_files(cache, split)]
    found = placements(photos, things, count, seed, megapixels)
    results: list[Filled] = []
    pictures: dict[str, dict[str, np.ndarray]] = defaultdict(dict)
    started = time.perf_counter()
    if peer == "gimp":
        progress(f"GIMP's Heal selection on {len(found)} placements ...")
        with tempfile.TemporaryDirectory() as tmp:
            healed, each = gimp_heal(found, Path(tmp))
        for p, after in zip(found, healed, strict=True):
            results.append(scored(p, "gimp", after, each))
            pictures[p.id]["gimp"] = after
    elif peer is not None:
        raise BadInput(f"No peer {peer!r}: the removal peer is gimp.")
    engine = Engine(Registry.from_catalogue(), costs=CostBasis.TABLE)
    fill = engine.registry.get("patch_fill")
    for number, p in enumerate(found, start=1):
        t0 = time.perf_counter()
        after = telea(p)
        results.append(scored(p, "telea", after, time.perf_counter() - t0))
        pictures[p.id]["telea"] = after
        after, seconds = tool_fill(fill, p)
        results.append(scored(p, "layerpath fill", after, seconds))
        pictures[p.id]["layerpath fill"] = after
        run, after = delivered(engine, p)
        results.append(run)
        pictures[p.id]["layerpath"] = after
        progress(
            f"{number}/{len(found)} placements, {time.perf_counter() - started:.0f} s "
            f"({p.id}: "
            + (
                ("clean" if run.clean else "wrong" if run.wrong else "unclear")
                if run.delivered
                else "failed"
            )
            + ")"
        )
        save_crops(out / f"removal-{split}", p, pictures[p.id])
    sizes = [p.image.shape[0] * p.image.shape[1] / 1e6 for p in found]
    data = {
        "suite": "removal",
        "split": split,
        "seed": seed,
        "placements": len(found),
        "photos": len({p.photo for p in found}),
        "megapixels": f"{min(sizes):.1f}-{max(sizes):.1f}",
        "machine": machine(),
        "date": date.today().isoformat(),
        "summary": summary(results),
        "results": [asdict(r) for r in results],
        "wall_seconds": time.perf_counter() - started,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / f"bench-removal-{split}.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(markdown(data))
    return data

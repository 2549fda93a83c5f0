"""docs/region-crops.png: before and after, where a photographer looks, of the region
edits of issue 25 on real photos nobody tuned to at first (Ubuntu Touch's community
wallpapers, lomiri-wallpapers-16.04, CC BY-SA; fetched at run time, never committed):
a kept sky, a graduated sky, a sky replaced, a background blurred, a bowl recoloured
deep blue through a rough box, each edited as `layerpath edit` does.

    python docs/make_region_crops.py [CACHE]      # CACHE: where the package is unpacked
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from layerpath.benchmarks.sources import fetched
from layerpath.engine.execute.executor import Engine
from layerpath.engine.plan.references import Reference, ReferenceKind
from layerpath.engine.types import EditRequest, Snapshot
from layerpath.tools.registry import Registry

PHOTOS = "usr/share/backgrounds"
#: (photo, instruction, crop box as shares of the frame (x0, y0, x1, y1), extras)
EDITS = (
    ("aitzgorri_by_Aitzol_Berasategi", "give it a dramatic look but don't touch the sky",
     (0.35, 0.0, 0.75, 0.45)),
    ("aitzgorri_by_Aitzol_Berasategi", "darken the sky with a graduated filter",
     (0.35, 0.0, 0.75, 0.45)),
    ("aitzgorri_by_Aitzol_Berasategi", "replace the sky with the one in ref",
     (0.35, 0.0, 0.75, 0.45)),
    ("free_by_Peter_Nerlich", "blur the background", (0.0, 0.0, 1.0, 1.0)),
    ("Picture_0B_by_freespace", "turn the bowl deep blue", (0.1, 0.0, 0.95, 1.0)),
)  # fmt: skip
#: the bowl's mask as a photographer makes it: the bowl inside a box dragged around it
#: (refined by GrabCut, as the editor refines a dragged box), less the fig: inside two
#: ellipses around its body and its stem, the pale skin and green stem, and all they
#: enclose (a colour-range pick); each as shares of the frame, by eye
BOWL = (0.2, 0.06, 0.995, 0.99)
FIG = ((0.47, 0.35, 0.705, 0.75), (0.405, 0.435, 0.49, 0.505))
#: the reference sky's photo (the same package)
REFERENCE = "sunset_by_Aitzol_Berasategi"


def load(folder: Path, name: str) -> np.ndarray:
    rgb = np.asarray(Image.open(folder / f"{name}.jpg").convert("RGB"))
    return np.dstack([rgb, np.full(rgb.shape[:2], 255, np.uint8)])


def bowl_mask(picture: np.ndarray) -> np.ndarray:
    import cv2
    from scipy.ndimage import binary_fill_holes

    from layerpath.kit.colours import oklab, srgb_decoded
    from layerpath.kit.imaging import small_copy
    from layerpath.kit.regions import full_size_mask
    from layerpath.kit.types import Box
    from layerpath.tools.finders import refine_box

    small = small_copy(picture[..., :3], 1024)
    sh, sw = small.shape[:2]
    boxed = lambda b: Box(int(b[0] * sw), int(b[1] * sh), int(b[2] * sw), int(b[3] * sh))  # noqa: E731
    bowl = full_size_mask(refine_box(small, boxed(BOWL)), picture.shape)
    h, w = picture.shape[:2]
    fig = np.zeros((h, w), np.uint8)
    for x0, y0, x1, y1 in FIG:
        centre = (round((x0 + x1) / 2 * w), round((y0 + y1) / 2 * h))
        axes = (round((x1 - x0) / 2 * w), round((y1 - y0) / 2 * h))
        cv2.ellipse(fig, centre, axes, 0, 0, 360, 1, -1)
    lab = oklab(srgb_decoded(picture[..., :3] / 255.0))
    hue = np.degrees(np.arctan2(lab[..., 2], lab[..., 1]))
    skin = (fig > 0) & ((lab[..., 0] > 0.7) | (hue > 50))
    skin = cv2.morphologyEx(skin.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
    return bowl & ~binary_fill_holes(skin)


def main(cache: Path) -> None:
    root = fetched(cache, "lomiri-wallpapers-16.04")
    if root is None:
        raise SystemExit("lomiri-wallpapers-16.04 could not be fetched (apt-get)")
    folder = root / PHOTOS
    engine = Engine(Registry.from_catalogue())
    rows = []
    for name, instruction, box in EDITS:
        picture = load(folder, name)
        h, w = picture.shape[:2]
        masks = {}
        if "bowl" in instruction:
            masks["bowl"] = bowl_mask(picture)
        references = {}
        if "ref" in instruction:
            sky = load(folder, REFERENCE)[..., :3]
            references["ref"] = Reference("ref", ReferenceKind.PICTURE, "ref.jpg", pixels=sky)
        request = EditRequest(instruction, Snapshot(picture, masks), references=references)
        result = engine.run(request)
        (outcome,) = result.outcomes
        said = "done" if outcome.ok else f"failed: {outcome.error}"
        print(f"{name}: {instruction}: {said}", file=sys.stderr)
        x0, y0, x1, y1 = (round(v * s) for v, s in zip(box, (w, h, w, h), strict=True))
        pair = [Image.fromarray(p[y0:y1, x0:x1, :3]) for p in (picture, result.image)]
        side = 420
        pair = [p.resize((side, max(1, round(side * p.height / p.width)))) for p in pair]
        row = Image.new("RGB", (2 * side + 12, pair[0].height + 22), "white")
        row.paste(pair[0], (0, 22))
        row.paste(pair[1], (side + 12, 22))
        ImageDraw.Draw(row).text(
            (4, 4), f'"{instruction}" ({"done" if outcome.ok else "failed"})', fill="black"
        )
        rows.append(row)
    sheet = Image.new("RGB", (rows[0].width, sum(r.height + 8 for r in rows)), "white")
    y = 0
    for row in rows:
        sheet.paste(row, (0, y))
        y += row.height + 8
    out = Path(__file__).parent / "region-crops.png"
    sheet.save(out)
    print(out, file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("bench-out/photos-cache"))

"""Scene suites with ground truth, generated in code from a seed.

A scene is a background (flat wall, gradient sky, grass, busy pattern) with one to three
objects of varied shape, size and colour and a sign whose text is set in one of several
fonts; the photographer's named masks come with it. A task is a multi-step instruction
of 1-8 subtasks over the kinds the offline tools can do, with the ground truth each
subtask must reach (`Truth`): the region it may change, the colour or text it must
produce. The mix of subtask counts follows the CoSTA* benchmark (1-2, 3-4, 5-6 and 7-8
subtasks in equal shares).

Everything is drawn from `random.Random(seed)` and numpy's generator seeded alike, so
a suite is the same on every machine with the same fonts (DejaVu; Pillow's own font
where they are missing).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from layerpath.engine.types import Snapshot
from layerpath.kit.colours import parse_color
from layerpath.kit.types import Box, SubtaskKind

K = SubtaskKind
WIDTH, HEIGHT = 320, 240
BLUR_SIGMA = 1.6  # the blur a deblurring task's photo carries

BACKGROUNDS = ("flat wall", "gradient sky", "grass", "busy pattern")
SHAPES = {"ball": "disk", "box": "square", "vase": "ellipse", "kite": "diamond"}
OBJECT_COLOURS = ("red", "blue", "green", "orange", "purple", "yellow")
RECOLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "teal", "pink")
SIZES = {"small": 16, "medium": 26, "large": 40}  # radius in pixels
SIGN_WORDS = (
    "OPEN",
    "SALE",
    "EXIT",
    "CAFE",
    "HOT COFFEE",
    "FRESH BREAD",
    "NO PARKING",
    "BOOKS",
    "PIZZA",
    "GARDEN SHOP",
)
NEW_WORDS = ("CLOSED", "WELCOME", "SOLD OUT", "TEA", "BAKERY", "PHONE")
ADDED_WORDS = ("SALE", "NEW", "HELLO", "PARIS")
FONT_FILES = (
    "DejaVuSans-Bold.ttf",
    "DejaVuSans.ttf",
    "DejaVuSerif-Bold.ttf",
    "DejaVuSerif.ttf",
    "DejaVuSansMono-Bold.ttf",
)
FONT_FOLDER = Path("/usr/share/fonts/truetype/dejavu")
BUCKETS = ((1, 2), (3, 4), (5, 6), (7, 8))  # the CoSTA* benchmark's complexity bins


def font(name: str, size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    path = FONT_FOLDER / name
    if path.exists():
        return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size)


@dataclass
class Thing:
    """An object in the scene: its mask, size class and colour name."""

    name: str
    mask: np.ndarray
    size: str
    colour: str


@dataclass
class SuiteScene:
    """A picture, what is in it and where, and the masks a photographer would give."""

    seed: int
    background: str
    image: np.ndarray  # RGBA, sharp
    things: dict[str, Thing]
    sign_box: Box  # the sign's panel
    text_box: Box  # the tight box of its text
    sign_text: str
    sign_colour: tuple[int, int, int]
    font: str

    @property
    def masks(self) -> dict[str, np.ndarray]:
        sign = np.zeros(self.image.shape[:2], bool)
        b = self.sign_box
        sign[b.y0 : b.y1, b.x0 : b.x1] = True
        return {**{n: t.mask for n, t in self.things.items()}, "sign": sign}

    @property
    def foreground(self) -> np.ndarray:
        """What stands in front of the background: the objects and the sign."""
        out = np.zeros(self.image.shape[:2], bool)
        for mask in self.masks.values():
            out |= mask
        return out


@dataclass(frozen=True)
class Truth:
    """What one subtask must reach. `region`: where it may change the picture (None for
    whole-picture or geometry changes); `colour`, `text`, `side`, `factor`: its goal."""

    kind: SubtaskKind
    clause: str
    target: str | None = None
    region: np.ndarray | None = field(default=None, compare=False, repr=False)
    colour: str | None = None
    text: str | None = None
    side: str | None = None
    factor: int | None = None


@dataclass
class Task:
    id: str
    scene: SuiteScene
    instruction: str
    truths: tuple[Truth, ...]
    blurred: bool  # the photo given to the engine is the scene blurred (deblurring)

    @property
    def size(self) -> int:
        return len(self.truths)

    @property
    def bucket(self) -> str:
        return next(f"{lo}-{hi}" for lo, hi in BUCKETS if lo <= self.size <= hi)

    def photo(self) -> np.ndarray:
        """The picture the engine gets (the scene, blurred for a deblurring task)."""
        image = self.scene.image.copy()
        if self.blurred:
            image[..., :3] = cv2.GaussianBlur(image[..., :3], (0, 0), BLUR_SIGMA)
        return image

    def snapshot(self) -> Snapshot:
        return Snapshot(self.photo(), dict(self.scene.masks))


# --- scenes ----------------------------------------------------------------------------


def _background(kind: str, rng: np.random.Generator) -> np.ndarray:
    yy, xx = np.mgrid[:HEIGHT, :WIDTH].astype(np.float32)
    if kind == "flat wall":
        base = rng.uniform(150, 230, 3)
        image = np.broadcast_to(base, (HEIGHT, WIDTH, 3)) + rng.normal(0, 3, (HEIGHT, WIDTH, 3))
    elif kind == "gradient sky":
        top, bottom = np.array([70, 120, 200]), np.array([200, 225, 245])
        t = (yy / HEIGHT)[..., None]
        image = top * (1 - t) + bottom * t + rng.normal(0, 2, (HEIGHT, WIDTH, 3))
    elif kind == "grass":
        noise = cv2.GaussianBlur(rng.normal(0, 1, (HEIGHT, WIDTH)).astype(np.float32), (0, 0), 2)
        noise = noise / (noise.std() + 1e-6)
        image = np.array([70, 130, 50]) + noise[..., None] * np.array([12, 22, 10])
    else:  # busy pattern: stripes crossed with a checker, two colours
        a, b = rng.uniform(60, 220, 3), rng.uniform(60, 220, 3)
        period = int(rng.integers(10, 22))
        stripes = ((xx + yy) // period % 2).astype(bool) ^ ((xx // (2 * period)) % 2).astype(bool)
        image = np.where(stripes[..., None], a, b) + rng.normal(0, 3, (HEIGHT, WIDTH, 3))
    return np.clip(image, 0, 255).astype(np.float32)


def _shape_mask(shape: str, cx: int, cy: int, r: int) -> np.ndarray:
    yy, xx = np.mgrid[:HEIGHT, :WIDTH]
    if shape == "disk":
        return np.asarray((xx - cx) ** 2 + (yy - cy) ** 2 <= r * r)
    if shape == "square":
        return np.asarray((abs(xx - cx) <= r) & (abs(yy - cy) <= r))
    if shape == "ellipse":
        return np.asarray(((xx - cx) / (0.6 * r)) ** 2 + ((yy - cy) / r) ** 2 <= 1)
    return np.asarray(abs(xx - cx) + abs(yy - cy) <= r)  # diamond


def make_suite_scene(seed: int) -> SuiteScene:
    """One scene of the suite, the same for the same seed."""
    pick = random.Random(seed)
    rng = np.random.default_rng(seed)
    background = pick.choice(BACKGROUNDS)
    image = _background(background, rng)
    # the sign: a light panel in the top half with dark text in one of the fonts
    words = pick.choice(SIGN_WORDS)
    face = pick.choice(FONT_FILES)
    typeface = font(face, pick.choice((22, 24, 26)))
    probe = ImageDraw.Draw(Image.new("RGB", (8, 8)))
    left, top, right, bottom = (int(v) for v in probe.textbbox((0, 0), words, font=typeface))
    pad_x, pad_y = pick.randint(10, 18), pick.randint(8, 12)
    sign_w, sign_h = right - left + 2 * pad_x, bottom - top + 2 * pad_y
    x0 = pick.randint(6, WIDTH - sign_w - 6)
    y0 = pick.randint(6, HEIGHT // 2 - sign_h)
    sign_colour = pick.choice(((250, 250, 246), (245, 235, 200), (235, 240, 250)))
    occupied = np.zeros((HEIGHT, WIDTH), bool)
    occupied[max(0, y0 - 6) : y0 + sign_h + 6, max(0, x0 - 6) : x0 + sign_w + 6] = True
    # one to three objects, none touching another or the sign
    things: dict[str, Thing] = {}
    names = pick.sample(sorted(SHAPES), pick.randint(1, 3))
    for name in names:
        size = pick.choice(sorted(SIZES))
        r = SIZES[size]
        for _ in range(200):
            cx = pick.randint(r + 4, WIDTH - r - 5)
            cy = pick.randint(HEIGHT // 3 + r // 2, HEIGHT - r - 5)
            mask = _shape_mask(SHAPES[name], cx, cy, r)
            grown = cv2.dilate(mask.astype(np.uint8), np.ones((13, 13), np.uint8)) > 0
            if not (grown & occupied).any():
                break
        else:
            continue  # no room left for it
        colour = pick.choice(OBJECT_COLOURS)
        rgb = np.array(parse_color(colour), np.float32)
        yy, xx = np.mgrid[:HEIGHT, :WIDTH]
        shade = 1.0 - 0.3 * np.clip(((xx - cx + r / 3) ** 2 + (yy - cy + r / 3) ** 2) / r**2, 0, 1)
        image[mask] = rgb * shade[mask, None]
        occupied |= grown
        things[name] = Thing(name, mask, size, colour)
    picture = Image.fromarray(np.clip(image, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(picture)
    draw.rectangle((x0, y0, x0 + sign_w - 1, y0 + sign_h - 1), fill=sign_colour)
    draw.text((x0 + pad_x - left, y0 + pad_y - top), words, fill=(25, 25, 30), font=typeface)
    ink = (x0 + pad_x, y0 + pad_y, x0 + pad_x + right - left, y0 + pad_y + bottom - top)
    rgba = np.dstack([np.asarray(picture), np.full((HEIGHT, WIDTH), 255, np.uint8)])
    return SuiteScene(
        seed,
        background,
        rgba,
        things,
        Box(x0, y0, x0 + sign_w, y0 + sign_h, "sign"),
        Box(*ink, "text"),
        words,
        sign_colour,
        face,
    )


# --- tasks -----------------------------------------------------------------------------


def _object_truths(scene: SuiteScene, pick: random.Random) -> list[Truth]:
    """Candidate subtasks on the scene's objects, at most one edit per object."""
    out: list[Truth] = []
    for name, thing in scene.things.items():
        choice = pick.choice(("remove", "recolor", "remove", "recolor", "detect", "segment"))
        if choice == "remove":
            out.append(Truth(K.OBJECT_REMOVAL, f"remove the {name}", name, thing.mask))
        elif choice == "recolor":
            colour = pick.choice([c for c in RECOLOURS if c != thing.colour])
            out.append(
                Truth(
                    K.OBJECT_RECOLORATION,
                    f"recolor the {name} to {colour}",
                    name,
                    thing.mask,
                    colour=colour,
                )
            )
        elif choice == "detect":
            out.append(Truth(K.OBJECT_DETECTION, f"detect the {name}", name))
        else:
            out.append(Truth(K.OBJECT_SEGMENTATION, f"segment the {name}", name))
    return out


def _text_truths(scene: SuiteScene, pick: random.Random) -> list[Truth]:
    """Candidate subtasks on the sign: at most one edit of its text; reads (which the
    engine runs after the edits) only when the text stays readable, and they expect the
    text as the edits leave it."""
    sign = scene.masks["sign"]
    out: list[Truth] = []
    edit = pick.choice(("replace", "replace", "remove", "redact", "add", None))
    final = scene.sign_text
    if edit == "replace":
        final = pick.choice([w for w in NEW_WORDS if w != scene.sign_text])
        out.append(
            Truth(
                K.TEXT_REPLACEMENT,
                f"replace the sign text with {final}",
                "sign text",
                sign,
                text=final,
            )
        )
    elif edit == "remove":
        out.append(Truth(K.TEXT_REMOVAL, "remove the sign text", "text", sign))
    elif edit == "redact":
        out.append(Truth(K.TEXT_REDACTION, "redact the text", "text", sign, text=scene.sign_text))
    added = None
    if edit == "add" or (edit is None and pick.random() < 0.5):
        added = pick.choice([w for w in ADDED_WORDS if w not in scene.sign_text])
        out.append(Truth(K.TEXT_ADDITION, f"add the text '{added}'", text=added))
    if edit in ("remove", "redact"):
        return out
    readable = " ".join(w for w in (final, added) if w)
    for kind, clause in pick.sample(
        [
            (K.TEXT_DETECTION, "detect the text"),
            (K.TEXT_EXTRACTION, "extract the text"),
            (K.KEYWORD_HIGHLIGHTING, None),
        ],
        pick.randint(0, 3),
    ):
        if kind == K.KEYWORD_HIGHLIGHTING:
            word = pick.choice(final.split())
            out.append(Truth(kind, f"highlight the word '{word}'", word, sign, text=word))
        else:
            out.append(Truth(kind, str(clause), "text", text=readable))
    return out


def _picture_truths(pick: random.Random, background_removed: bool) -> list[Truth]:
    """Whole-picture subtasks, each offered to about half of the tasks."""
    out = []
    if pick.random() < 0.5:
        out.append(Truth(K.IMAGE_DEBLURRING, "sharpen the photo"))
    if pick.random() < 0.5:
        factor = pick.choice((2, 3))
        out.append(Truth(K.IMAGE_UPSCALING, f"upscale the image {factor}x", factor=factor))
    if not background_removed and pick.random() < 0.5:  # a cut-out has nothing to continue
        side = pick.choice(("left", "right", "top", "bottom"))
        out.append(Truth(K.OUTPAINTING, f"extend the image to the {side}", side=side))
    return out


def make_task(seed: int, size: int) -> Task | None:
    """A task of exactly `size` subtasks on scene `seed`, or None when the scene does not
    offer that many (the caller tries the next seed)."""
    pick = random.Random(seed * 7919 + size)
    scene = make_suite_scene(seed)
    pool = _object_truths(scene, pick) + _text_truths(scene, pick)
    background = pick.random() < 0.3
    if background:
        # what stays in front is every object and the sign: none of them is removed (a
        # removal before the cut-out would make its object background, one after not)
        pool = [t for t in pool if t.kind != K.OBJECT_REMOVAL]
        pool.append(Truth(K.BACKGROUND_REMOVAL, "remove the background", "background"))
    pool += _picture_truths(pick, background)
    if len(pool) < size:
        return None
    chosen = pick.sample(pool, size)
    # keep the text subtasks' order (edit before reads, as generated) and the rest shuffled
    texts = [t for t in pool if t in chosen and t.kind.value.startswith(("text", "keyword"))]
    others = [t for t in chosen if t not in texts]
    order = others + texts
    pick.shuffle(order)
    text_slots = [i for i, t in enumerate(order) if t in texts]
    for slot, truth in zip(text_slots, texts, strict=True):
        order[slot] = truth
    kept = tuple(_reads_see_the_edits(order, scene, pick))
    blurred = any(t.kind == K.IMAGE_DEBLURRING for t in kept)
    return Task(
        f"s{seed}-n{size}",
        scene,
        instruction(kept),
        kept,
        blurred,
    )


def _reads_see_the_edits(order: list[Truth], scene: SuiteScene, pick: random.Random) -> list[Truth]:
    """The reads' expected text from the edits that were chosen (the engine runs text
    reads after text edits): the replacement's words or the sign's, and any added word."""
    final = next((t.text for t in order if t.kind == K.TEXT_REPLACEMENT), scene.sign_text)
    added = next((t.text for t in order if t.kind == K.TEXT_ADDITION), None)
    assert final is not None
    out = []
    for t in order:
        if t.kind in (K.TEXT_DETECTION, K.TEXT_EXTRACTION):
            t = replace(t, text=" ".join(w for w in (final, added) if w))
        elif t.kind == K.KEYWORD_HIGHLIGHTING and str(t.text) not in final.split():
            word = pick.choice(final.split())
            t = replace(t, clause=f"highlight the word '{word}'", target=word, text=word)
        out.append(t)
    return out


def instruction(truths: tuple[Truth, ...]) -> str:
    clauses = [t.clause for t in truths]
    if len(clauses) == 1:
        return clauses[0]
    return ", ".join(clauses[:-1]) + " and " + clauses[-1]


def make_suite(seed: int = 0, tasks: int = 120) -> list[Task]:
    """`tasks` tasks, a quarter in each complexity bin (1-2, 3-4, 5-6, 7-8 subtasks),
    on scenes seeded from `seed` on."""
    out: list[Task] = []
    scene_seed = seed * 100_003
    sizes = [size for lo, hi in BUCKETS for size in (lo, hi)]
    while len(out) < tasks:
        size = sizes[len(out) % len(sizes)]
        task = None
        while task is None:
            task = make_task(scene_seed, size)
            scene_seed += 1
        out.append(task)
    return out


def describe(task: Task) -> dict[str, Any]:
    """The task in plain data (for the JSON report)."""
    return {
        "id": task.id,
        "instruction": task.instruction,
        "subtasks": [t.kind.value for t in task.truths],
        "background": task.scene.background,
        "objects": {n: [t.size, t.colour] for n, t in task.scene.things.items()},
        "sign": task.scene.sign_text,
        "font": task.scene.font,
    }

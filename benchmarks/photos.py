"""Real photographs with known truth: objects, subjects and signs composited into them.

The photographs are scikit-image's data photos (they ship inside the scikit-image
package) and, where the machine can fetch them, the nature photographs Debian ships in
`mate-backgrounds` (GPL-2+; `apt-get download` + `dpkg -x` into a cache folder at bench
time, never committed). Every photo is used at its native size.

What goes into a photo is made in code from other photographs, so its alpha is known
exactly: an *object* (a blob cut from another photo's texture, shaded like a solid
thing), a *subject* (a larger shape with thin parts: ears, a tail, a furry edge) and a
*sign* (a panel with a frame and a word, set in perspective). The photo without them is
the truth a removal must reach; the alpha is the truth a cut-out must reach.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw

from layerpath.errors import BadInput
from layerpath.kit.fonts import load_font
from layerpath.kit.types import Box

log = logging.getLogger(__name__)

#: scikit-image's photographs that ship in its package (the motorcycle is the left one
#: of a stereo pair)
SKIMAGE_PHOTOS = (
    "coffee",
    "chelsea",
    "astronaut",
    "rocket",
    "motorcycle",
    "brick",
    "grass",
    "gravel",
)
#: the Debian package holding nature photographs, and where they lie in it
DEBIAN_PACKAGE = "mate-backgrounds"
DEBIAN_FOLDER = "usr/share/backgrounds/mate/nature"
#: the fonts signs are set in
SIGN_FONTS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf",
)
WORDS = ("OPEN", "CLOSED", "SALE", "EXIT", "CAFE", "MENU", "HOTEL", "BAKERY", "PARKING")


@dataclass(frozen=True)
class Photo:
    name: str
    rgb: np.ndarray  # uint8, native size

    @property
    def megapixels(self) -> float:
        return self.rgb.shape[0] * self.rgb.shape[1] / 1e6


def skimage_photos() -> list[Photo]:
    try:
        from skimage import data
    except ImportError as exc:
        raise BadInput(
            "The photo suites use scikit-image's photos: pip install 'layerpath[bench]'"
        ) from exc
    found = []
    for name in SKIMAGE_PHOTOS:
        load = (
            (lambda: data.stereo_motorcycle()[0]) if name == "motorcycle" else getattr(data, name)
        )
        picture = np.asarray(load())
        if picture.ndim == 2:
            picture = np.dstack([picture] * 3)
        found.append(Photo(name, np.ascontiguousarray(picture[..., :3])))
    return found


def debian_photos(cache: Path) -> list[Photo]:
    """The nature photographs of Debian's mate-backgrounds, fetched once into `cache`
    (apt-get download + dpkg -x); none, with a warning, where that cannot be done."""
    folder = cache / "debian" / DEBIAN_FOLDER
    if not folder.is_dir():
        if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
            log.warning("no apt-get here: the photo suites use scikit-image's photos only")
            return []
        with tempfile.TemporaryDirectory() as tmp:
            try:
                subprocess.run(
                    ["apt-get", "download", DEBIAN_PACKAGE],
                    cwd=tmp,
                    check=True,
                    capture_output=True,
                    timeout=300,
                )
                package = next(Path(tmp).glob(f"{DEBIAN_PACKAGE}_*.deb"))
                (cache / "debian").mkdir(parents=True, exist_ok=True)  # dpkg -x makes one level
                subprocess.run(
                    ["dpkg", "-x", str(package), str(cache / "debian")],
                    check=True,
                    capture_output=True,
                    timeout=300,
                )
            except (subprocess.SubprocessError, StopIteration, OSError) as exc:
                log.warning(
                    "could not fetch %s (%s): scikit-image's photos only", DEBIAN_PACKAGE, exc
                )
                return []
    return [
        Photo(path.stem, np.asarray(Image.open(path).convert("RGB")))
        for path in sorted(folder.glob("*.jpg"))
    ]


def all_photos(cache: Path | None, debian: bool = True, split: str = "tuning") -> list[Photo]:
    """The photos of a split (benchmarks/sources.py). Tuning: scikit-image's photos, and
    with `debian` the nature photographs of mate-backgrounds and lomiri's (fetched into
    `cache`). Held out: plasma-workspace-wallpapers' photographs (none without
    `debian`, or where they cannot be fetched)."""
    from layerpath.benchmarks.sources import PHOTO_SOURCES, TUNING, photo_files, photo_name

    found = skimage_photos() if split == TUNING else []
    if debian and cache is not None:
        if split == TUNING:
            found += debian_photos(cache)  # (mate-backgrounds, where it always was)
        others = [s for s in PHOTO_SOURCES if s.package != DEBIAN_PACKAGE]
        found += [
            Photo(photo_name(path), np.asarray(Image.open(path).convert("RGB")))
            for path in photo_files(cache, split, others)
        ]
    return found


def split_photos(cache: Path, debian: bool, split: str) -> list[Photo]:
    """`all_photos`, or a clear error when none of the split's can be had."""
    photos = all_photos(cache, debian=debian, split=split)
    if not photos:
        raise BadInput(
            f"No {split} photos could be had here: the held-out photos are Debian's "
            "plasma-workspace-wallpapers, fetched with apt-get."
        )
    return photos


# --- things put into photos --------------------------------------------------------------


@dataclass(frozen=True)
class Insert:
    """An RGBA thing to put into a photo, its alpha exact."""

    rgb: np.ndarray  # uint8 (h, w, 3)
    alpha: np.ndarray  # float32 (h, w), 0..1


def blob_alpha(
    rng: np.random.Generator, size: tuple[int, int], roughness: float = 0.0
) -> np.ndarray:
    """A smooth random closed shape filling most of `size` (w, h), anti-aliased;
    `roughness` adds a fine jagged edge (fur, leaves)."""
    w, h = size
    scale = 4  # drawn four times larger, then shrunk: a soft, exact edge
    angles = np.linspace(0, 2 * np.pi, 360, endpoint=False)
    radius = np.ones_like(angles)
    for k in range(2, 6):
        radius += rng.uniform(0, 0.12 / k * 2) * np.cos(k * angles + rng.uniform(0, 2 * np.pi))
    if roughness:
        radius += roughness * rng.uniform(0.3, 1.0, len(angles)) * (rng.random(len(angles)) < 0.5)
    radius /= radius.max()
    xs = (w * scale / 2) * (1 + 0.96 * radius * np.cos(angles))
    ys = (h * scale / 2) * (1 + 0.96 * radius * np.sin(angles))
    big = np.zeros((h * scale, w * scale), np.uint8)
    cv2.fillPoly(big, [np.stack([xs, ys], axis=1).astype(np.int32)], 255)
    return cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


def textured(rng: np.random.Generator, source: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A crop of `source` (another photo) the size (w, h), its colours turned to a random
    hue and shaded as if lit from the top left."""
    w, h = size
    sh, sw = source.shape[:2]
    zoom = max(w / sw, h / sh, 1.0)
    if zoom > 1.0:
        source = cv2.resize(source, (int(sw * zoom) + 1, int(sh * zoom) + 1))
        sh, sw = source.shape[:2]
    y, x = int(rng.integers(0, sh - h + 1)), int(rng.integers(0, sw - w + 1))
    patch = source[y : y + h, x : x + w].astype(np.float32)
    hsv = cv2.cvtColor(patch / 255.0, cv2.COLOR_RGB2HSV)
    hsv[..., 0] = (hsv[..., 0] + rng.uniform(0, 360)) % 360
    hsv[..., 1] = np.clip(hsv[..., 1] * 0.5 + rng.uniform(0.3, 0.6), 0, 1)
    colour = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB) * 255.0
    yy, xx = np.mgrid[:h, :w].astype(np.float32)
    light = 1.15 - 0.45 * np.hypot((xx / w - 0.3), (yy / h - 0.3))
    return np.clip(colour * light[..., None], 0, 255).astype(np.uint8)


def make_object(rng: np.random.Generator, source: np.ndarray, size: tuple[int, int]) -> Insert:
    """A solid-looking thing: a random blob with another photo's texture."""
    return Insert(textured(rng, source, size), blob_alpha(rng, size))


def make_subject(rng: np.random.Generator, source: np.ndarray, size: tuple[int, int]) -> Insert:
    """A subject to cut out: a body with two ears, a thin tail and a furry edge."""
    w, h = size
    body = blob_alpha(rng, (w, int(h * 0.8)), roughness=0.03)
    alpha = np.zeros((h, w), np.float32)
    alpha[h - body.shape[0] :] = body
    ears = np.zeros((h * 4, w * 4), np.uint8)
    for side in (0.3, 0.7):
        cx, top = int(w * 4 * side), int(h * 4 * 0.02)
        base = int(h * 4 * 0.3)
        cv2.fillPoly(ears, [np.array([(cx - w // 2, base), (cx, top), (cx + w // 2, base)])], 255)
    tail = np.zeros_like(ears)
    start = (int(w * 4 * 0.85), int(h * 4 * 0.7))
    end = (int(w * 4 * 0.99), int(h * 4 * 0.25))
    cv2.line(tail, start, end, 255, max(4, w // 6))
    extra = cv2.resize(np.maximum(ears, tail), (w, h), interpolation=cv2.INTER_AREA) / 255.0
    alpha = np.maximum(alpha, extra.astype(np.float32))
    return Insert(textured(rng, source, size), alpha)


def sign_panel(
    text: str, height: int, font: str, panel: tuple[int, int, int] = (242, 238, 228)
) -> tuple[np.ndarray, Box]:
    """A flat sign (RGB): a light panel, a dark frame, the word in dark ink; and the
    box of the word's ink."""
    size = max(8, int(height * 0.5))
    face = load_font(size, font)
    x0, y0, x1, y1 = face.getbbox(text)
    width = int((x1 - x0) + height * 0.9)
    picture = Image.new("RGB", (width, height), panel)
    draw = ImageDraw.Draw(picture)
    line = max(2, height // 18)
    draw.rectangle((0, 0, width - 1, height - 1), outline=(70, 55, 40), width=line)
    left, top = (width - (x1 - x0)) / 2 - x0, (height - (y1 - y0)) / 2 - y0
    draw.text((left, top), text, fill=(30, 30, 30), font=face)
    ink = Box(int(left + x0), int(top + y0), int(np.ceil(left + x1)), int(np.ceil(top + y1)))
    return np.asarray(picture), ink


@dataclass(frozen=True)
class Placed:
    """A photo with something put in: the picture, the photo as it was (truth), the
    thing's alpha over the photo, and its bounds."""

    image: np.ndarray  # RGB uint8
    truth: np.ndarray  # RGB uint8
    alpha: np.ndarray  # float32 0..1, photo-sized
    box: Box

    @property
    def mask(self) -> np.ndarray:
        """What a photographer would draw: everything the thing covers, a little generous."""
        covered = (self.alpha > 0.02).astype(np.uint8)
        return cv2.dilate(covered, np.ones((5, 5), np.uint8)) > 0


def place(photo: np.ndarray, insert: Insert, at: tuple[int, int]) -> Placed:
    """The insert composited into the photo with its top left at `at` (x, y)."""
    h, w = insert.alpha.shape
    x, y = at
    out = photo.copy()
    alpha = np.zeros(photo.shape[:2], np.float32)
    alpha[y : y + h, x : x + w] = insert.alpha
    region = out[y : y + h, x : x + w].astype(np.float32)
    a = insert.alpha[..., None]
    out[y : y + h, x : x + w] = np.clip(region * (1 - a) + insert.rgb * a, 0, 255).astype(np.uint8)
    return Placed(out, photo, alpha, Box(x, y, x + w, y + h))


def place_in_perspective(
    photo: np.ndarray, flat: np.ndarray, at: tuple[int, int], rng: np.random.Generator
) -> tuple[Placed, np.ndarray]:
    """A flat picture (a sign) set into the photo in a slight perspective at `at`; the
    placed result and the homography from the flat picture to the photo."""
    h, w = flat.shape[:2]
    x, y = at
    jitter = lambda: rng.uniform(-0.06, 0.06)  # noqa: E731
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    placed = np.array(
        [
            [x + w * jitter(), y + h * jitter()],
            [x + w * (1 + jitter()), y + h * jitter()],
            [x + w * (1 + jitter()), y + h * (1 + jitter())],
            [x + w * jitter(), y + h * (1 + jitter())],
        ],
        np.float32,
    )
    homography = cv2.getPerspectiveTransform(corners, placed)
    size = (photo.shape[1], photo.shape[0])
    warped = cv2.warpPerspective(flat, homography, size, flags=cv2.INTER_CUBIC)
    cover = np.ones((h * 4, w * 4), np.float32)
    big = cv2.warpPerspective(
        cover,
        homography @ np.diag([0.25, 0.25, 1.0]).astype(np.float64),
        size,
        flags=cv2.INTER_LINEAR,
    )
    alpha = np.clip(big, 0, 1).astype(np.float32)
    out = np.clip(photo * (1 - alpha[..., None]) + warped * alpha[..., None], 0, 255).astype(
        np.uint8
    )
    xs, ys = placed[:, 0], placed[:, 1]
    box = Box(int(xs.min()), int(ys.min()), int(np.ceil(xs.max())), int(np.ceil(ys.max())))
    return Placed(out, photo, alpha, box), homography


def free_spot(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    size: tuple[int, int],
    avoid: Sequence[Box] = (),
) -> tuple[int, int] | None:
    """A top-left corner where a thing of `size` (w, h) fits inside the photo, a margin
    from its edges and clear of `avoid`; None when none is found."""
    h, w = shape[:2]
    margin = int(0.04 * min(h, w))
    for _ in range(60):
        x = int(rng.integers(margin, max(margin + 1, w - size[0] - margin)))
        y = int(rng.integers(margin, max(margin + 1, h - size[1] - margin)))
        box = Box(x, y, x + size[0], y + size[1])
        if box.x1 > w or box.y1 > h:
            continue
        if all(box.x1 < b.x0 or b.x1 < box.x0 or box.y1 < b.y0 or b.y1 < box.y0 for b in avoid):
            return x, y
    return None


@lru_cache(maxsize=1)
def texture_sources() -> tuple[np.ndarray, ...]:
    """Photos whose textures dress objects and subjects (fur, petals, stone, metal)."""
    by_name = {photo.name: photo.rgb for photo in skimage_photos()}
    return tuple(
        by_name[name] for name in ("chelsea", "coffee", "astronaut", "rocket", "motorcycle")
    )

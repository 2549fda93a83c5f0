"""Finding things in a photo offline, with nothing to download: faces (OpenCV's Haar
cascades), people (OpenCV's HOG people detector; both ship inside the opencv wheel), the
main subject (what stands apart from the picture's border, cut with GrabCut), the
background (all but the subject) and the sky (the bright, smooth region that reaches
the top edge). Position words pick among several ('the person on the left', 'the face
top right'); a rough box (a drag in the editor, a rectangle selection in Krita) is
refined into the object's mask with GrabCut (`refine_box`).

Each works on a copy of at most WORK_SIDE pixels on its long side; the mask is scaled up
to the photo, so a camera file costs what a small picture does.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from layerpath.errors import TargetNotFound, ToolFailed, shown
from layerpath.kit.imaging import component_boxes, guided_mask, main_pieces, small_copy
from layerpath.kit.names import finder_for, position_of
from layerpath.kit.regions import full_size_mask, overlap
from layerpath.kit.sky import find_sky
from layerpath.kit.types import ArtifactKind, Box, ToolContext, ToolResult
from layerpath.tools.background import salient_subject
from layerpath.tools.base import Tool

WORK_SIDE = 1024
#: the HOG detector's weight above which a figure counts (below: posts, coats, helmets)
FIGURE_SURE = 1.0


def pick(boxes: list[Box], position: str | None, shape: tuple[int, ...]) -> list[Box]:
    """The boxes a position names: 'left' the leftmost, 'top right' the one nearest that
    corner, 'largest' the biggest; all of them without a position."""
    if not boxes or not position:
        return boxes
    h, w = shape[:2]
    words = position.replace("middle", "center").split()
    if "largest" in words:
        return [max(boxes, key=lambda b: b.width * b.height)]
    if "smallest" in words:
        return [min(boxes, key=lambda b: b.width * b.height)]
    goal_x = 0.0 if "left" in words else (1.0 if "right" in words else 0.5)
    goal_y = 0.0 if "top" in words else (1.0 if "bottom" in words else 0.5)
    use_x = "left" in words or "right" in words or words == ["center"]
    use_y = "top" in words or "bottom" in words or words == ["center"]

    def distance(b: Box) -> float:
        cx, cy = (b.x0 + b.x1) / 2 / w, (b.y0 + b.y1) / 2 / h
        return (abs(cx - goal_x) if use_x else 0.0) + (abs(cy - goal_y) if use_y else 0.0)

    return [min(boxes, key=distance)]


@lru_cache(maxsize=4)
def _cascade(name: str) -> cv2.CascadeClassifier:
    folder = cv2.data.haarcascades  # type: ignore[attr-defined]  # (the wheel's data)
    cascade = cv2.CascadeClassifier(folder + name)
    if cascade.empty():
        raise TargetNotFound(f"OpenCV's face detector ({name}) is missing from this install.")
    return cascade


def find_faces(small: np.ndarray) -> list[Box]:
    """Faces, frontal and in profile (both directions), on a small RGB copy."""
    grey = cv2.equalizeHist(cv2.cvtColor(small, cv2.COLOR_RGB2GRAY))
    side = min(grey.shape)
    smallest = max(20, side // 40)
    size = (smallest, smallest)
    frontal = _cascade("haarcascade_frontalface_default.xml")
    profile = _cascade("haarcascade_profileface.xml")
    found = [
        (int(x), int(y), int(w), int(h))
        for x, y, w, h in frontal.detectMultiScale(grey, 1.1, 6, minSize=size)
    ]
    found += [
        (int(x), int(y), int(w), int(h))
        for x, y, w, h in profile.detectMultiScale(grey, 1.1, 6, minSize=size)
    ]
    flipped = profile.detectMultiScale(grey[:, ::-1].copy(), 1.1, 6, minSize=size)
    found += [(grey.shape[1] - int(x) - int(w), int(y), int(w), int(h)) for x, y, w, h in flipped]
    return _distinct([Box(x, y, x + w, y + h, "face") for x, y, w, h in found])


def find_people(small: np.ndarray) -> list[Box]:
    """People on a small copy: standing figures (OpenCV's HOG + linear SVM people
    detector, the surer ones), and below each face no figure holds, the body it
    belongs to (a portrait's sitter, whom HOG, trained on whole figures, misses)."""
    h, w = small.shape[:2]
    figures = _figures(small)
    for face in find_faces(small):
        if any(overlap(face, f) > 0.8 for f in figures):
            continue
        fw, fh = face.width, face.height
        figures.append(
            Box(
                max(0, int(face.x0 - 1.3 * fw)),
                max(0, int(face.y0 - 0.4 * fh)),
                min(w, int(face.x1 + 1.3 * fw)),
                min(h, int(face.y1 + 6 * fh)),
                "person",
                2.0,
            )
        )  # fmt: skip (score 2: a body below a face)
    return _distinct(figures)


def _figures(small: np.ndarray) -> list[Box]:
    """Whole standing figures: OpenCV's HOG people detector, its surer answers."""
    hog = cv2.HOGDescriptor()
    hog.setSVMDetector(cv2.HOGDescriptor_getDefaultPeopleDetector())  # type: ignore[attr-defined]
    scale = min(1.0, 800 / max(small.shape[:2]))
    work = cv2.resize(small, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    rects, weights = hog.detectMultiScale(work, winStride=(8, 8), padding=(8, 8), scale=1.05)
    boxes = [
        Box(
            int(x / scale),
            int(y / scale),
            int((x + w) / scale),
            int((y + h) / scale),
            "person",
            float(s),
        )
        for (x, y, w, h), s in zip(rects, np.ravel(weights), strict=True)
        if float(s) > FIGURE_SURE
    ]
    return _distinct(boxes)


def _distinct(boxes: list[Box]) -> list[Box]:
    """Overlapping detections of one thing kept once (the larger)."""
    kept: list[Box] = []
    for box in sorted(boxes, key=lambda b: -(b.width * b.height)):
        if all(overlap(box, k) < 0.4 for k in kept):
            kept.append(box)
    return kept


def person_mask(small: np.ndarray, box: Box) -> np.ndarray:
    """One person's mask in their box: GrabCut, holding the face and the neck and chest
    below it as the person's when the box was found from a face (score 2)."""
    sure = None
    if box.score == 2.0:  # the face sits in the top of the box, 1.3 face widths in
        fw = box.width / 3.6
        fh = fw  # (a face box is square)
        cx = (box.x0 + box.x1) / 2
        top = box.y0 + 0.4 * fh
        sure = np.zeros(small.shape[:2], bool)
        ys, xs = np.mgrid[: small.shape[0], : small.shape[1]]
        face = ((xs - cx) / (0.4 * fw)) ** 2 + ((ys - top - 0.55 * fh) / (0.45 * fh)) ** 2 <= 1
        chest = (np.abs(xs - cx) <= 0.6 * fw) & (ys >= top + fh) & (ys <= top + 2.8 * fh)
        sure = face | chest
    # specks GrabCut left along the body's edge go: at a camera file's size they show as
    # unblurred crumbs in a blurred background
    return main_pieces(refine_box(small, box, sure=sure))


def face_mask(shape: tuple[int, int], boxes: list[Box]) -> np.ndarray:
    """An ellipse over each face box, grown to take in the hairline and chin."""
    mask = np.zeros(shape, np.uint8)
    for b in boxes:
        centre = ((b.x0 + b.x1) // 2, (b.y0 + b.y1) // 2 + b.height // 20)
        axes = (int(b.width * 0.62), int(b.height * 0.78))
        cv2.ellipse(mask, centre, axes, 0, 0, 360, 1, -1)
    return mask.astype(bool)


def refine_box(
    small: np.ndarray, box: Box, iterations: int = 5, sure: np.ndarray | None = None
) -> np.ndarray:
    """The object inside a rough box (small RGB copy): GrabCut from the rectangle, with
    the pixels `sure` marks held as the object's."""
    h, w = small.shape[:2]
    x0, y0 = max(0, box.x0), max(0, box.y0)
    x1, y1 = min(w, box.x1), min(h, box.y1)
    if x1 - x0 < 4 or y1 - y0 < 4:
        mask = np.zeros((h, w), bool)
        mask[y0:y1, x0:x1] = True
        return mask
    labels = np.full((h, w), cv2.GC_BGD, np.uint8)
    labels[y0:y1, x0:x1] = cv2.GC_PR_FGD
    if sure is not None:
        labels[sure & (labels == cv2.GC_PR_FGD)] = cv2.GC_FGD
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(0)  # (as in tools/background.py: the same photo, the same cut)
    bgr = np.ascontiguousarray(small[..., ::-1])
    cv2.grabCut(bgr, labels, (0, 0, 0, 0), bgd, fgd, iterations, cv2.GC_INIT_WITH_MASK)
    return np.isin(labels, (cv2.GC_FGD, cv2.GC_PR_FGD))


def object_at(image_rgb: np.ndarray, point: tuple[int, int]) -> np.ndarray:
    """The object under a click (x, y): GrabCut on a copy at most WORK_SIDE across, the
    click's neighbourhood held as the object, in a frame around it that grows (a fifth,
    a third, then most of the picture) until the piece holding the click no longer
    reaches the frame's edge: a face, not the person; a cup, not the table."""
    h, w = image_rgb.shape[:2]
    small = small_copy(image_rgb, WORK_SIDE)
    scale = small.shape[1] / w
    sh, sw = small.shape[:2]
    x, y = int(point[0] * scale), int(point[1] * scale)
    if not (0 <= x < sw and 0 <= y < sh):
        raise TargetNotFound("The click is outside the picture.")
    sure = np.zeros((sh, sw), bool)
    cv2.circle(sure.view(np.uint8), (x, y), max(2, min(sh, sw) // 60), 1, -1)
    piece = sure
    for share in (0.2, 0.33, 0.45):
        half_w, half_h = int(sw * share), int(sh * share)
        box = Box(max(0, x - half_w), max(0, y - half_h), min(sw, x + half_w), min(sh, y + half_h))
        found = refine_box(small, box, sure=sure).astype(np.uint8)
        count, parts = cv2.connectedComponents(found)
        piece = parts == parts[y, x] if count > 1 and parts[y, x] else found.astype(bool)
        ys, xs = np.nonzero(piece)
        inside = (
            (xs.min() > box.x0 or box.x0 == 0)
            and (ys.min() > box.y0 or box.y0 == 0)
            and (xs.max() < box.x1 - 1 or box.x1 == sw)
            and (ys.max() < box.y1 - 1 or box.y1 == sh)
        )
        if inside:
            break
    return full_size_mask(piece, image_rgb.shape)


def not_found(target: str | None, what: str | None = None) -> TargetNotFound:
    """The message when nothing here can find the target: what would."""
    named = shown(target or "it")
    if what:
        return TargetNotFound(f"No {what} was found in the photo for '{named}'.")
    return TargetNotFound(
        f"layerpath cannot find '{named}' in the photo by itself: offline it finds faces, "
        "people, the main subject, the background and the sky. Select it (a rough box is "
        "enough), name a mask or layer after it, or download the object detector "
        "yolov8n-onnx (Tools) to find the 80 everyday kinds of object by name."
    )


def _people_or_subject(
    small: np.ndarray, params: Mapping[str, Any], ctx: ToolContext
) -> tuple[list[Box], np.ndarray | None]:
    """The people in a small copy and, found meanwhile on another core, its salient
    subject (GrabCut, the longer of the two): the subject is let go when there are
    people (it stops at its next round), else it is the background's complement."""
    stop = threading.Event()
    quiet = dataclasses.replace(
        ctx, cancelled=lambda: ctx.cancelled() or stop.is_set(), progress=lambda share: None
    )
    pool = ThreadPoolExecutor(max_workers=1)
    subject = pool.submit(salient_subject, small, params, quiet)
    try:
        people = find_people(small)
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=False)
    if people:
        stop.set()
        return people, None
    try:
        return [], subject.result()
    except ToolFailed:  # (no subject stands out: said as before, by the finder)
        return [], None


class OfflineFinder(Tool):
    """Faces, people, the subject, the background and the sky, found without a model
    download; a position picks one of several."""

    def declines(self, ctx: ToolContext) -> str | None:
        return str(not_found(ctx.target)) if finder_for(ctx.target) is None else None

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        what = finder_for(ctx.target)
        if what is None:
            raise not_found(ctx.target)
        small = small_copy(image, int(params["resolution"]))
        position = position_of(ctx.target, ctx.subtask_params)
        if what in ("face", "people"):
            found = find_faces(small) if what == "face" else find_people(small)
            chosen = pick(found, position, small.shape)
            if not chosen:
                raise not_found(ctx.target, "face" if what == "face" else "person")
            if what == "face":
                mask = face_mask(small.shape[:2], chosen)
            else:
                mask = np.zeros(small.shape[:2], bool)
                for box in chosen:
                    mask |= person_mask(small, box)
        elif what == "sky":
            mask = find_sky(small)
            if mask.mean() < 0.02:
                raise not_found(ctx.target, "sky")
        else:
            people: list[Box] = []
            made = None
            if what == "background":
                people, made = _people_or_subject(small, params, ctx)
            if people:  # a portrait's or a street's background: all but the people in it
                subject = np.zeros(small.shape[:2], bool)
                for box in people:
                    subject |= person_mask(small, box)
                mask = ~subject
            else:
                subject = (made if made is not None else salient_subject(small, params, ctx)) > 0.5
                if position:  # 'the object on the left': one piece of the subject
                    keep = pick(list(component_boxes(subject, "subject")), position, small.shape)
                    inside = np.zeros_like(subject)
                    for box in keep:
                        inside[box.y0 : box.y1, box.x0 : box.x1] = True
                    subject &= inside
                mask = ~subject if what == "background" else subject
                if not mask.any() or mask.all():
                    raise not_found(ctx.target, "subject")
        # a face's ellipse is drawn to be feathered; a found outline is moved onto the
        # photo's own edges at its size
        full = full_size_mask(mask, image.shape) if what == "face" else guided_mask(mask, image)
        boxes = component_boxes(full, what)
        if not boxes:
            raise not_found(ctx.target, what)
        return ToolResult({ArtifactKind.MASK: full, ArtifactKind.BOXES: boxes})

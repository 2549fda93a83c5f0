"""Is a region a finder found the right one? Measured on the picture, not taken from the
finder: a region edit is done only on a region these measures vouch for, and a doubtful
one is refused with what to do instead (select it, or name a mask after it).

- Its edge lies on a change in the picture: along a right region's outline the colours
  just inside differ from those just outside (a sky cut by a straight row, or a band
  left along a ridge, runs through one colour).
- A sky's edge lies on the picture's edges and no sky carries on past it: the pixels
  just outside are not of the sky's colour nearby and smooth (a sky that stops at a
  row, or leaves clouds out, fails); a ceiling's lamps or a bokeh's smooth light in no
  sky's place fail the first measures.
- A subject (or what a background leaves) is one thing or a few standing in the frame:
  not many pieces of texture, not a large stretch running off two sides of the frame.

Measured on a copy of CHECK_SIDE pixels on its long side, where a region's outline is a
few pixels wide at any photo size.
"""

from __future__ import annotations

import cv2
import numpy as np

from layerpath.engine.judge.checks.verdict import Verdict, verdict
from layerpath.kit.imaging import dilate, erode, mean_and_reach_near, mean_near
from layerpath.kit.sky import edge_doubt, sky_doubts, work_copies

#: the found sky's working point (engine/judge/checks/verdict.py): the least strictness
#: at which the tuning split's found-sky cases (222, 2026-11-29) pass at most 5 % of the
#: wrong skies (8 -> 6 of 134: a wall taken for the sky and a far canyon taken in, each
#: doubted at 0.8 of a tolerance); its right skies score 0.81 at the least (a doubt of
#: 0.3), far from it
SKY_STRICTNESS = 1.25

#: the share of a subject's area a piece must have to count as a piece of it
PIECE = 0.1
#: the share of a frame side a subject must run along to touch it
TOUCHES = 0.03


def subject_shape(subject: np.ndarray) -> tuple[int, int, float]:
    """(how many pieces of a tenth of its area or more the subject is in, how many of
    the frame's sides it runs off, the share of the picture it fills): a subject is one
    thing, or a few, standing in the frame; a found 'subject' in many pieces, or a
    large one running off the frame on two sides, is a finder's guess at texture."""
    count, parts, stats, _ = cv2.connectedComponentsWithStats(subject.astype(np.uint8))
    area = float(subject.sum())
    pieces = sum(1 for k in range(1, count) if stats[k, cv2.CC_STAT_AREA] >= PIECE * area)
    sides = [subject[0], subject[-1], subject[:, 0], subject[:, -1]]
    touched = sum(1 for side in sides if side.mean() >= TOUCHES)
    return pieces, touched, area / subject.size


def check_found_region(what: str | None, picture: np.ndarray, region: np.ndarray) -> Verdict:
    """Whether a region a finder found for `what` ('sky', 'background', 'subject', ...)
    is right, from the picture (RGBA or RGB, any depth) and the region (bool, its size)."""
    share = float(region.mean()) if region.size else 0.0
    whole = 0.999 if what == "background" else 0.98  # (a background around a small bird)
    if share < 0.001:
        return Verdict(0.0, "the region found is empty", {"the region is empty": 2.0})
    if share > whole:
        return Verdict(
            0.0, "the region found is the whole picture", {"the region is the whole picture": 2.0}
        )
    small, inside = work_copies(picture, region)
    if not inside.any() or inside.all():
        return Verdict(0.0, "the region found is too small to judge", {"the region is empty": 2.0})
    if what == "sky":
        defects = sky_doubts(small, inside)
    else:
        defects = {"its edge does not follow the picture": edge_doubt(small, inside)}
    if what in ("background", "subject"):
        subject = ~inside if what == "background" else inside
        pieces, sides, share = subject_shape(subject)
        defects["the subject found is in pieces"] = max(0, pieces - 2) * 1.0
        sprawling = sides >= 3 or (sides >= 2 and share > 0.4)
        defects["the subject found runs off the frame"] = 2.0 if sprawling else 0.0
        defects["something left out stands out more than the subject"] = (
            max(0.0, standing_out(small, subject) - STANDS_OUT) / 0.2
        )
        left_in = (
            "part of the subject seems left in the background"
            if what == "background"
            else "the subject seems to carry on past the edge found"
        )
        defects[left_in] = max(0.0, carried_on(small, subject) - CARRIES_ON[0]) / CARRIES_ON[1]
    return verdict(defects, strictness=SKY_STRICTNESS if what == "sky" else 1.0)


#: the share of a band just outside a found subject that may look like the subject there
#: (and unlike the ground around it), and the share more that is the tolerance: chosen on
#: the tuning split, where right subjects leave at most 0.09 and half a thing cut off,
#: or a cat found by its face alone, 0.15-0.2
CARRIES_ON = (0.05, 0.07)
#: colours this close (CIELAB) to the subject's beside them are of the subject, when
#: they are this much further from the ground's
SUBJECT_LIKE, GROUND_APART = 8.0, 4.0


def carried_on(picture: np.ndarray, subject: np.ndarray) -> float:
    """The share of a band just outside the subject (two to six pixels out) whose colours
    are the subject's beside them and not the ground's further out: the part of a thing
    a cut left in the background, a cat's ears and body when its face was taken for it.
    Where the subject's colours are the ground's too, nothing counts; nor does the band
    where no ground lies near enough to say what the ground's colour is (a strip of
    background along the frame's edge thinner than the band): 0 when there is none."""
    lab = cv2.cvtColor(picture.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
    band = dilate(subject, 6) & ~dilate(subject, 2)
    inner, ground = erode(subject, 2), ~dilate(subject, 8)
    reach = max(3.0, 0.02 * max(subject.shape))
    ground_colour, reached = mean_and_reach_near(lab, ground, 3 * reach)
    band &= reached
    if not band.any() or not inner.any():
        return 0.0
    to_subject = np.linalg.norm(lab - mean_near(lab, inner, reach), axis=2)
    to_ground = np.linalg.norm(lab - ground_colour, axis=2)
    like = (to_subject < SUBJECT_LIKE) & (to_ground > to_subject + GROUND_APART)
    return float(like[band].mean())


#: the largest patch outside the found subject that stands out more than the subject
#: does (border saliency), as a share of the subject's area, that is still no subject
STANDS_OUT = 0.3


def standing_out(picture: np.ndarray, subject: np.ndarray) -> float:
    """How large (a share of the found subject's area) the largest patch outside the
    subject is that stands out from the picture's border more than the subject itself
    does (its median): a bird left in the background, the half of a thing cut off, the
    true subject when texture was taken for it. Bright specks scattered over a busy
    photo are many small patches, not one."""
    from layerpath.kit.segments import border_saliency

    saliency = border_saliency(picture)
    area = float(subject.sum())
    if area < 16:
        return 0.0
    apart = ~(cv2.dilate(subject.astype(np.uint8), np.ones((3, 3), np.uint8), iterations=3) > 0)
    louder = (saliency > float(np.median(saliency[subject]))) & apart
    count, _, stats, _ = cv2.connectedComponentsWithStats(louder.astype(np.uint8))
    largest = max((stats[k, cv2.CC_STAT_AREA] for k in range(1, count)), default=0)
    return float(largest) / area

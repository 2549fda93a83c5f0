"""What the words of a subtask name: the user's own mask or selection ('the cat' is the
mask called 'cats'), the offline finder a region's words ask for ('the sky', 'her
face', 'the people on the left') and the position among several, and the text a text
subtask is about (a literal, or digits / an email / a phone number), and the COCO class
a detector knows the target by."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from layerpath.errors import TargetNotFound, shown
from layerpath.kit.types import TextBox

_ARTICLES = {"the", "a", "an", "this", "that", "these", "those", "all", "my", "its", "his", "her"}
SELECTION_WORDS = {"", "this", "it", "here", "selection", "the selection", "selected area"}


def normalize_name(name: str) -> str:
    """'The Cats ' -> 'cats': lower case, no articles, single spaces."""
    words = [w for w in name.lower().replace("_", " ").split() if w not in _ARTICLES]
    return " ".join(words)


def _singular(word: str) -> str:
    for suffix, repl in (("ies", "y"), ("ses", "s"), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            return word[: -len(suffix)] + repl
    return word


def resolve_mask(
    target: str | None, masks: Mapping[str, np.ndarray], selection: np.ndarray | None
) -> tuple[str, np.ndarray]:
    """Find the mask a target names: exact, singular/plural, head noun, then any word.

    "the cat" -> mask "cat"; "the red car" -> "car"; "this" -> the selection.
    """
    wanted = normalize_name(target or "")
    if wanted in SELECTION_WORDS:
        if selection is not None and selection.any():
            return "selection", selection
        # a mask given as the selection (the command line's --mask this=FILE, a host
        # that hands its selection over as a file)
        for name, mask in masks.items():
            if normalize_name(name) in SELECTION_WORDS and mask.any():
                return name, mask
        raise TargetNotFound(
            "The instruction refers to 'this' but nothing is selected. Select the region "
            "first (on the command line: --mask this=MASK.png), or name the object and give "
            "its mask."
        )
    by_name = {normalize_name(name): (name, mask) for name, mask in masks.items()}
    singular = {_singular(k): v for k, v in by_name.items()}
    words = wanted.split()
    for found in (
        by_name.get(wanted),
        singular.get(_singular(wanted)),
        singular.get(_singular(words[-1])),
        next((v for k, v in singular.items() if k in {_singular(w) for w in words}), None),
    ):
        if found is not None and found[1].any():
            return found
    if selection is not None and selection.any():  # the user selected what they name
        return "selection", selection
    known = shown(", ".join(sorted(masks)) or "none", 400)
    raise TargetNotFound(
        f"No mask for '{shown(target or '')}'. Masks in this request: {known}. Select it, or "
        "name a mask or layer after it."
    )


def user_region(
    target: str | None, masks: Mapping[str, np.ndarray], selection: np.ndarray | None
) -> str | None:
    """The name of the user's own region for a target (a mask named after it, or the
    selection), None when they gave none: then, and only then, may a finder look."""
    try:
        label, _ = resolve_mask(target, masks, selection)
    except TargetNotFound:
        return None
    return label


FACES = {"face", "faces", "head", "heads", "portrait"}
PEOPLE = {
    "person", "people", "man", "men", "woman", "women", "child", "children", "kid", "kids",
    "boy", "girl", "guy", "lady", "tourist", "tourists", "pedestrian", "pedestrians",
    "figure", "figures", "human", "humans", "someone", "bystander", "bystanders",
}  # fmt: skip
SUBJECT = {"subject", "main subject", "foreground", "object", "main object", "model"}
BACKGROUND = {"background", "backdrop", "surroundings"}
SKY = {"sky", "skies", "clouds", "the sky"}
POSITIONS = ("left", "right", "top", "bottom", "center", "middle", "largest", "smallest")
#: the found regions whose outline is the thing's own, along the photo's edges (a face's
#: region is an ellipse over the detector's box, drawn to be feathered)
ALONG_EDGES = ("sky", "background", "subject")


def finder_for(target: str | None) -> str | None:
    """Which offline finder a target's words name ('face', 'people', 'subject',
    'background', 'sky'), None when none does."""
    words = re.findall(r"[a-z]+", (target or "").lower())
    phrase = " ".join(words)
    vocabularies = (
        ("face", FACES),
        ("sky", SKY),
        ("background", BACKGROUND),
        ("people", PEOPLE),
        ("subject", SUBJECT),
    )
    for name, vocabulary in vocabularies:
        if phrase in vocabulary:
            return name
    for word in words:  # the first that names one: 'the people in the background'
        for name, vocabulary in vocabularies:
            if word in vocabulary:
                return name
    return None


def position_of(target: str | None, params: Mapping[str, Any]) -> str | None:
    """The position a subtask asks for: its 'position' parameter, else a position
    word in the target ('the person on the left')."""
    given = params.get("position")
    if given:
        return str(given)
    words = re.findall(r"[a-z]+", (target or "").lower())
    found = [w for w in words if w in POSITIONS]
    return " ".join(found) or None


_PATTERNS = {
    "digits": r"\d",
    "email": r"[\w.+-]+@[\w-]+\.[\w.]+",
    "phone": r"\+?\d[\d\s().-]{5,}\d",
}


def text_matches(found: str, wanted: str) -> bool:
    """OCR-tolerant match: substring, or similar enough (OCR confuses O/0, l/1)."""
    a, b = found.strip().lower(), wanted.strip().lower()
    return bool(b) and (b in a or difflib.SequenceMatcher(None, a, b).ratio() >= 0.7)


#: how many times the largest line of every other block of text a sign's largest line
#: must be (by area) for "the text" of a replacement to mean its block alone (a sign's
#: word against a boat's number plate: 4.8; a notice of many small lines counts by its
#: largest line, not their sum)
DOMINANT = 2.0


def text_blocks(boxes: Sequence[TextBox]) -> list[list[TextBox]]:
    """The lines grouped into blocks (a sign's lines together): two lines are of one
    block when their boxes, each grown by the smaller line's height, meet."""
    group = list(range(len(boxes)))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i, a in enumerate(boxes):
        for j in range(i):
            b = boxes[j]
            reach = min(a.box.height, b.box.height)
            apart_x = max(a.box.x0, b.box.x0) - min(a.box.x1, b.box.x1)
            apart_y = max(a.box.y0, b.box.y0) - min(a.box.y1, b.box.y1)
            if apart_x <= reach and apart_y <= reach:
                group[root(i)] = root(j)
    blocks: dict[int, list[TextBox]] = {}
    for i, b in enumerate(boxes):
        blocks.setdefault(root(i), []).append(b)
    return list(blocks.values())


def _prominence(block: Sequence[TextBox]) -> int:
    """How much a block of text stands out: its largest line's area."""
    return max(b.box.width * b.box.height for b in block)


def block_selected(block: Sequence[TextBox], selection: np.ndarray) -> bool:
    """Whether a line of the block has its centre in the selection."""
    h, w = selection.shape[:2]
    return any(
        bool(
            selection[
                min(h - 1, (b.box.y0 + b.box.y1) // 2), min(w - 1, (b.box.x0 + b.box.x1) // 2)
            ]
        )
        for b in block
    )


def select_text_boxes(
    boxes: Sequence[TextBox],
    params: Mapping[str, Any],
    replacing: bool = False,
    selection: np.ndarray | None = None,
) -> list[TextBox]:
    """The boxes a text subtask is about: those matching params['match'] (literal text)
    or params['pattern'] (digits / email / phone), else all of them. `replacing`: one
    word is written over one block of text, so where they lie in several, the block far
    the most prominent when none is named (DOMINANT: "the sign's text" on a photo with a
    number plate in a corner), else those whose lines the `selection` holds the centre
    of, else all of them (and a replacement refuses to write one word over several:
    tools/text.py)."""
    named = bool(params.get("match") or params.get("pattern"))
    if params.get("match"):
        chosen = [b for b in boxes if text_matches(b.text, str(params["match"]))]
    elif params.get("pattern"):
        regex = re.compile(_PATTERNS[str(params["pattern"])])
        chosen = [b for b in boxes if regex.search(b.text)]
    else:
        chosen = list(boxes)
    blocks = text_blocks(chosen)
    if not replacing or len(blocks) <= 1:
        return chosen
    if not named:
        ranked = sorted(blocks, key=_prominence, reverse=True)
        if _prominence(ranked[0]) >= DOMINANT * _prominence(ranked[1]):
            return ranked[0]
    if selection is not None and selection.any():
        held = [b for block in blocks if block_selected(block, selection) for b in block]
        if held:
            return held
    return chosen


#: The 80 COCO classes in the order of the detectors' class ids.
COCO_CLASSES = tuple(
    name.strip()
    for name in (
        "person, bicycle, car, motorcycle, airplane, bus, train, truck, boat, traffic light, "
        "fire hydrant, stop sign, parking meter, bench, bird, cat, dog, horse, sheep, cow, "
        "elephant, bear, zebra, giraffe, backpack, umbrella, handbag, tie, suitcase, frisbee, "
        "skis, snowboard, sports ball, kite, baseball bat, baseball glove, skateboard, surfboard, "
        "tennis racket, bottle, wine glass, cup, fork, knife, spoon, bowl, banana, apple, "
        "sandwich, orange, broccoli, carrot, hot dog, pizza, donut, cake, chair, couch, "
        "potted plant, bed, dining table, toilet, tv, laptop, mouse, remote, keyboard, "
        "cell phone, microwave, oven, toaster, sink, refrigerator, book, clock, vase, scissors, "
        "teddy bear, hair drier, toothbrush"
    ).split(",")
)
#: Everyday words for COCO classes.
SYNONYMS = {
    "man": "person",
    "woman": "person",
    "people": "person",
    "child": "person",
    "kid": "person",
    "boy": "person",
    "girl": "person",
    "bike": "bicycle",
    "motorbike": "motorcycle",
    "plane": "airplane",
    "ball": "sports ball",
    "football": "sports ball",
    "table": "dining table",
    "sofa": "couch",
    "plant": "potted plant",
    "television": "tv",
    "phone": "cell phone",
    "mobile phone": "cell phone",
    "glass": "wine glass",
    "mug": "cup",
    "doughnut": "donut",
    "fridge": "refrigerator",
    "hair dryer": "hair drier",
    "teddy": "teddy bear",
}


def coco_class(target: str) -> str | None:
    """The COCO class a target names ('balls' -> 'sports ball'), None when none."""
    words = target.lower().strip()
    for word in (words, words.removesuffix("es"), words.removesuffix("s")):
        if word in COCO_CLASSES:
            return word
        if word in SYNONYMS:
            return SYNONYMS[word]
    return None

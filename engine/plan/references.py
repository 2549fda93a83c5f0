"""References: pictures, notes and voice memos the user gives beside the photo, by name
(`--ref swatch=paint.jpg`, the panel's References), and what an instruction takes from
them (multimodal reference-guided editing, in two stages).

Stage 1 answers what an edit may ask of a reference: a picture's colour (a swatch's:
its largest patch of one colour), the words in a note (a text file, the text OCR reads
in a picture, or a voice memo transcribed through the endpoint's audio API), a
picture's colours (their statistics in CIELAB, for a colour transfer) and its sky.
Stage 2 grounds the instruction: before planning, a reference's name in the words
becomes what the planner reads ('the colour of swatch' -> its colour, 'the name in note'
-> the placeholder '@note', 'the one in ref' -> '@ref'); after planning, each
placeholder becomes its value (the note's words, the picture's sky), the subtask
remembering which reference it came from. Nothing a reference says reaches the planner:
the planner reads placeholders and colours, never a note's words.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from layerpath.engine.kinds import kind_spec
from layerpath.engine.types import Subtask, SubtaskKind
from layerpath.errors import BadInput, LayerpathError, shown
from layerpath.files import regular_file

log = logging.getLogger(__name__)
K = SubtaskKind

PICTURES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp"}
TEXTS = {".txt", ".md", ".text"}
SOUNDS = {".wav", ".mp3", ".m4a", ".ogg", ".flac", ".webm", ".mp4", ".mpga", ".mpeg"}
#: what a reference may weigh: a note is a few words; the audio API takes 25 MB
MAX_TEXT_BYTES = 20_000
MAX_AUDIO_BYTES = 25 * 1024 * 1024
MAX_PICTURE_PIXELS = 60_000_000
#: words a sign or a caption can take from a note
MAX_WORDS_CHARS = 120
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")


class ReferenceKind(str, Enum):
    PICTURE = "picture"
    TEXT = "text"
    AUDIO = "audio"


#: speech (the file's bytes and its name) -> its words; None: no endpoint to ask
Transcriber = Callable[[bytes, str], str]


@dataclass(eq=False)
class Reference:
    """One reference: a picture (RGB), a note's words or a voice memo's bytes. What is
    read from it is kept once read (`answers`, for the report)."""

    name: str
    kind: ReferenceKind
    source: str  # the file's name, as the user gave it
    pixels: np.ndarray | None = None
    text: str | None = None  # a text note's content
    sound: bytes | None = None
    answers: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """What it is, for a panel's slot: 'paint.jpg (picture, 640x480)'."""
        if self.pixels is not None:
            return f"{self.source} (picture, {self.pixels.shape[1]}x{self.pixels.shape[0]})"
        if self.kind == ReferenceKind.AUDIO:
            return f"{self.source} (voice memo, transcribed when used)"
        return f"{self.source} (note: {shown(' '.join((self.text or '').split()), 40)})"

    def answer(self, question: str, work_out: Callable[[], Any]) -> Any:
        """What it says to `question` ('colour', 'words', ...), worked out once."""
        if question not in self.answers:
            self.answers[question] = work_out()
        return self.answers[question]

    def colour(self) -> str:
        """Its colour, as '#rrggbb' (a picture's: swatch_colour)."""
        return str(self.answer("colour", lambda: _hex(swatch_colour(self.picture("a colour")))))

    def colours(self) -> dict[str, list[float]]:
        """Its colours' CIELAB mean and spread (a picture's)."""
        found: dict[str, list[float]] = self.answer(
            "colours", lambda: colour_stats(self.picture("colours to match"))
        )
        return found

    def sky(self) -> dict[str, list[float]]:
        """Its sky's colours' CIELAB mean and spread (a picture's sky)."""
        from layerpath.kit.sky_edge import sky_of

        found: dict[str, list[float]] = self.answer(
            "sky", lambda: sky_stats(sky_of(self.picture("a sky")))
        )
        return found

    def words(self, transcribe: Transcriber | None) -> str:
        """Its words on one line (note_words)."""
        return str(self.answer("words", lambda: note_words(self, transcribe)))

    def picture(self, what: str) -> np.ndarray:
        """Its pixels; a clear error when it is not a picture (`what` came from one)."""
        if self.pixels is None:
            raise BadInput(
                f"'{self.name}' is a {self.kind.value}, not a picture: {what} comes from a picture."
            )
        return self.pixels

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind.value, "file": self.source, **self.answers}


def load_reference(name: str, path: Path) -> Reference:
    """A reference from a file, checked before any tool runs: its name, that it can be
    read, what it is (by its ending) and its size. A clear error otherwise."""
    if not NAME.match(name):
        raise BadInput(
            f"'{shown(name)}' cannot name a reference: use a word of letters, digits, - or _ "
            "starting with a letter (e.g. swatch, note, sky1)."
        )
    size = regular_file(path, f"reference '{name}'").st_size
    ending = path.suffix.lower()
    if ending in TEXTS:
        if size > MAX_TEXT_BYTES:
            raise BadInput(
                f"The note '{name}' is {size // 1000} KB; a reference note holds a few words "
                f"(at most {MAX_TEXT_BYTES // 1000} KB)."
            )
        try:
            words = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise BadInput(f"The note '{name}' ({path.name}) is not UTF-8 text.") from exc
        return Reference(name, ReferenceKind.TEXT, path.name, text=words)
    if ending in SOUNDS:
        if size > MAX_AUDIO_BYTES:
            raise BadInput(
                f"The voice memo '{name}' is {size / 2**20:.0f} MB; the transcription API takes "
                "25 MB at most: trim it to the words that matter."
            )
        return Reference(name, ReferenceKind.AUDIO, path.name, sound=path.read_bytes())
    if ending in PICTURES:
        return Reference(name, ReferenceKind.PICTURE, path.name, pixels=_picture(name, path))
    raise BadInput(
        f"The reference '{name}' ({path.name}) is not a picture ({', '.join(sorted(PICTURES))}), "
        f"a note ({', '.join(sorted(TEXTS))}) or a voice memo ({', '.join(sorted(SOUNDS))})."
    )


def _picture(name: str, path: Path) -> np.ndarray:
    """The picture's RGB at 8 bits (a 16-bit one scaled, not clipped), its size checked
    from its header before it is decoded."""
    from PIL import Image, UnidentifiedImageError

    from layerpath.engine.files.io import rgba8

    too_big = (
        f"The reference picture '{name}' is {{}}; a reference needs no more than "
        f"{MAX_PICTURE_PIXELS // 1_000_000} MP. Scale it down first."
    )
    try:
        with Image.open(path) as opened:
            if opened.width * opened.height > MAX_PICTURE_PIXELS:
                raise BadInput(too_big.format(f"{opened.width}x{opened.height}"))
            return rgba8(opened)[..., :3].copy()
    except Image.DecompressionBombError as exc:  # (Pillow's own limit, from the header)
        raise BadInput(too_big.format("larger still")) from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise BadInput(f"The reference picture '{name}' ({path.name}) cannot be read.") from exc


def parse_refs(given: list[str] | None, base: Path | None = None) -> dict[str, Reference]:
    """`NAME=FILE` arguments as references, by name (each name once)."""
    found: dict[str, Reference] = {}
    for item in given or []:
        name, sep, file = item.partition("=")
        if not sep or not file:
            raise BadInput(f"--ref wants NAME=FILE (e.g. --ref swatch=paint.jpg), not '{item}'.")
        if name.lower() in (n.lower() for n in found):
            raise BadInput(f"Two references are named '{name}'; give each its own name.")
        path = Path(file) if base is None else base / file
        found[name] = load_reference(name, path)
    return found


# --- stage 1: what a reference says ----------------------------------------------------


def swatch_colour(pixels: np.ndarray) -> tuple[int, int, int]:
    """A picture's colour: the median of the group of like colours that fills most of
    its middle (a paint chip photographed on a table is the chip's colour, not the
    table's; a plain swatch is its one colour)."""
    small = _small(pixels, 160)
    lab = cv2.cvtColor(small, cv2.COLOR_RGB2LAB).reshape(-1, 3).astype(np.float32)
    count = min(4, len(lab))
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    cv2.setRNGSeed(0)
    _, found, _ = cv2.kmeans(
        lab, count, np.zeros((len(lab), 1), np.int32), criteria, 3, cv2.KMEANS_PP_CENTERS
    )
    h, w = small.shape[:2]
    labels = np.asarray(found).reshape(h, w)
    middle = labels[h // 4 : h - h // 4 or h, w // 4 : w - w // 4 or w].ravel()
    chosen = small[labels == np.bincount(middle, minlength=count).argmax()]
    r, g, b = (int(v) for v in np.median(chosen, axis=0))
    return r, g, b


def colour_stats(pixels: np.ndarray) -> dict[str, Any]:
    """A picture's colours as a colour transfer needs them: the mean and spread of its
    CIELAB L*, a* and b* ('mean', 'std'), and under 'parts' its sky's and its ground's
    apart where it has a sky (so a golden ground under a blue sky is not averaged into
    a neutral grey)."""
    from layerpath.kit.colours import lab_exact

    small = _small(pixels, 512)
    lab = lab_exact(small.astype(np.float64) / 255.0)
    stats: dict[str, Any] = _stats(lab.reshape(-1, 3))
    sky = reference_sky(small)
    if sky is not None:  # (a colour match pairs skies with skies, ground with ground)
        stats["parts"] = {"sky": _stats(lab[sky]), "ground": _stats(lab[~sky])}
    return stats


#: the horizontal bands a reference sky's colours are kept for, top to bottom
SKY_ROWS = 32


def sky_stats(sky: np.ndarray) -> dict[str, Any]:
    """A reference sky's colours (the mean and spread of its CIELAB, as colour_stats gives
    them, without parts: it is all sky), with the CIELAB mean of each of SKY_ROWS
    bands from its top to its horizon ('rows') and its height over its width ('aspect'):
    a sky laid into a wide, low sky keeps only its lower part (tools/sky.py's covering),
    so a dusk's violet top and orange glow are not both expected there."""
    from layerpath.kit.colours import lab_exact

    small = _small(sky, 512)
    lab = lab_exact(small.astype(np.float64) / 255.0)
    stats: dict[str, Any] = _stats(lab.reshape(-1, 3))  # (a sky has no sky and ground parts)
    bands = np.array_split(np.arange(lab.shape[0]), min(SKY_ROWS, lab.shape[0]))
    stats["rows"] = [
        [round(float(v), 3) for v in lab[rows].reshape(-1, 3).mean(axis=0)] for rows in bands
    ]
    stats["aspect"] = round(sky.shape[0] / sky.shape[1], 4)
    return stats


def _stats(lab: np.ndarray) -> dict[str, list[float]]:
    return {
        "mean": [round(float(v), 3) for v in lab.mean(axis=0)],
        "std": [round(float(v), 3) for v in lab.std(axis=0)],
    }


def reference_sky(small: np.ndarray) -> np.ndarray | None:
    """A reference picture's sky (bool, its size), when it has one that fills a share
    of it and is sure (kit/sky.py's sure_sky); None otherwise."""
    from layerpath.kit.sky import SKY_SHARE, find_sky, sure_sky

    sky = find_sky(small)
    if not SKY_SHARE[0] <= float(sky.mean()) <= SKY_SHARE[1]:
        return None
    return sky if sure_sky(small, sky) else None


def _small(pixels: np.ndarray, side: int) -> np.ndarray:
    h, w = pixels.shape[:2]
    scale = min(1.0, side / max(h, w))
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return np.ascontiguousarray(cv2.resize(pixels[..., :3], size, interpolation=cv2.INTER_AREA))


def note_words(reference: Reference, transcribe: Transcriber | None) -> str:
    """A note's words on one line: a text file's, the text OCR reads in a picture (top to
    bottom, left to right) or a voice memo's, transcribed."""
    if reference.kind == ReferenceKind.TEXT:
        words = reference.text or ""
    elif reference.kind == ReferenceKind.AUDIO:
        if transcribe is None:
            raise BadInput(
                f"The voice memo '{reference.name}' needs an endpoint that transcribes "
                "speech (Settings ▸ LLM base URL); or give its words as a text file."
            )
        assert reference.sound is not None
        try:
            words = transcribe(reference.sound, reference.source)
        except LayerpathError:
            raise
        except Exception as exc:  # the endpoint's own error, whatever its type
            raise BadInput(
                f"The voice memo '{reference.name}' could not be transcribed ({shown(str(exc), 160)}); "
                "check the endpoint in Settings, or give its words as a text file."
            ) from exc
    else:
        from layerpath.tools.registry import service

        assert reference.pixels is not None
        rgba = np.dstack([reference.pixels, np.full(reference.pixels.shape[:2], 255, np.uint8)])
        lines = sorted(service("read_text")(rgba, 0.5), key=lambda t: (t.box.y0 // 20, t.box.x0))
        words = " ".join(t.text for t in lines)
    words = " ".join(words.split())
    if not words:
        raise BadInput(f"The reference '{reference.name}' holds no words to use.")
    if len(words) > MAX_WORDS_CHARS:
        raise BadInput(
            f"The reference '{reference.name}' holds {len(words)} characters; a sign or a "
            f"caption takes a few words (at most {MAX_WORDS_CHARS}). Give a shorter note."
        )
    return words


# --- stage 2: the instruction grounded in the references -------------------------------


#: a picture's colour asked for: the part (group 'it') that becomes the colour
_COLOUR_OF = (
    r"(?P<it>(?:the\s+|a\s+)?(?:(?:same|exact)\s+)?(?:colou?r|shade|hue|paint|tint)\s+"
    r"(?:of|from|in|on|as)\s+(?:the\s+|my\s+|that\s+)?{name})\b",
    r"\b(?P<it>{name}'s\s+(?:colou?r|shade|hue|paint))\b",
    # 'recolor the car to swatch', 'paint the door to match chip'
    r"\b(?:recolou?r|colou?r|paint|dye|tint)\b[^,;.]*?\bto\s+(?P<it>(?:match\s+)?(?:the\s+)?{name})\b(?!')",
)
#: a reference's words asked for ('the name in note' -> "'@note'")
_WORDS_OF = (
    r"(?:the\s+)?(?:name|text|words?|title|number|message|line|caption|label|sentence|"
    r"phrase|address|price)\s+(?:written\s+)?(?:in|from|on|of)\s+(?:the\s+|my\s+|that\s+)?"
    r"{name}\b",
    r"\bwhat\s+(?:the\s+)?{name}\s+says\b",
    r"\b{name}'s\s+(?:text|words|name|message)\b",
)
_SKY_OF = (
    r"(?:the\s+)?(?:one|sky)\s+(?:in|from|of)\s+(?:the\s+|my\s+|that\s+)?{name}\b",
    r"\b{name}'s\s+sky\b",
)


def _placeholder(name: str) -> str:
    return f"@{name}"


def rewrite(instruction: str, references: Mapping[str, Reference]) -> str:
    """The instruction as the planner reads it: a picture's colour phrase as the colour
    itself, a phrase for a reference's words or its sky as its placeholder ('the name
    in note' -> "'@note'"), and any other mention of it as the placeholder ('match the
    colours of @ref')."""
    text = instruction
    for name, reference in references.items():
        word = re.escape(name)
        for pattern in _COLOUR_OF:
            found = re.search(pattern.format(name=word), text, re.I)
            if found is None:
                continue
            text = text[: found.start("it")] + reference.colour() + text[found.end("it") :]
        for pattern in _WORDS_OF:
            text = re.sub(pattern.format(name=word), f"'{_placeholder(name)}'", text, flags=re.I)
        for pattern in _SKY_OF:
            text = re.sub(pattern.format(name=word), f"'{_placeholder(name)}'", text, flags=re.I)
        text = re.sub(rf"(?<![@\w]){word}\b(?!')", _placeholder(name), text, flags=re.I)
    return text


def _hex(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


def ground(
    subtasks: tuple[Subtask, ...],
    references: Mapping[str, Reference],
    transcribe: Transcriber | None = None,
) -> tuple[Subtask, ...]:
    """Each subtask with its placeholders' values: a text's words from the note, a sky
    or a colour transfer from the picture (its statistics for the check); the reference
    it came from in params['ref']. A placeholder no reference answers, or one asked of
    what it cannot give, is a clear error before any tool runs."""
    return tuple(_grounded(s, references, transcribe) for s in subtasks)


def _named(value: str | None, references: Mapping[str, Reference]) -> Reference | None:
    """The reference a subtask's value names ('@note', "'@note'"), if it names one."""
    if not value:
        return None
    found = re.fullmatch(r"'?@([A-Za-z][\w-]*)'?", value.strip())
    if found is None:
        return None
    name = found.group(1)
    for known, reference in references.items():
        if known.lower() == name.lower():
            return reference
    return None  # ('@name' that names no reference: words, a handle on a sign)


def _required(name: str, references: Mapping[str, Reference]) -> Reference:
    found = _named(f"@{name}", references)
    if found is None:
        raise BadInput(
            f"There is no reference named '{shown(name)}': add it with --ref {shown(name)}=FILE "
            "(or in the panel's References)."
        )
    return found


def _grounded(
    subtask: Subtask, references: Mapping[str, Reference], transcribe: Transcriber | None
) -> Subtask:
    params = dict(subtask.params)
    if params.get("op") == "match":
        matched = _required(str(params.get("ref", "")), references)
        params["ref"] = matched.name
        params["ref_stats"] = matched.colours()
        return replace(subtask, params=params)
    for name, given in references.items():  # a colour the rewrite took from a picture
        if subtask.to and subtask.to.lower() == given.answers.get("colour"):
            return replace(subtask, params={**params, "ref": name})
    reference = _named(subtask.to, references)
    if reference is None:
        return subtask
    params["ref"] = reference.name
    if kind_spec(subtask.kind).to_is_words:
        return replace(subtask, to=reference.words(transcribe), params=params)
    if subtask.kind == K.OBJECT_RECOLORATION:
        return replace(subtask, to=reference.colour(), params=params)
    if subtask.kind in (K.CHANGING_SCENERY, K.OBJECT_REPLACEMENT) and (subtask.target or "") in (
        "sky",
        "the sky",
    ):
        params["ref_sky"] = reference.sky()
        return Subtask(K.CHANGING_SCENERY, "sky", _placeholder(reference.name), params, subtask.id)
    raise BadInput(
        f"{subtask.kind.label} cannot take anything from the reference '{reference.name}': "
        "references give a colour ('recolor the wall to the colour of swatch'), words ('replace "
        "the sign text with the name in note'), colours ('match the colours of ref') or a sky "
        "('replace the sky with the one in ref')."
    )


def as_told(subtask: Subtask) -> Subtask:
    """The subtask as the user told it: a value taken from a reference (a note's words,
    which OCR may have read in a picture) back to the reference's placeholder. What is
    said to a model (a critic, a planner) is this, never what was read from an image."""
    ref = subtask.params.get("ref")
    if ref and subtask.to is not None:
        return replace(subtask, to=_placeholder(str(ref)))
    return subtask


def traced_words(subtask: Subtask) -> dict[str, Any]:
    """The subtask as the trace store keeps it: a value taken from a reference (a note's
    words, which OCR may have read) kept as the reference's placeholder, the user's own
    words as they are."""
    return as_told(subtask).to_json()

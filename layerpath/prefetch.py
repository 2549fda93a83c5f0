"""A photo decoded while the program starts.

`layerpath edit photo.jpg ...` spends its first 0.4 s importing the engine, on one core
and holding the interpreter; decoding a 24 MP JPEG takes 0.12 s more and lets go of it.
So the command line starts the decode on a thread of its own before the engine is
imported (`start`), and the reader takes what it made (`taken`) when the file has not
changed since: the same bytes, decoded the same way (`decode_jpeg`, the reader's own).
Anything unusual (not an RGB JPEG, too large, unreadable) is left to the reader, which
reads the file as always and says what is wrong with it.
"""

from __future__ import annotations

import io
import os
import stat
import threading
from pathlib import Path
from typing import Any

#: pictures larger than this are not decoded ahead (the reader checks its own limit
#: from the header before it decodes anything)
LARGEST = 200_000_000

_started: dict[Path, tuple[threading.Thread, dict[str, Any]]] = {}


def decode_jpeg(data: bytes) -> Any:
    """A whole JPEG's pixels as OpenCV decodes them (BGR, not turned by its EXIF
    orientation), or None when the file does not end as a JPEG does (cut short: OpenCV
    would fill the rest in grey) or OpenCV cannot decode it."""
    import cv2
    import numpy as np

    if not data.endswith(b"\xff\xd9"):
        return None
    try:
        flags = cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION
        return cv2.imdecode(np.frombuffer(data, np.uint8), flags)
    except cv2.error:
        return None


def _identity(status: os.stat_result) -> tuple[int, int, int]:
    return status.st_mtime_ns, status.st_size, status.st_ino


def start(path: str | os.PathLike[str]) -> None:
    """Begin decoding the JPEG at `path` on a thread of its own (nothing for any other
    file)."""
    where = Path(path).absolute()
    try:
        status = where.stat()
    except OSError:
        return
    if not stat.S_ISREG(status.st_mode) or where.suffix.lower() not in (".jpg", ".jpeg"):
        return
    made: dict[str, Any] = {}
    thread = threading.Thread(target=_decode, args=(where, made), daemon=True)
    _started[where] = (thread, made)
    thread.start()


def _decode(where: Path, made: dict[str, Any]) -> None:
    try:
        before = _identity(where.stat())
        data = where.read_bytes()
        from PIL import Image

        with Image.open(io.BytesIO(data)) as header:  # (the header only)
            if header.format != "JPEG" or header.mode != "RGB":
                return
            if header.width * header.height > LARGEST:
                return
        pixels = decode_jpeg(data)
        if pixels is not None:
            made.update(identity=before, data=data, pixels=pixels)
    except Exception:  # noqa: BLE001 (the reader reads it again and says what is wrong)
        return


def taken(path: str | os.PathLike[str]) -> tuple[bytes, Any] | None:
    """The bytes and decoded pixels (decode_jpeg's) of the file at `path` when `start`
    decoded it and the file is unchanged since; else None."""
    where = Path(path).absolute()
    entry = _started.pop(where, None)
    if entry is None:
        return None
    thread, made = entry
    thread.join()
    try:
        now = _identity(where.stat())
    except OSError:
        return None
    if "pixels" not in made or made["identity"] != now or len(made["data"]) != now[1]:
        return None
    return made["data"], made["pixels"]

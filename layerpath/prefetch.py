"""A photo decoded while the program starts.

`layerpath edit photo.jpg ...` spends its first 0.4 s importing the engine, on one core
and holding the interpreter; decoding a 24 MP JPEG takes 0.12 s more and lets go of it.
So the command line starts the decode on a thread of its own before the engine is
imported (`start`), and the reader takes what it made (`taken`) when the file has not
changed since: the same bytes, decoded the same way (`decode_jpeg`, the reader's own).
Anything unusual (not a colour JPEG, over 100 MP, unreadable) is left to the reader,
which reads the file as always and says what is wrong with it; the reader uses the
pixels only where Pillow, reading the header, sees an RGB JPEG of that size.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import Any

#: pictures larger than this are not decoded ahead (the reader checks the user's own
#: limit from the header before it decodes anything): a camera's largest
LARGEST = 100_000_000
#: JPEG's start-of-frame markers (baseline, extended, progressive, lossless; not DHT,
#: JPG or DAC, which share the range)
_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}

_started: dict[Path, tuple[threading.Thread, dict[str, Any]]] = {}


def decode_jpeg(data: bytes) -> Any:
    """A whole JPEG's pixels as RGBA (libjpeg-turbo writing each pixel's four bytes
    straight into the array: no three-channel copy to widen; the same decode as
    Pillow's, slow DCT and smooth upsampling, not turned by its EXIF orientation), or
    None when the file does not end as a JPEG does (cut short) or libjpeg-turbo finds
    anything wrong with it (the reader then lets Pillow read it, or say why not)."""
    try:
        import simplejpeg
    except ImportError:  # (a copy installed without it: Pillow reads the file)
        return None
    if not data.endswith(b"\xff\xd9"):
        return None
    try:
        return simplejpeg.decode_jpeg(data, colorspace="RGBA", fastdct=False, fastupsample=False)
    except ValueError:
        return None


def jpeg_frame(data: bytes) -> tuple[int, int, int] | None:
    """A JPEG's (width, height, colour components) from its frame header, read without
    Pillow (whose size check is process-wide state a thread must not touch); None for
    anything else."""
    if not data.startswith(b"\xff\xd8"):
        return None
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # (fill bytes before a marker)
            at += 1
            continue
        length = int.from_bytes(data[at + 2 : at + 4], "big")
        if marker in _FRAMES:
            if at + 10 > len(data):
                return None
            height = int.from_bytes(data[at + 5 : at + 7], "big")
            width = int.from_bytes(data[at + 7 : at + 9], "big")
            return width, height, data[at + 9]
        at += 2 + length
    return None


def _identity(status: os.stat_result) -> tuple[int, ...]:
    """What tells a file from one written since: an edit changes its change time."""
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns


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
        frame = jpeg_frame(data)
        if frame is None or frame[2] != 3 or frame[0] * frame[1] > LARGEST:
            return  # (not a colour JPEG a camera makes: the reader reads it itself)
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
    if "pixels" not in made or made["identity"] != now or len(made["data"]) != now[2]:
        return None
    return made["data"], made["pixels"]

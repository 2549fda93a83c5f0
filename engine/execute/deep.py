"""16-bit pictures: read at their depth, composited and written back at it.

The tools work on 8-bit RGBA (the engine's snapshot); a photographer's 16-bit PNG or
TIFF keeps its 16 bits wherever no step changed it. A layer read at 16 bits holds both:
`pixels` (8-bit, for the tools and the screen) and `deep` (16-bit RGBA, what the file
holds). Flattened outputs are composited at 16 bits, step layers scaled up from 8 bits
(x 257, exact for 0 and 255), so the photo's own gradations survive outside the edits.

Pillow reads 16-bit RGB PNGs as 8-bit and writes none: OpenCV reads and writes 16-bit
PNG, tifffile 16-bit TIFF.
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any, BinaryIO

import cv2
import numpy as np

#: bytes 24 of a PNG: the IHDR's bit depth
_PNG_DEPTH = 24


def is_deep_png(data: bytes) -> bool:
    return data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > _PNG_DEPTH and data[_PNG_DEPTH] == 16


def rgba16(array: np.ndarray, bgr: bool = False) -> np.ndarray | None:
    """Grey, grey+alpha, RGB or RGBA 16-bit pixels as RGBA uint16 (None when they are
    not 16-bit)."""
    if array.dtype != np.uint16:
        return None
    if array.ndim == 2:
        array = array[..., None]
    channels = array.shape[2]
    if channels in (1, 2):  # grey (and alpha)
        grey = np.repeat(array[..., :1], 3, axis=2)
        alpha = array[..., 1:2] if channels == 2 else np.full_like(array[..., :1], 65535)
        return np.ascontiguousarray(np.concatenate([grey, alpha], axis=2))
    colour = array[..., :3][..., ::-1] if bgr else array[..., :3]
    alpha = array[..., 3:4] if channels >= 4 else np.full_like(array[..., :1], 65535)
    return np.ascontiguousarray(np.concatenate([colour, alpha], axis=2))


def _tiff_bits(picture: Any) -> int:
    """The largest bits per sample a TIFF's header gives (0 when it gives none)."""
    bits = getattr(picture, "tag_v2", {}).get(258, 0)  # BitsPerSample
    return max(bits) if isinstance(bits, tuple) and bits else int(bits or 0)


def read_deep(data: bytes, picture: Any) -> np.ndarray | None:
    """The file's pixels as RGBA uint16 when it is a 16-bit PNG or TIFF, else None;
    `picture`, the file opened by Pillow (not decoded), tells which from its header, so
    an 8-bit file is never decoded here."""
    if picture.format == "PNG" and is_deep_png(data):
        decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
        return None if decoded is None else rgba16(decoded, bgr=decoded.ndim == 3)
    if picture.format == "TIFF" and _tiff_bits(picture) == 16:
        import tifffile

        try:
            array = tifffile.imread(io.BytesIO(data))
        except (ValueError, OSError, tifffile.TiffFileError):
            return None
        return rgba16(array) if array.ndim in (2, 3) else None
    return None


def eight_bit(deep: np.ndarray) -> np.ndarray:
    """RGBA uint16 to RGBA uint8 (rounded)."""
    return ((deep.astype(np.uint32) + 128) // 257).astype(np.uint8)


def sixteen_bit(pixels: np.ndarray) -> np.ndarray:
    """RGBA uint8 to RGBA uint16 (x 257: 255 becomes 65535)."""
    return pixels.astype(np.uint16) * np.uint16(257)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def encode_png16(
    deep: np.ndarray,
    icc_profile: bytes | None = None,
    exif: bytes | None = None,
    xmp: bytes | None = None,
) -> bytes:
    """RGBA (or RGB) uint16 as a 16-bit PNG, with the colour profile (iCCP), EXIF (eXIf)
    and XMP (iTXt) chunks after its header where given."""
    order = [2, 1, 0, 3] if deep.shape[2] == 4 else [2, 1, 0]
    ok, encoded = cv2.imencode(".png", np.ascontiguousarray(deep[..., order]))
    if not ok:
        raise ValueError("OpenCV could not encode the 16-bit picture")
    data = encoded.tobytes()
    extra = b""
    if icc_profile:
        extra += _chunk(b"iCCP", b"ICC profile\0\0" + zlib.compress(icc_profile))
    if exif:
        extra += _chunk(b"eXIf", exif.removeprefix(b"Exif\0\0"))
    if xmp:  # keyword, no compression, no language, no translated keyword, the packet
        extra += _chunk(b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0" + xmp)
    header_end = 8 + 8 + 13 + 4  # signature, IHDR length+type, IHDR body, CRC
    return data[:header_end] + extra + data[header_end:]


def write_tiff16(
    file: BinaryIO,
    deep: np.ndarray,
    icc_profile: bytes | None = None,
    exif: bytes | None = None,
    xmp: bytes | None = None,
) -> None:
    """RGBA (or RGB) uint16 as a 16-bit TIFF (deflate), with its colour profile, the
    EXIF tags a TIFF holds in its own directory (make, model, date, artist, copyright,
    description) and its XMP packet."""
    import tifffile

    extratags: list[tuple[int, str, int, Any, bool]] = []
    description = None
    if exif:
        from PIL import Image

        found = Image.Exif()
        found.load(exif.removeprefix(b"Exif\0\0"))
        for tag in TIFF_OWN_TAGS:
            value = tiff_ascii(found.get(tag))
            if value:
                extratags.append((tag, "s", 0, value, True))
        description = tiff_ascii(found.get(IMAGE_DESCRIPTION))
    if xmp:
        extratags.append((700, "B", len(xmp), xmp, True))
    buffer = io.BytesIO()  # (tifffile takes a file's name for its path; ours is a number)
    tifffile.imwrite(
        buffer,
        deep,
        photometric="rgb",
        extrasamples=["unassalpha"] if deep.shape[2] == 4 else None,
        compression="zlib",
        compressionargs={"level": 1},  # (level 6 takes twice as long for 4 % smaller)
        iccprofile=icc_profile,
        extratags=extratags,
        description=description,
        metadata=None,  # (no tifffile shape of its own in the description)
    )
    file.write(buffer.getvalue())


def tiff_ascii(value: object) -> str | None:
    """A TIFF string tag's text in the 7-bit ASCII the format holds ('© 2026 Zoë' ->
    '(c) 2026 Zoe'); None for none."""
    if not isinstance(value, str) or not value.strip():
        return None
    import unicodedata

    try:  # UTF-8 in an ASCII tag (as Lightroom writes it), read as Latin-1: mended
        value = value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        pass
    text = value.replace("©", "(c)").replace("®", "(r)")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return text.strip() or None


#: the EXIF tags that are a TIFF's own (its first directory), written as tags: Make,
#: Model, DateTime, Artist, Copyright; and ImageDescription, written as its description
TIFF_OWN_TAGS = (0x010F, 0x0110, 0x0132, 0x013B, 0x8298)
IMAGE_DESCRIPTION = 0x010E


def over(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """src over dst, straight alpha, uint8 or uint16 (any shape ending in 4 channels),
    in float32 over these pixels only."""
    top = 65535.0 if src.dtype == np.uint16 else 255.0
    s = src.astype(np.float32) / top
    d = dst.astype(np.float32) / top
    sa, da = s[..., 3:4], d[..., 3:4]
    alpha = sa + da * (1 - sa)
    colour = np.where(
        alpha > 0, (s[..., :3] * sa + d[..., :3] * da * (1 - sa)) / np.maximum(alpha, 1e-9), 0
    )
    blended = np.concatenate([colour, alpha], axis=-1) * top
    return np.clip(np.rint(blended), 0, top).astype(src.dtype)

"""A photo decoded while the program starts (layerpath/prefetch.py): the reader takes
the very pixels it would decode itself, and never those of a file changed since."""

from __future__ import annotations

import os
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from layerpath import prefetch
from layerpath.engine.files.io import read_layered


def _photo(path: Path, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    smooth = cv2.resize(rng.integers(0, 256, (20, 30, 3), dtype=np.uint8), (300, 200))
    Image.fromarray(smooth).save(path, quality=92)
    with Image.open(path) as written:
        return np.asarray(written.convert("RGBA"))


def test_the_reader_takes_the_decode_made_ahead(tmp_path: Path) -> None:
    path = tmp_path / "photo.jpg"
    want = _photo(path, 1)
    prefetch.start(path)
    early = prefetch.taken(path)
    assert early is not None and early[0] == path.read_bytes()
    assert np.array_equal(early[1], want)  # RGBA, decoded straight into four channels
    prefetch.start(path)
    assert np.array_equal(read_layered(path).layers[0].pixels, want)
    assert prefetch.taken(path) is None  # (taken once)


def test_a_file_changed_after_the_decode_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "photo.jpg"
    _photo(path, 1)
    prefetch.start(path)
    prefetch._started[path.absolute()][0].join()  # decoded the first photo
    changed = _photo(path, 2)
    os.utime(path, ns=(1, 1))  # (written within the same clock tick: the time differs too)
    assert prefetch.taken(path) is None
    prefetch.start(path)
    prefetch._started[path.absolute()][0].join()  # decoded the second photo
    third = _photo(path, 3)
    os.utime(path, ns=(2, 2))
    pixels = read_layered(path).layers[0].pixels
    assert np.array_equal(pixels, third) and not np.array_equal(pixels, changed)


def test_only_an_rgb_jpeg_is_decoded_ahead(tmp_path: Path) -> None:
    grey = tmp_path / "grey.jpg"
    Image.new("L", (40, 30), 90).save(grey)
    png = tmp_path / "photo.png"
    Image.new("RGB", (40, 30), (9, 9, 9)).save(png)
    for path in (grey, png, tmp_path / "missing.jpg", tmp_path):
        prefetch.start(path)
        assert prefetch.taken(path) is None
    cut = tmp_path / "cut.jpg"
    _photo(cut, 3)
    cut.write_bytes(cut.read_bytes()[:-500])
    prefetch.start(cut)
    assert prefetch.taken(cut) is None  # (the reader refuses it, as always)


def test_a_rewrite_that_keeps_the_size_and_the_time_is_read_again(tmp_path: Path) -> None:
    """A file rewritten in place with its size and its modification time kept (cp -p,
    touch -r) is another file: its change time tells it apart."""
    path = tmp_path / "photo.jpg"
    _photo(path, 1)
    kept = path.stat()
    prefetch.start(path)
    prefetch._started[path.absolute()][0].join()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x55  # (in the scan: the same length, other pixels)
    time.sleep(0.05)  # (past the file system clock's tick: a person's edit comes later)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(kept.st_atime_ns, kept.st_mtime_ns))
    assert path.stat().st_size == kept.st_size and path.stat().st_mtime_ns == kept.st_mtime_ns
    assert prefetch.taken(path) is None


def test_a_jpegs_frame_is_read_from_its_header() -> None:
    """Size and colour components from the frame header, as Pillow reads them."""
    import io

    for mode, components in (("RGB", 3), ("L", 1), ("CMYK", 4)):
        for progressive in (False, True):
            made = io.BytesIO()
            Image.new(mode, (123, 45)).save(made, "JPEG", progressive=progressive)
            assert prefetch.jpeg_frame(made.getvalue()) == (123, 45, components)
    assert prefetch.jpeg_frame(b"\x89PNG\r\n\x1a\n" + bytes(40)) is None
    assert prefetch.jpeg_frame(b"\xff\xd8\xff\xe0\x00") is None  # (cut short)


def test_without_simplejpeg_pillow_reads_the_photo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy installed without simplejpeg (a host's own packages) still reads a JPEG, as
    Pillow decodes it."""
    import sys

    path = tmp_path / "photo.jpg"
    want = _photo(path, 4)
    monkeypatch.setitem(sys.modules, "simplejpeg", None)  # (import fails)
    assert prefetch.decode_jpeg(path.read_bytes()) is None
    assert np.array_equal(read_layered(path).layers[0].pixels, want)

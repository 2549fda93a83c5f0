"""Memory for camera-sized pictures: blocks freed are reused, not mapped afresh.

glibc's malloc maps every block over 32 MB (a 24 MP RGBA picture is 96 MB) with a fresh
`mmap` and unmaps it when freed, so each picture a step makes is paid for again in page
faults the first time it is written (with transparent huge pages, in zeroing and
compacting them): 0.25 s or more per 24 MP copy, 0.8 s of a 2.8 s "make it warmer".
Raising the mapping and trimming thresholds keeps freed blocks in the heap for the next
picture. Only processes of layerpath's own call it (the command line, batch workers):
a host's allocator is not ours to tune.
"""

from __future__ import annotations

import ctypes
import sys

#: mallopt's parameters (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: blocks up to this size come from the heap, and freed memory up to it stays there
KEPT_BYTES = 1 << 30


def reuse_freed_memory() -> bool:
    """Ask glibc to serve and keep big blocks in the heap; whether it took the advice
    (False off Linux or with another C library: nothing changes)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False  # (musl has no mallopt)
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, KEPT_BYTES)) and bool(
        mallopt(M_TRIM_THRESHOLD, KEPT_BYTES)
    )

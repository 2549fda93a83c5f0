"""Memory for camera-sized pictures: blocks freed are reused, not mapped afresh.

glibc's malloc maps every block over 32 MB (a 24 MP RGBA picture is 96 MB) with a fresh
`mmap` and unmaps it when freed, so each picture a step makes is paid for again in page
faults the first time it is written (with transparent huge pages, in zeroing and
compacting them): 0.25 s or more per 24 MP copy, 0.8 s of a 2.8 s "make it warmer".
Raising the mapping and trimming thresholds keeps freed blocks in the heap for the next
picture. The threads that make a picture's bands share the one heap (glibc gives each
thread its own arena, whose heaps of 64 MB are mapped afresh and trimmed as they empty: a
24 MP golden hour's bands faulted in 790 MB there, 275 MB in one heap; its tools took
0.96 s, not 1.09). Only processes of layerpath's own call it (the command line, batch workers):
a host's allocator is not ours to tune.

numpy asks the kernel for transparent huge pages on every big array it allocates
(madvise). Over a heap whose blocks are reused that made a run's kernel time swing from
0.2 s to 0.9 s between runs of the same edit (a 24 MP black and white: 1.17-1.83 s,
against 1.27-1.32 s without the advice; 2-core x86_64, 2026-11-28), so the same call
turns it off: a run costs the same each time.
"""

from __future__ import annotations

import ctypes
import sys

#: mallopt's parameters (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8
#: blocks up to this size come from the heap, and freed memory up to it stays there
KEPT_BYTES = 1 << 30


def reuse_freed_memory() -> bool:
    """Ask glibc to serve and keep big blocks in the heap, every thread's from one;
    whether it took the advice (False off Linux or with another C library: nothing
    changes). Called before the process starts a thread: a thread that has a heap of
    its own already keeps it."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False  # (musl has no mallopt)
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    taken = (
        bool(mallopt(M_MMAP_THRESHOLD, KEPT_BYTES))
        and bool(mallopt(M_TRIM_THRESHOLD, KEPT_BYTES))
        and bool(mallopt(M_ARENA_MAX, 1))
    )
    if taken:
        _no_huge_page_advice()
    return taken


def _no_huge_page_advice() -> None:
    """numpy's madvise(MADV_HUGEPAGE) on big arrays, off (as NUMPY_MADVISE_HUGEPAGE=0)."""
    try:
        from numpy._core import multiarray
    except ImportError:  # (numpy 1.x)
        from numpy.core import multiarray  # type: ignore[no-redef]
    advise = getattr(multiarray, "_set_madvise_hugepage", None)
    if advise is not None:
        advise(False)

"""Camera-sized pictures' memory is reused: a freed 96 MB block costs no page faults the
next time (layerpath/memory.py). Run in a process of its own, as the command line is."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import resource, sys
import numpy as np
from layerpath.memory import reuse_freed_memory

if sys.argv[1] == "reuse":
    assert reuse_freed_memory()
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
# a 24 MP step and its copy made and freed
picture = np.ones((4000, 6000, 4), np.uint8); copy = picture.copy(); del picture, copy
before = faults()
for _ in range(3):
    picture = np.ones((4000, 6000, 4), np.uint8); copy = picture.copy(); del picture, copy
print(faults() - before)
"""


#: the bands of a step, made on two threads (each 12 MB float copies of a million pixels)
THREADS_PROBE = """
import resource, sys, threading
import numpy as np
from layerpath.memory import reuse_freed_memory

if sys.argv[1] == "reuse":
    assert reuse_freed_memory()
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def bands():
    for _ in range(10):
        band = np.ones((1000, 1000, 3), np.float32); twice = band * 2; more = twice + band
        del band, twice, more
def step():
    threads = [threading.Thread(target=bands) for _ in range(2)]
    [thread.start() for thread in threads]; [thread.join() for thread in threads]
# the heap grown once to the most both threads can hold at once (six band arrays): how
# far the threads' steps overlap varies with the machine's load, and a step that first
# overlaps further than the one before it grows the heap, whichever way glibc is set
most = [np.ones((1000, 1000, 3), np.float32) for _ in range(6)]; del most
step()
before = faults()
for _ in range(3):
    step()
print(faults() - before)
"""


def _faults(mode: str, probe: str = PROBE) -> int:
    # counted in 4 KB pages: numpy asks for transparent huge pages on big arrays, and
    # whether the kernel has 2 MB ones free changes the count a hundredfold
    quiet = {**os.environ, "NUMPY_MADVISE_HUGEPAGE": "0"}
    done = subprocess.run(
        [sys.executable, "-c", probe, mode], capture_output=True, text=True, check=True, env=quiet
    )
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_pictures_are_reused_without_page_faults() -> None:
    pages = 3 * 2 * 4000 * 6000 * 4 // 4096  # what six fresh 96 MB blocks would fault in
    assert _faults("reuse") < pages // 50
    assert _faults("default") > pages // 2  # as glibc leaves it: every block mapped afresh


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_the_bands_threads_reuse_freed_blocks_too() -> None:
    """The threads that make a picture's bands share one heap: glibc's arenas of their
    own mapped afresh a tenth of what they freed (a 24 MP golden hour faulted in 790 MB,
    not 275)."""
    pages = 3 * 2 * 10 * 3 * 1000 * 1000 * 12 // 4096  # every band's arrays fresh
    # (CI once counted 5,867 pages here, two bands' arrays: room for that, and still a
    # twentieth of the fewest glibc's own arenas ever faulted in)
    assert _faults("reuse", THREADS_PROBE) < pages // 40
    assert _faults("default", THREADS_PROBE) > pages // 4


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_numpys_huge_page_advice_is_turned_off_with_it() -> None:
    """A run's kernel time swung threefold with numpy's madvise over a reused heap."""
    probe = (
        "from numpy._core import multiarray as m\n"
        "from layerpath.memory import reuse_freed_memory\n"
        "before = m._set_madvise_hugepage(True); m._set_madvise_hugepage(before)\n"
        "assert reuse_freed_memory()\n"
        "print(before, m._set_madvise_hugepage(True))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    assert done.stdout.split() == ["True", "False"]  # on as numpy starts, off after

"""Camera-sized pictures' memory is reused: a freed 96 MB block costs no page faults the
next time (layerpath/memory.py). Run in a process of its own, as the command line is."""

from __future__ import annotations

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
picture = np.ones((4000, 6000, 4), np.uint8); del picture  # a 24 MP step made and freed
before = faults()
for _ in range(3):
    picture = np.ones((4000, 6000, 4), np.uint8); copy = picture.copy(); del picture, copy
print(faults() - before)
"""


def _faults(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True
    )
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_pictures_are_reused_without_page_faults() -> None:
    pages = 3 * 2 * 4000 * 6000 * 4 // 4096  # what six fresh 96 MB blocks would fault in
    assert _faults("reuse") < pages // 50
    # as glibc leaves it: every block mapped afresh (fewer faults with huge pages, each
    # one zeroing 2 MB)
    assert _faults("default") > 4 * max(1, _faults("reuse"))

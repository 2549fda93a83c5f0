"""What the command line offers before anything heavy is imported (its --help and
--version answer without the engine): the search modes, a batch's output formats and
the files it writes beside them, and the trace export formats. The engine's modules take
these from here."""

from __future__ import annotations

from enum import Enum


class Mode(str, Enum):
    """How subtasks are solved: rules first then A* (FaSTA*), A* only lazy (CoSTA*),
    A* running every neighbour on expansion (CoSTA* Algorithm 1), or rules only."""

    FAST_SLOW = "fast-slow"
    SLOW = "slow"
    SLOW_EAGER = "slow-eager"
    FAST = "fast"


#: a batch's output formats and their files' suffixes
BATCH_FORMATS = {"ora": ".ora", "psd": ".psd", "tiff": ".tif", "jpg": ".jpg", "png": ".png"}
#: the contact sheet and the summary a batch writes into its output folder
SHEET = "contact-sheet.html"
SUMMARY = "batch.csv"
#: the trace export formats: a trajectory step, a chat example, a preference pair per line
TRACE_FORMATS = ("jsonl", "sft", "dpo")

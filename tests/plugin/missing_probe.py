"""kritarunner -s missing_probe OUT.txt: loads the layerpath plugin package the way Krita
does and writes the message its docker shows when layerpath is not importable."""

from __future__ import annotations

from pathlib import Path


def __main__(args: list[str]) -> None:
    import layerpath_krita

    Path(args[0]).write_text(layerpath_krita.problem or "", encoding="utf-8")

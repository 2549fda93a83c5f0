"""layerpath's GIMP 3 plug-in (layerpath_gimp/layerpath_gimp.py) and its installer:
`layerpath gimp install` copies it where GIMP 3 looks for plug-ins (a folder of the
plug-in's own name, the file executable)."""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

NAME = "layerpath_gimp"
SOURCE = Path(__file__).resolve().parent / NAME / f"{NAME}.py"


def default_plug_ins() -> Path:
    """GIMP 3's plug-ins folder in the user's profile, on this platform."""
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming")) / "GIMP"
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support" / "GIMP"
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config")) / "GIMP"
    return base / "3.0" / "plug-ins"


def install(plug_ins: Path | None = None) -> Path:
    """The plug-in copied into `plug_ins` (GIMP 3's own, by default); where it went."""
    folder = (plug_ins or default_plug_ins()) / NAME
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / SOURCE.name
    shutil.copy2(SOURCE, target)
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    # the command that runs this layerpath, as this Python runs it (GIMP started from a
    # desktop menu may not see a shell's PATH or a virtual environment)
    command = [sys.executable, "-m", "layerpath"]
    quoted = subprocess.list2cmdline(command) if os.name == "nt" else shlex.join(command)
    (folder / "layerpath-command.txt").write_text(quoted + "\n", encoding="utf-8")
    return target

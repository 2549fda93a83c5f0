"""Installs layerpath's Python packages for the Python Krita embeds, from inside Krita
(stdlib only): the layerpath wheel the plugin carries (wheels/, put there by `layerpath
krita install` or `package`), and the packages it needs from the package index, built
for this Python's version and platform, into the folder env.py looks in. pip is the one
this Python has, else the pip wheel the plugin carries (pip runs from its wheel). Krita's
own executable is Krita, not Python: the Python beside its standard library runs pip.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

WHEELS = Path(__file__).resolve().parent / "wheels"
#: the oldest Python layerpath runs on
OLDEST = (3, 10)
#: no console window for each process started from Krita on Windows
_QUIET: dict[str, Any] = (
    {"creationflags": subprocess.CREATE_NO_WINDOW} if sys.platform == "win32" else {}  # type: ignore[attr-defined]
)
#: pip run from its wheel by path (an embedded Python on Windows reads no PYTHONPATH)
_FROM_WHEEL = (
    "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'pip'; "
    "runpy.run_module('pip', run_name='__main__', alter_sys=True)"
)


def carried(name: str) -> Path | None:
    """The newest wheel of `name` the plugin carries, or None."""
    found = sorted(WHEELS.glob(f"{name}-*.whl"))
    return found[-1] if found else None


#: what a Python must share with Krita's for the packages pip picks to load in Krita:
#: version, platform (architecture included), ABI flags and word size; read by each
#: candidate Python and by Krita's own, in the same words
_PARTS = (
    "sys.version_info[0], sys.version_info[1], sysconfig.get_platform(), "
    "getattr(sys, 'abiflags', ''), sys.maxsize > 2**32"
)
_KIND = f"import sys, sysconfig; print({_PARTS})"


def _kind() -> str:
    return " ".join(str(part) for part in eval(_PARTS, {"sys": sys, "sysconfig": sysconfig}))


@functools.lru_cache(maxsize=1)
def interpreter() -> str | None:
    """A Python of Krita's own kind (_KIND) to run pip with: this process's own when it
    is one, else the one beside its standard library, else one on PATH; None when none
    is. (Asked once: each candidate is a process.)"""
    if Path(sys.executable).name.lower().startswith("python"):
        return sys.executable
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    base = Path(sys.base_prefix)
    names = [f"python{version}", "python3", "python"]
    places = [base / "bin" / n for n in names] + [base / f"{n}.exe" for n in names]
    places += [base / "python" / "python.exe"]
    found = [str(p) for p in places if p.is_file()]
    found += [w for w in (shutil.which(n) for n in names) if w]
    for python in dict.fromkeys(found):
        if _kind_of(python) == _kind():
            return python
    return None


def _kind_of(python: str) -> str | None:
    try:
        said = subprocess.run(
            [python, "-c", _KIND], capture_output=True, text=True, timeout=30, **_QUIET
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return said.stdout.strip() if said.returncode == 0 else None


def problem() -> str | None:
    """Why the packages cannot be installed from here (None: they can), in words."""
    if sys.version_info[:2] < OLDEST:
        return (
            f"Krita's Python is {sys.version_info[0]}.{sys.version_info[1]}; layerpath needs "
            f"{OLDEST[0]}.{OLDEST[1]} or later: a newer Krita (5.2 or later) brings one."
        )
    if carried("layerpath") is None:
        return (
            "This copy of the plugin carries no layerpath package to install; install the "
            "plugin with `layerpath krita install` or from the zip `layerpath krita package` "
            "makes."
        )
    if interpreter() is None:
        version = f"{sys.version_info[0]}.{sys.version_info[1]}"
        return (
            f"No Python {version} of Krita's own kind was found beside Krita to run the "
            f"installer with; with a Python {version} where layerpath is installed, run: "
            "layerpath krita env"
        )
    return None


def install(target: Path, say: Callable[[str], None], extra: Sequence[str] = ()) -> None:
    """pip-install the carried layerpath wheel and its packages into `target`, each line
    pip prints told to `say`; RuntimeError (its last lines) when pip fails."""
    wheel = carried("layerpath")
    python = interpreter()
    if wheel is None or python is None:
        raise RuntimeError(problem() or "nothing to install")
    has_pip = (
        subprocess.run([python, "-c", "import pip"], capture_output=True, **_QUIET).returncode == 0
    )
    pip = carried("pip")
    if has_pip:
        runner = [python, "-m", "pip"]
    elif pip is not None:  # (pip runs from its own wheel)
        runner = [python, "-c", _FROM_WHEEL, str(pip)]
    else:
        raise RuntimeError("No pip was found for Krita's Python, and the plugin carries none.")
    target.mkdir(parents=True, exist_ok=True)
    command = [
        *runner, "install", "--target", str(target), "--upgrade", "--no-input",
        "--disable-pip-version-check", "--progress-bar", "off", str(wheel), *extra,
    ]  # fmt: skip
    say(f"installing with {python} into {target}")
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **_QUIET
    )
    assert process.stdout is not None
    last: list[str] = []
    for line in process.stdout:
        line = line.rstrip()
        if line:
            say(line)
            last = (last + [line])[-6:]
    if process.wait() != 0:
        raise RuntimeError("pip could not install them:\n" + "\n".join(last))

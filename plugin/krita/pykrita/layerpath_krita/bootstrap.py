"""Installs layerpath's Python packages for the Python Krita embeds, from inside Krita
(stdlib only): the layerpath wheel the plugin carries (wheels/, put there by `layerpath
krita install` or `package`), and the packages it needs from the package index, built
for this Python's version and platform, into the folder env.py looks in. pip is the one
this Python has, else the pip wheel the plugin carries (pip runs from its wheel). Krita's
own executable is Krita, not Python: the Python beside its standard library runs pip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

WHEELS = Path(__file__).resolve().parent / "wheels"


def carried(name: str) -> Path | None:
    """The newest wheel of `name` the plugin carries, or None."""
    found = sorted(WHEELS.glob(f"{name}-*.whl"))
    return found[-1] if found else None


def interpreter() -> str | None:
    """A Python of this version to run pip with: this process's own when it is one,
    else the one beside its standard library, else one on PATH; None when none is."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if Path(sys.executable).name.lower().startswith("python"):
        return sys.executable
    base = Path(sys.base_prefix)
    names = [f"python{version}", "python3", "python"]
    places = [base / "bin" / n for n in names] + [base / f"{n}.exe" for n in names]
    places += [base / "python" / "python.exe"]
    for place in places:
        if place.is_file() and _version_of(str(place)) == version:
            return str(place)
    for name in names:
        found = shutil.which(name)
        if found and _version_of(found) == version:
            return found
    return None


def _version_of(python: str) -> str | None:
    try:
        said = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return said.stdout.strip() if said.returncode == 0 else None


def problem() -> str | None:
    """Why the packages cannot be installed from here (None: they can), in words."""
    if carried("layerpath") is None:
        return (
            "This copy of the plugin carries no layerpath package to install; install the "
            "plugin with `layerpath krita install` or from the zip `layerpath krita package` "
            "makes."
        )
    if interpreter() is None:
        version = f"{sys.version_info[0]}.{sys.version_info[1]}"
        return (
            f"No Python {version} was found beside Krita to run the installer with; with a "
            f"Python {version} where layerpath is installed, run: layerpath krita env"
        )
    return None


def install(target: Path, say: Callable[[str], None], extra: Sequence[str] = ()) -> None:
    """pip-install the carried layerpath wheel and its packages into `target`, each line
    pip prints told to `say`; RuntimeError (its last lines) when pip fails."""
    wheel = carried("layerpath")
    python = interpreter()
    if wheel is None or python is None:
        raise RuntimeError(problem() or "nothing to install")
    environment = dict(os.environ)
    has_pip = subprocess.run([python, "-c", "import pip"], capture_output=True).returncode == 0
    pip = carried("pip")
    if not has_pip:
        if pip is None:
            raise RuntimeError("No pip was found for Krita's Python, and the plugin carries none.")
        environment["PYTHONPATH"] = str(pip)  # (pip runs from its own wheel)
    target.mkdir(parents=True, exist_ok=True)
    command = [
        python, "-m", "pip", "install", "--target", str(target), "--upgrade", "--no-input",
        "--disable-pip-version-check", "--progress-bar", "off", str(wheel), *extra,
    ]  # fmt: skip
    say(f"installing with {python} into {target}")
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment
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

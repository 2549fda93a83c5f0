"""Finds layerpath's Python environment for Krita's embedded Python (stdlib only).

The environment installer (`layerpath krita env`) puts layerpath and its packages in
one folder; LAYERPATH_KRITA_ENV overrides where that folder is. Its packages go first
on sys.path so they win over anything else Krita's Python sees.
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path


def default_env() -> Path:
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))
    return base / "layerpath" / f"krita-env-py{sys.version_info[0]}{sys.version_info[1]}"


def env_dir() -> Path:
    return Path(os.environ.get("LAYERPATH_KRITA_ENV") or default_env())


def activate() -> str | None:
    """Make layerpath importable; None when it is, else what to do about it."""
    env = env_dir()
    if env.is_dir() and str(env) not in sys.path:
        before = list(sys.path)
        site.addsitedir(str(env))
        added = [p for p in sys.path if p not in before]
        sys.path[:] = added + before
    try:
        import layerpath.plugin.krita.docker  # noqa: F401
    except ImportError as exc:
        version = f"{sys.version_info[0]}.{sys.version_info[1]}"
        return (
            f"layerpath's Python packages are not installed for Krita (missing: {exc.name}).\n"
            f"With a Python {version} where layerpath is installed, run:\n"
            f"    layerpath krita env\n"
            f"(or from a layerpath checkout: python3 installers/krita.py env),\n"
            f"then restart Krita. (Looked in {env}.)"
        )
    return None

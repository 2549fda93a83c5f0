"""kritarunner -s bootstrap_probe OUT.json: in Krita's own Python, with layerpath not
installed for it, the plugin's docker offers the install, and its bootstrap installs the
layerpath wheel the plugin carries (--no-deps) into the folder env.py looks in; writes
what each said."""

from __future__ import annotations

import json
from pathlib import Path


def __main__(args: list[str]) -> None:
    import layerpath_krita
    from layerpath_krita import bootstrap, env

    said: dict[str, object] = {
        "problem": layerpath_krita.problem,
        "cannot": bootstrap.problem(),
        "python": bootstrap.interpreter(),
    }
    docker = layerpath_krita.MissingDocker()
    said["button"] = [docker.button.text(), docker.button.isEnabled()]
    lines: list[str] = []
    try:
        bootstrap.install(env.env_dir(), lines.append, ["--no-deps"])
    except RuntimeError as exc:
        said["failure"] = str(exc)
    said["lines"] = lines
    Path(args[0]).write_text(json.dumps(said), encoding="utf-8")

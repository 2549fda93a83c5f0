"""kritarunner -s layerpath_selftest IN.png "instruction" OUT.kra [NAME=MASK.png ...]

Opens IN in Krita, adds the named masks as selection masks, runs the instruction through
the docker's own code path (panel, worker thread, KritaDocument), saves OUT.kra and a
summary OUT.kra.json.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def _env() -> ModuleType:
    """layerpath_krita/env.py, loaded by path so the plugin itself is not registered."""
    path = Path(__file__).with_name("layerpath_krita") / "env.py"
    spec = importlib.util.spec_from_file_location("layerpath_krita_env", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def __main__(args: list[str]) -> int:
    problem = _env().activate()
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    from layerpath.plugin.krita.selftest import run

    return run(list(args))

"""`layerpath models list|download|verify|remove`: the model weights on this machine."""

from __future__ import annotations

import argparse
import json
from typing import Any

from layerpath.errors import BadInput
from layerpath.settings import load_settings
from layerpath.tools.models import ModelManager, ModelStatus, human_size


class TqdmProgress:
    """A tqdm bar per file of one model's download."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.bars: dict[str, Any] = {}

    def __enter__(self) -> TqdmProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        for bar in self.bars.values():
            bar.close()

    def __call__(self, path: str, done: int, total: int | None) -> None:
        from tqdm import tqdm

        bar = self.bars.get(path)
        if bar is None:
            bar = self.bars[path] = tqdm(
                total=total, unit="B", unit_scale=True, desc=f"{self.model}/{path}"
            )
        bar.update(done - bar.n)


def manager(args: argparse.Namespace) -> ModelManager:
    settings = load_settings()
    built = ModelManager.from_settings(settings)
    built.offline = built.offline or bool(getattr(args, "offline", False))
    return built


def _row(status: ModelStatus) -> dict[str, Any]:
    spec = status.spec
    return {
        "name": spec.name,
        "description": spec.description,
        "licence": spec.licence,
        "size": spec.size,
        "state": status.state.value,
        "bytes_on_disk": status.bytes_on_disk,
        "folder": str(status.folder),
        "source": spec.hub_repo or "",
        "tools": list(spec.tools),
    }


def _names(models: ModelManager, args: argparse.Namespace) -> list[str]:
    if args.all:
        return sorted(models.catalogue)
    if not args.names:
        raise BadInput(f"Name a model (or --all): {', '.join(sorted(models.catalogue))}.")
    for name in args.names:
        models.spec(name)  # unknown names fail before anything is done
    return list(args.names)


def cmd_models(args: argparse.Namespace) -> int:
    models = manager(args)
    if args.models_command == "list":
        rows = [_row(s) for s in models.statuses()]
        if args.json:
            print(json.dumps({"cache": str(models.cache), "models": rows}, indent=2))
            return 0
        print(f"model folder: {models.cache}{'  (offline)' if models.offline else ''}")
        name_w = max((len(row["name"]) for row in rows), default=0)
        licence_w = max((len(row["licence"]) for row in rows), default=0)
        for row in rows:
            tools = ", ".join(row["tools"]) or "no tool yet"
            print(
                f"{row['name']:<{name_w}}  {human_size(row['size']):>9}  "
                f"{row['licence']:<{licence_w}}  {row['state']:<8} {tools}"
            )
        return 0
    names = _names(models, args)
    if args.models_command == "download":
        for name in names:
            with TqdmProgress(name) as progress:
                status = models.download(name, progress)
            print(f"{name}: {status.state.value} in {status.folder}")
        return 0
    if args.models_command == "verify":
        failed = 0
        for name in names:
            problems = models.verify(name)
            print(f"{name}: {'ok' if not problems else '; '.join(problems)}")
            failed += bool(problems)
        return 1 if failed else 0
    for name in names:  # remove
        print(f"{name}: removed, {human_size(models.remove(name))} freed")
    return 0

"""Install layerpath into Krita (stdlib only; run with any Python 3.10+).

layerpath krita install [--resource-dir DIR] [--kritarc FILE]
    copy the plugin into DIR/pykrita (+ its shortcuts file into DIR/actions) and
    enable it in kritarc
layerpath krita package [--out layerpath-krita.zip]
    the zip for Tools ▸ Scripts ▸ Import Python Plugin from File
layerpath krita env [--target DIR] [--python PYTHON] [--torch none|cpu|cuda]
    put layerpath and its packages where the plugin looks for them; PYTHON must be the
    same Python version as Krita's (Krita 5.x: 3.10 or 3.11, see Help ▸ About)

From a checkout without layerpath installed, `python3 installers/krita.py ...` runs the
same commands.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PLUGIN = Path(__file__).resolve().parent
PYKRITA = PLUGIN / "pykrita"
#: the checkout this file is in, if it is in one (else an installed package)
ROOT = PLUGIN.parents[1]
CHECKOUT = (ROOT / "pyproject.toml").exists()
NAME = "layerpath_krita"
TORCH = {"cpu": ["torch==2.13.0"], "cuda": ["torch"]}


def default_resource_dir() -> Path:
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming")) / "krita"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "krita"
    return Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "krita"


def default_kritarc() -> Path:
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / "kritarc"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Preferences" / "kritarc"
    return Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config")) / "kritarc"


def enable_in_kritarc(kritarc: Path) -> None:
    """Set [python] enable_layerpath_krita=true, keeping every other line as it is."""
    lines = kritarc.read_text(encoding="utf-8").splitlines() if kritarc.exists() else []
    key = f"enable_{NAME}=true"
    lines = [line for line in lines if not line.startswith(f"enable_{NAME}=")]
    if "[python]" in lines:
        lines.insert(lines.index("[python]") + 1, key)
    else:
        lines += ["", "[python]", key] if lines else ["[python]", key]
    kritarc.parent.mkdir(parents=True, exist_ok=True)
    kritarc.write_text("\n".join(lines) + "\n", encoding="utf-8")


def install(resource_dir: Path, kritarc: Path) -> None:
    pykrita = resource_dir / "pykrita"
    pykrita.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(pykrita / NAME, ignore_errors=True)
    shutil.copytree(PYKRITA / NAME, pykrita / NAME, ignore=shutil.ignore_patterns("__pycache__"))
    for file in (f"{NAME}.desktop", "layerpath_selftest.py"):
        shutil.copy2(PYKRITA / file, pykrita / file)
    (resource_dir / "actions").mkdir(exist_ok=True)
    shutil.copy2(PLUGIN / "actions" / f"{NAME}.action", resource_dir / "actions" / f"{NAME}.action")
    enable_in_kritarc(kritarc)
    print(f"installed the layerpath plugin into {pykrita} and enabled it in {kritarc}")


def package(out: Path) -> None:
    """The zip Krita's importer takes: the .desktop file, the module's folder with an
    entry of its own (the importer finds a plugin by its folder's entry), its manual,
    and the shortcuts file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(PYKRITA / f"{NAME}.desktop", f"{NAME}.desktop")
        archive.write(PYKRITA / NAME, f"{NAME}/")
        files = [f for f in sorted((PYKRITA / NAME).rglob("*")) if f.suffix in (".py", ".html")]
        for file in files:
            archive.write(file, f"{NAME}/{file.relative_to(PYKRITA / NAME)}")
        archive.write(PLUGIN / "actions" / f"{NAME}.action", f"{NAME}.action")
    print(f"wrote {out}: import it with Tools ▸ Scripts ▸ Import Python Plugin from File")


def _default_env() -> Path:
    spec = importlib.util.spec_from_file_location("layerpath_krita_env", PYKRITA / NAME / "env.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return Path(module.default_env())


def environment(target: Path | None, python: str | None, torch: str) -> None:
    """pip-install layerpath (no Qt: Krita brings its own) and its packages into one folder."""
    interpreter = python or sys.executable
    version = subprocess.run(
        [interpreter, "-c", "import sys; print(f'{sys.version_info[0]}{sys.version_info[1]}')"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    target = target or _default_env().with_name(f"krita-env-py{version}")
    pip = [sys.executable, "-m", "pip"] + (["--python", interpreter] if python else [])
    with tempfile.TemporaryDirectory() as wheels:
        if CHECKOUT:  # this checkout, as a wheel
            subprocess.run([*pip, "wheel", "--no-deps", "-q", "-w", wheels, str(ROOT)], check=True)
            wheel = str(next(Path(wheels).glob("layerpath-*.whl")))
        else:  # an installed layerpath: the same version from the package index
            from importlib.metadata import version as installed

            wheel = f"layerpath=={installed('layerpath')}"
        subprocess.run(
            [
                *pip,
                "install",
                "-q",
                "--upgrade",
                "--target",
                str(target),
                wheel,
                *TORCH.get(torch, []),
            ],
            check=True,
        )
    print(f"installed layerpath for Python {version[0]}.{version[1:]} into {target}; restart Krita")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="layerpath krita", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    inst = sub.add_parser(
        "install", help="copy the plugin into Krita's resource folder and enable it"
    )
    inst.add_argument("--resource-dir", type=Path, default=default_resource_dir())
    inst.add_argument("--kritarc", type=Path, default=None)
    pack = sub.add_parser("package", help="build the plugin zip")
    pack.add_argument(
        "--out",
        type=Path,
        default=(ROOT / "dist" if CHECKOUT else Path.cwd()) / "layerpath-krita.zip",
    )
    env = sub.add_parser("env", help="install layerpath's packages for Krita's Python")
    env.add_argument("--target", type=Path, default=None)
    env.add_argument(
        "--python", default=None, help="a Python of Krita's version (default: this one)"
    )
    env.add_argument("--torch", choices=["none", "cpu", "cuda"], default="none")
    args = parser.parse_args(argv)
    if args.command == "install":
        install(args.resource_dir, args.kritarc or default_kritarc())
    elif args.command == "package":
        package(args.out)
    else:
        environment(args.target, args.python, args.torch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

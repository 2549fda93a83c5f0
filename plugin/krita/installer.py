"""Install layerpath into Krita (stdlib only; run with any Python 3.10+).

layerpath krita install [--resource-dir DIR] [--kritarc FILE] [--no-wheels]
    copy the plugin into DIR/pykrita (+ its shortcuts file into DIR/actions) and
    enable it in kritarc; it carries layerpath's wheel and pip's, with which its docker
    installs layerpath's packages for Krita's own Python from inside Krita
layerpath krita package [--out layerpath-krita.zip] [--no-wheels]
    the zip for Tools ▸ Scripts ▸ Import Python Plugin from File (the wheels too)
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
import sysconfig
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


def install(resource_dir: Path, kritarc: Path, wheels: bool = True) -> None:
    with tempfile.TemporaryDirectory() as made:
        # the wheels first (what the plugin installs for Krita's own Python from inside
        # Krita): their failure leaves the plugin that is there as it is
        carried = carry_wheels(Path(made)) if wheels else []
        pykrita = resource_dir / "pykrita"
        pykrita.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(pykrita / NAME, ignore_errors=True)
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(PYKRITA / NAME, pykrita / NAME, ignore=ignore)
        if carried:
            (pykrita / NAME / "wheels").mkdir(exist_ok=True)
            for wheel in carried:
                shutil.copy2(wheel, pykrita / NAME / "wheels" / wheel.name)
    for file in (f"{NAME}.desktop", "layerpath_selftest.py"):
        shutil.copy2(PYKRITA / file, pykrita / file)
    (resource_dir / "actions").mkdir(exist_ok=True)
    shutil.copy2(PLUGIN / "actions" / f"{NAME}.action", resource_dir / "actions" / f"{NAME}.action")
    enable_in_kritarc(kritarc)
    print(f"installed the layerpath plugin into {pykrita} and enabled it in {kritarc}")


def package(out: Path, wheels: bool = True) -> None:
    """The zip Krita's importer takes: the .desktop file, the module's folder with an
    entry of its own (the importer finds a plugin by its folder's entry), its manual,
    and the shortcuts file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with (
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive,
        tempfile.TemporaryDirectory() as made,
    ):
        archive.write(PYKRITA / f"{NAME}.desktop", f"{NAME}.desktop")
        archive.write(PYKRITA / NAME, f"{NAME}/")
        files = [f for f in sorted((PYKRITA / NAME).rglob("*")) if f.suffix in (".py", ".html")]
        for file in files:
            archive.write(file, f"{NAME}/{file.relative_to(PYKRITA / NAME)}")
        for wheel in carry_wheels(Path(made)) if wheels else []:
            archive.write(wheel, f"{NAME}/wheels/{wheel.name}")
        archive.write(PLUGIN / "actions" / f"{NAME}.action", f"{NAME}.action")
    print(f"wrote {out}: import it with Tools ▸ Scripts ▸ Import Python Plugin from File")


def _default_env() -> Path:
    spec = importlib.util.spec_from_file_location("layerpath_krita_env", PYKRITA / NAME / "env.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return Path(module.default_env())


def carry_wheels(folder: Path) -> list[Path]:
    """The wheels the plugin carries, written into `folder`: layerpath's (this checkout
    built, or the installed files repacked) and pip's (the one Python's ensurepip ships,
    else the installed pip repacked: a Python without pip runs it from its wheel). What
    cannot be made is said and left out (the docker then says the command instead): []
    without layerpath's."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if CHECKOUT:
            subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(folder),
                 str(ROOT)],
                check=True, capture_output=True,
            )  # fmt: skip
            made = [next(folder.glob("layerpath-*.whl"))]
        else:
            made = [wheel_of_installed(folder)]
    except (OSError, subprocess.CalledProcessError, StopIteration, SystemExit) as exc:
        print(
            f"warning: no layerpath wheel for the plugin to carry ({exc}); from inside Krita "
            "it will say to run `layerpath krita env` instead",
            file=sys.stderr,
        )
        return []
    pip = _pip_wheel(folder)
    if pip is None:
        print(
            "warning: no pip wheel for the plugin to carry (this Python has neither ensurepip "
            "nor pip); a Krita whose Python has no pip will say to run `layerpath krita env`",
            file=sys.stderr,
        )
    return made + ([pip] if pip is not None else [])


def _pip_wheel(folder: Path) -> Path | None:
    """pip's wheel: the one ensurepip ships with this Python (pip's own build), else
    the installed pip repacked; None when neither is here."""
    bundled = Path(sysconfig.get_paths()["stdlib"]) / "ensurepip" / "_bundled"
    found = sorted(bundled.glob("pip-*.whl")) if bundled.is_dir() else []
    if found:
        return Path(shutil.copy2(found[-1], folder / found[-1].name))
    try:
        return wheel_of_installed(folder, "pip")
    except Exception:  # (importlib's PackageNotFoundError: no pip installed either)
        return None


def wheel_of_installed(folder: Path, name: str = "layerpath") -> Path:
    """A wheel of the installed distribution `name` (layerpath: the one where this file
    is; pip: this Python's), its files as its record lists them, compiled files and the
    scripts pip makes left out, written into `folder`: what pip installs for another
    Python, with no package index asked for layerpath itself (its dependencies come from
    the index as usual)."""
    import base64
    import hashlib
    from importlib.metadata import distribution, distributions

    if name == "layerpath":
        site = PLUGIN.parents[2]  # (the folder the installed package lies in)
        found = [d for d in distributions(path=[str(site)]) if d.metadata["Name"] == name]
    else:
        found = [distribution(name)]
        site = Path(str(found[0].locate_file("")))
    if not found:
        raise SystemExit(f"error: no installed {name} in {site}; pip install {name} first")
    dist = found[0]
    info = f"{dist.metadata['Name']}-{dist.version}.dist-info"
    out = folder / f"{dist.metadata['Name']}-{dist.version}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as wheel:
        for entry in dist.files or []:
            name = entry.as_posix()
            own = name.startswith(f"{info}/") and entry.name in _NOT_IN_A_WHEEL
            if name.startswith("..") or "__pycache__" in name or name.endswith(".pyc") or own:
                continue
            data = (site / name).read_bytes()
            wheel.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{name},sha256={digest.decode()},{len(data)}")
        record.append(f"{info}/RECORD,,")
        wheel.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return out


#: what pip writes into an installed copy's record folder that a wheel does not hold
_NOT_IN_A_WHEEL = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


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
        else:  # an installed layerpath: a wheel of the installed files themselves
            wheel = str(wheel_of_installed(Path(wheels)))
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
    inst.add_argument(
        "--no-wheels",
        action="store_true",
        help="carry no wheels (the plugin then cannot install its packages from inside Krita)",
    )
    pack = sub.add_parser("package", help="build the plugin zip")
    pack.add_argument("--no-wheels", action="store_true", help="carry no wheels")
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
        install(args.resource_dir, args.kritarc or default_kritarc(), not args.no_wheels)
    elif args.command == "package":
        package(args.out, not args.no_wheels)
    else:
        environment(args.target, args.python, args.torch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""layerpath in GIMP 3: Filters ▸ layerpath ▸ Edit in words… sends the picture and the
selection (what 'this' means, and a rough region around what the words name) to the
`layerpath` command, and brings back the run's group of step layers, one layer per tool
step, above the image's own layers.

GIMP 3 runs this file with its own Python (GObject Introspection); layerpath itself runs
as its command: the one `layerpath gimp install` wrote beside this file, else
LAYERPATH_COMMAND, else `layerpath` on PATH. Install
with `layerpath gimp install`. Written against GIMP 3.0's libgimp API; no GIMP 3 was
available to run it where it was built (Debian 12 ships GIMP 2.10): the part that runs
layerpath (edit_files) is tested with the real command, the GIMP calls are not.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROCEDURE = "plug-in-layerpath-edit"
#: the command `layerpath gimp install` found, beside this file (GIMP started from a
#: desktop menu may not see the PATH a shell sets)
COMMAND_FILE = Path(__file__).resolve().parent / "layerpath-command.txt"


def command() -> list[str]:
    """How to run layerpath: LAYERPATH_COMMAND, else the command install wrote beside
    this file, else `layerpath` on PATH."""
    given = os.environ.get("LAYERPATH_COMMAND")
    if not given and COMMAND_FILE.exists():  # (what `layerpath gimp install` wrote)
        given = COMMAND_FILE.read_text(encoding="utf-8").strip()
    if given:
        return shlex.split(given, posix=os.name != "nt")
    found = shutil.which("layerpath")
    if found is None:
        raise RuntimeError(
            "The layerpath command was not found; install layerpath (pip install layerpath) "
            "or set LAYERPATH_COMMAND to it."
        )
    return [found]


def edit_files(
    picture: Path, selection: Path | None, instruction: str, folder: Path
) -> tuple[Path, dict]:
    """Run the instruction on `picture` (a PNG), with `selection` (a grey PNG: white is
    selected) as the selection; the ORA written (the picture and the run's group of step
    layers) and the run's report. RuntimeError with layerpath's own words
    when it could not run at all (a refused input, a missing command)."""
    out, report = folder / "layerpath-result.ora", folder / "run.json"
    asked = [*command(), "-q", "edit", str(picture), instruction, "-o", str(out)]
    asked += ["--report", str(report)]
    if selection is not None:  # (what 'this' means, and a rough region around a named thing)
        asked += ["--selection", str(selection)]
    done = subprocess.run(asked, capture_output=True, text=True)
    if done.returncode not in (0, 1) or not out.exists():
        said = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(said[-1] if said else f"layerpath stopped ({done.returncode})")
    return out, json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}


def _plug_in() -> None:  # pragma: no cover (GIMP 3 only)
    import gi

    gi.require_version("Gimp", "3.0")
    gi.require_version("GimpUi", "3.0")
    from gi.repository import Gimp, GimpUi, Gio, GLib, GObject

    class LayerpathPlugIn(Gimp.PlugIn):
        def do_query_procedures(self):  # noqa: ANN202
            return [PROCEDURE]

        def do_set_i18n(self, name):  # noqa: ANN001, ANN202
            return False

        def do_create_procedure(self, name):  # noqa: ANN001, ANN202
            procedure = Gimp.ImageProcedure.new(self, name, Gimp.PDBProcType.PLUGIN, self.run, None)
            procedure.set_image_types("RGB*, GRAY*")
            procedure.set_sensitivity_mask(
                Gimp.ProcedureSensitivityMask.DRAWABLE
                | Gimp.ProcedureSensitivityMask.DRAWABLES
                | Gimp.ProcedureSensitivityMask.NO_DRAWABLES
            )  # (the whole picture goes, whichever layers are picked)
            procedure.set_menu_label("Edit in words…")
            procedure.add_menu_path("<Image>/Filters/layerpath")
            procedure.set_documentation(
                "Multi-step edits in words, every tool step as its own layer",
                "Type what to do ('remove this, make it warmer'); the selection is 'this'.",
                name,
            )
            procedure.set_attribution("layerpath", "layerpath", "2026")
            procedure.add_string_argument(
                "instruction", "Instruction", "What to do, in words", "",
                GObject.ParamFlags.READWRITE,
            )  # fmt: skip
            return procedure

        def run(self, procedure, run_mode, image, drawables, config, data):  # noqa: ANN001, ANN202, PLR0913
            if run_mode == Gimp.RunMode.INTERACTIVE:
                GimpUi.init("layerpath")
                dialog = GimpUi.ProcedureDialog.new(procedure, config, "layerpath")
                dialog.fill(None)
                if not dialog.run():
                    dialog.destroy()
                    return procedure.new_return_values(Gimp.PDBStatusType.CANCEL, GLib.Error())
                dialog.destroy()
            instruction = config.get_property("instruction")
            with tempfile.TemporaryDirectory(prefix="layerpath-gimp-") as temporary:
                folder = Path(temporary)
                picture = folder / "picture.png"
                copy = image.duplicate()  # (exported flattened, the user's image untouched)
                Gimp.file_save(
                    Gimp.RunMode.NONINTERACTIVE, copy, Gio.File.new_for_path(str(picture)), None
                )
                copy.delete()
                selection = None
                if not Gimp.Selection.is_empty(image):
                    selection = folder / "selection.png"
                    mask = Gimp.Image.new(
                        image.get_width(), image.get_height(), Gimp.ImageBaseType.GRAY
                    )
                    layer = Gimp.Layer.new_from_drawable(image.get_selection(), mask)
                    mask.insert_layer(layer, None, 0)
                    Gimp.file_save(
                        Gimp.RunMode.NONINTERACTIVE,
                        mask,
                        Gio.File.new_for_path(str(selection)),
                        None,
                    )
                    mask.delete()
                Gimp.progress_init("layerpath: " + instruction)
                try:
                    result, report = edit_files(picture, selection, instruction, folder)
                except RuntimeError as exc:
                    error = GLib.Error.new_literal(GLib.quark_from_string("layerpath"), str(exc), 0)
                    return procedure.new_return_values(Gimp.PDBStatusType.EXECUTION_ERROR, error)
                made = Gimp.file_load(
                    Gimp.RunMode.NONINTERACTIVE, Gio.File.new_for_path(str(result))
                )
                image.undo_group_start()
                group = made.get_layers()[0]  # (the run's group: the top layer of the result)
                image.insert_layer(Gimp.Layer.new_from_drawable(group, image), None, 0)
                image.undo_group_end()
                made.delete()
            failed = [s for s in report.get("subtasks", []) if s.get("solved_by") == "failed"]
            if failed:
                Gimp.message(
                    f"layerpath: {len(failed)} step(s) could not be vouched for; their best try is kept hidden."
                )
            Gimp.displays_flush()
            return procedure.new_return_values(Gimp.PDBStatusType.SUCCESS, GLib.Error())

    Gimp.main(LayerpathPlugIn.__gtype__, sys.argv)


if __name__ == "__main__":  # pragma: no cover (GIMP runs it)
    _plug_in()

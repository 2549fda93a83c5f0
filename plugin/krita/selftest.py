"""The self-test behind `kritarunner -s layerpath_selftest`: one real run inside Krita
through the same code path as the docker."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from krita import Krita, Selection

from layerpath.engine.files.io import read_mask
from layerpath.gui.panel import Panel
from layerpath.gui.qt import Qt, QtCore
from layerpath.plugin.krita.document import KritaDocument, walk
from layerpath.settings import load_settings


def add_selection_mask(document: Any, name: str, mask: np.ndarray) -> None:
    """A named Krita selection mask on the top layer, as a user would draw it."""
    h, w = mask.shape
    selection = Selection()
    selection.setPixelData(QtCore.QByteArray((mask.astype(np.uint8) * 255).tobytes()), 0, 0, w, h)
    node = document.createSelectionMask(name)
    node.setSelection(selection)
    document.rootNode().childNodes()[-1].addChildNode(node, None)


def run(args: list[str]) -> int:
    if len(args) < 3:
        print(
            "usage: kritarunner -s layerpath_selftest IN.png|IN.kra INSTRUCTION|action:NAME|reopen OUT.kra "
            "[NAME=MASK.png ...] [ref:NAME=FILE ...] [hide:N ...] [hidenode:N ...]",
            file=sys.stderr,
        )
        return 2
    source, instruction, target, *mask_args = args
    app = Krita.instance()
    document = app.openDocument(str(Path(source).resolve()))
    document.setBatchmode(True)
    size = (document.width(), document.height())
    references = [a.removeprefix("ref:") for a in mask_args if a.startswith("ref:")]
    # hide:N: after the run, the N-th step unticked in the docker's step list;
    # hidenode:N: its layer hidden through Krita's own API, as Krita's Layers docker does
    # movenode:N: the N-th step's layer moved down one place, as in Krita's Layers docker
    hidden = [a for a in mask_args if a.startswith(("hide:", "hidenode:", "movenode:"))]
    acts = ("ref:", "hide:", "hidenode:", "movenode:")
    for item in (a for a in mask_args if not a.startswith(acts)):
        name, _, path = item.partition("=")
        add_selection_mask(document, name, read_mask(Path(path), size, name))

    krita_document = KritaDocument(document)
    panel = Panel(krita_document, settings=load_settings())  # as the docker makes it
    if instruction == "reopen":  # a .kra layerpath saved: its runs listed again, as the docker does
        return _reopen(panel, krita_document, document, target, hidden)
    for item in references:  # ref:NAME=FILE: added in the docker's References
        name, _, path = item.partition("=")
        panel.references.add(Path(path), name)
    panel.learn_from()  # as the docker does
    results: list[object] = []
    loop = QtCore.QEventLoop()

    def finished(result: object) -> None:
        results.append(result)
        loop.quit()

    if instruction.startswith("batch:"):
        return _batch(panel, json.loads(instruction.removeprefix("batch:")), target)
    panel.run_finished.connect(finished)
    if instruction.startswith("action:"):  # a saved action, from the Actions tab
        found = panel.actions.findItems(
            instruction.removeprefix("action:").strip(), Qt.MatchFlag.MatchExactly
        )
        if found:
            panel.actions.setCurrentItem(found[0])
            QtCore.QTimer.singleShot(0, panel.run_action_button.click)
        else:
            QtCore.QTimer.singleShot(0, lambda: finished(None))
    else:
        panel.instruction.setPlainText(instruction)
        QtCore.QTimer.singleShot(0, lambda: panel.start_run(preview=False))
    loop.exec()
    panel.controller.shutdown()

    result = results[0] if results else None
    ok = bool(result is not None and result.ok)  # type: ignore[attr-defined]
    remade = [_untick(panel, document, how) for how in hidden] if ok else []
    panel.controller.shutdown()
    document.saveAs(str(Path(target).resolve()))
    summary = {
        "ok": ok,
        "message": panel.message.text(),
        "layers": [[n.name(), n.type()] for n in walk(document.rootNode())],
        "steps": panel.steps.count(),
        "remade": remade,  # per step unticked, how many later steps were made again
    }
    Path(f"{target}.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    document.close()
    return 0 if ok else 1


def _reopen(
    panel: Panel, krita_document: KritaDocument, document: Any, target: str, hidden: list[str]
) -> int:
    """A saved .kra opened again: the docker lists its runs' steps again (as panel_for
    does), then hides the steps asked for and waits for the later ones to be made again."""
    if krita_document.reopened:
        panel.document_opened(krita_document)
    remade = [_untick(panel, document, how) for how in hidden]
    panel.controller.shutdown()
    document.saveAs(str(Path(target).resolve()))
    summary = {
        "ok": bool(krita_document.reopened),
        "steps": panel.steps.count(),
        "remade": remade,
        "layers": [[n.name(), n.type()] for n in walk(document.rootNode())],
    }
    Path(f"{target}.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    document.close()
    return 0 if summary["ok"] else 1


def _untick(panel: Panel, document: Any, how: str) -> int:
    """Hide the run's N-th step as a user does ('hide:N': untick it in the docker's step
    list; 'hidenode:N': hide its layer in Krita's Layers docker, which tells the plug-in
    nothing), and wait until the later steps it reaches are made again: how many were."""
    kind, _, number = how.partition(":")
    layer = panel.session.layers()[int(number)]
    if kind == "hide":
        item = panel.steps.item_for(layer)
        assert item is not None
        made = _after(panel.steps_remade, lambda: item.setCheckState(Qt.CheckState.Unchecked))
    elif kind == "movenode":
        name = panel.session.placed[layer].step.name
        node = next(n for n in walk(document.rootNode()) if n.name() == name)
        parent = node.parentNode()
        siblings = list(parent.childNodes())
        below = siblings[next(i for i, n in enumerate(siblings) if n.name() == name) - 1]

        def move() -> None:  # (the layer beneath it put above it: Krita adds above a node)
            below.remove()
            parent.addChildNode(below, node)

        made = _after(panel.steps_remade, move)
    else:
        name = panel.session.placed[layer].step.name
        node = next(n for n in walk(document.rootNode()) if n.name() == name)
        made = _after(panel.steps_remade, lambda: node.setVisible(False))
    return len(made.pairs) if made is not None else 0


def _after(signal: Any, action: Callable[[], object]) -> Any:
    """Do `action` from Krita's event loop and wait for `signal`: what it carried."""
    loop = QtCore.QEventLoop()
    seen: list[Any] = []

    def arrived(value: Any) -> None:
        seen.append(value)
        loop.quit()

    signal.connect(arrived)
    QtCore.QTimer.singleShot(0, action)
    loop.exec()
    signal.disconnect(arrived)
    return seen[0] if seen else None


def _batch(panel: Panel, job: dict[str, Any], target: str) -> int:
    """The panel's Batch… as a user clicks it: the dialog, a folder of photos, the
    instruction, an output folder and how many at once; Start, and wait for the end."""
    from layerpath.engine.hosts.batch import BatchReport
    from layerpath.gui.batch_dialog import BatchDialog

    panel.instruction.setPlainText(job["instruction"])
    panel.batch_button.click()
    dialog = panel.findChild(BatchDialog)
    assert dialog is not None
    dialog.add_photos([Path(job["photos"])])
    dialog.output.setText(job["out"])
    dialog.jobs.setValue(int(job.get("jobs", 1)))
    report = _after(dialog.finished_batch, dialog.start_button.click)
    ok = isinstance(report, BatchReport) and report.ok
    summary = {
        "ok": ok,
        "status": dialog.status.text(),
        "progress": [dialog.progress.value(), dialog.progress.maximum()],
        "done": report.done if isinstance(report, BatchReport) else 0,
        "results": [dialog.results.item(i).text() for i in range(dialog.results.count())],
    }
    Path(f"{target}.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0 if ok else 1

"""RunSession without Qt: the run's layers in the document, a step made again, actions,
the one trace store. Real engine, real file-backed Document, real SQLite."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from layerpath.engine import events
from layerpath.engine.files.io import GroupLayer, composite
from layerpath.engine.hosts.document import LayeredDocument
from layerpath.engine.hosts.session import RunSession
from layerpath.engine.learn.traces import user_traces
from layerpath.engine.types import RunResult, SubtaskOutcome
from layerpath.errors import BadInput
from layerpath.settings import Settings
from tests.conftest import Scene


@pytest.fixture
def document(scene: Scene, tmp_path: Path) -> LayeredDocument:
    image, masks = scene.save(tmp_path / "in")
    return LayeredDocument.open(image, masks)


def test_a_run_places_every_step_in_one_group_and_keeps_its_record(
    document: LayeredDocument,
) -> None:
    session = RunSession(document, Settings(record_traces=False))
    seen: list[object] = []
    result = session.run(
        session.request("recolor the wall to yellow and make it warmer"), seen.append
    )

    assert result.ok
    group = document.image.layers[-1]
    assert isinstance(group, GroupLayer)
    assert group.name == "recolor the wall to yellow and make it warmer"
    steps = [e for e in seen if isinstance(e, events.StepDone)]
    assert len(session.layers()) == len(group.children) == len(steps) > 0
    assert all(p.outcome is not None and p.outcome.ok for p in session.placed.values())
    assert document.runs[-1]["prompt"] == result.request.prompt  # the run's record
    assert session.last_result is result


def test_a_step_made_again_at_another_amount_replaces_its_layers(
    document: LayeredDocument,
) -> None:
    session = RunSession(document, Settings(record_traces=False))
    session.run(session.request("make it warmer"))
    (layer,) = session.layers()
    before = composite(document.image)

    with pytest.raises(BadInput, match="goes from"):
        session.with_amount(layer, 99.0)
    subtask, tools = session.with_amount(layer, 1.0)
    job = session.rerun_job(layer, subtask, tools)
    assert job is not None
    outcome = job(lambda e: session.place(e), lambda: False)
    assert isinstance(outcome, SubtaskOutcome) and outcome.ok
    removed = session.finish_rerun(outcome)

    # the step's layer holds the new step in its place (the steps above stay above);
    # the layer the new step first came in goes
    (new,) = session.layers()
    assert new == layer and removed and layer not in removed
    group = document.image.layers[-1]
    assert isinstance(group, GroupLayer) and len(group.children) == 1
    after = composite(document.image)
    blue = lambda rgba: float(rgba[..., 2].mean()) - float(rgba[..., 0].mean())  # noqa: E731
    assert blue(after) < blue(before)  # warmer than the default amount made it
    assert document.runs[-1]["made_again"] == {
        "subtask": subtask.id,
        "params": dict(subtask.params),
    }
    action = session.save_action(new, "warm it up")
    assert action.name == "warm it up" and "photo_adjust" in action.describe()


def test_a_failed_step_made_again_keeps_the_old_layers(document: LayeredDocument) -> None:
    session = RunSession(document, Settings(record_traces=False))
    session.run(session.request("recolor the wall to yellow"))
    layers = session.layers()
    first = session.placed[layers[-1]]
    assert first.outcome is not None
    subtask, tools = first.outcome.subtask, list(first.outcome.tools)
    assert session.rerun_job(layers[-1], subtask, tools) is not None  # made again...
    failed = SubtaskOutcome(subtask, "failed", (), (), 0.0, 0.0, error="no result passed")
    assert session.finish_rerun(failed) == []  # ...and not passed: nothing removed
    assert session.layers() == layers
    group = document.image.layers[-1]
    assert isinstance(group, GroupLayer) and len(group.children) == len(layers)


def test_every_front_end_shares_one_trace_store_and_the_settings_can_turn_it_off(
    document: LayeredDocument,
) -> None:
    one = RunSession(document, Settings())
    two = RunSession(document, Settings())
    assert one.traces is not None and one.traces is two.traces is user_traces(Settings())
    assert RunSession(document, Settings(record_traces=False)).traces is None
    result = one.run(one.request("make it warmer"))
    assert isinstance(result, RunResult) and one.traces.runs() == 1
    assert not np.array_equal(composite(document.image), result.request.snapshot.image)


def test_the_session_says_what_each_step_lets_the_user_change(
    document: LayeredDocument,
) -> None:
    """The controls under the step list are the session's to decide (any host shows
    them alike): a warmer photo's step has an amount, in its unit and range, set to
    what it ran with, and no region; the recolour's steps have a region whose edge can
    move, and no amount; a layer the session did not add has neither."""
    session = RunSession(document, Settings(record_traces=False))
    session.run(session.request("recolor the wall to yellow and make it warmer"))
    specs = {tool.name: tool.spec for tool in session.engine().registry}
    controls = {
        session.placed[layer].step.tool: session.step_controls(layer, specs)
        for layer in session.layers()
    }
    warmer = controls["photo_adjust"]
    assert warmer.amount is not None and warmer.edge is None
    assert warmer.amount.name.startswith("Temperature") and warmer.amount.low == -1.0
    assert warmer.amount.value == 0.35  # the amount a bare 'warmer' means
    assert controls["named_masks"].amount is None and controls["named_masks"].edge == 0
    assert session.step_controls(None, specs) == session.step_controls("no such", specs)
    assert session.step_controls(None, specs).amount is None


def test_a_shown_plan_runs_as_shown_once_and_an_edit_drops_it(
    document: LayeredDocument,
) -> None:
    """The preview waits in the session, not in a widget: confirming gives the plan as
    shown (and the tools it named, once, for the run's rows); dropping it leaves
    nothing to confirm."""
    session = RunSession(document, Settings(record_traces=False))
    prompt = "recolor the wall to yellow"
    preview = session.engine().preview(session.request(prompt))
    assert session.confirm_preview() is None
    session.show_preview(prompt, preview)
    confirmed = session.confirm_preview()
    assert confirmed == (prompt, preview.plan.subtasks)
    (step,) = preview.steps
    assert session.expected_tools() == {step.subtask.id: " → ".join(step.labels)}
    assert session.expected_tools() == {} and session.previewed is None
    session.show_preview(prompt, preview)
    session.drop_preview()
    assert session.confirm_preview() is None


def test_a_reopened_run_naming_a_tool_this_install_lacks_is_not_made_again(
    document: LayeredDocument, tmp_path: Path
) -> None:
    """An ORA's record is data from a file: a step naming a tool this install does not
    have is listed, but hiding the step before it says why it cannot be made again
    (before any tool runs), and the layers stay as the file holds them."""
    import json
    import zipfile

    session = RunSession(document, Settings(record_traces=False))
    assert session.run(session.request("make it warmer and add a vignette")).ok
    saved = document.save(tmp_path / "run.ora")
    edited = tmp_path / "edited.ora"
    with zipfile.ZipFile(saved) as source, zipfile.ZipFile(edited, "w") as target:
        for name in source.namelist():
            body = source.read(name)
            if name == "layerpath/runs.json":
                record = json.loads(body)
                for entry in record["runs"][0]["run"]["subtasks"]:
                    if entry["params"]["op"] == "vignette":
                        entry["tools"] = ["a_tool_from_elsewhere"]
                body = json.dumps(record).encode()
            target.writestr(name, body)
    reopened = LayeredDocument.open(edited, {})
    again = RunSession(reopened, Settings(record_traces=False))
    ((group, report, _),) = reopened.reopened
    steps = reopened.reopened_steps(group)
    again.adopt(group, report, steps, reopened.beneath(group))
    assert [s.subtask_id for _, s in steps] == ["s1", "s2"]
    warmer = steps[0][0]
    before = composite(reopened.image)
    reopened.set_visible(warmer, False)
    with pytest.raises(BadInput, match="a_tool_from_elsewhere, which this install"):
        again.remake_job([warmer])
    reopened.set_visible(warmer, True)
    assert np.array_equal(composite(reopened.image), before)


def _session_on(photo: Path, words: str) -> tuple[LayeredDocument, RunSession]:
    """`words` run on the photo in a document of its own."""
    document = LayeredDocument.open(photo, {})
    session = RunSession(document, Settings(record_traces=False))
    session.run(session.request(words))
    return document, session


def _hide_and_remake(
    session: RunSession, document: LayeredDocument, layer: str, shown: bool
) -> list[str]:
    document.set_visible(layer, shown)
    job = session.remake_job([layer])
    if job is None:
        return []
    return session.finish_remake(job(lambda e: None, lambda: False))


def test_the_later_steps_follow_each_runs_steps_as_they_were_last_made(
    document: LayeredDocument, tmp_path: Path
) -> None:
    """Two runs; the first run's warmth made again at another amount: the first run's
    record takes it (not the second's, though their subtasks share ids), and hiding
    the warmth then makes the vignette again over the picture without it, in its own
    layer, the second run untouched. Reopened from the ORA, the same holds with the
    amount as it was last made; a run that made no layer keeps no group's record."""
    session = RunSession(document, Settings(record_traces=False))
    session.run(session.request("make it warmer and add a vignette"))
    first = session.group
    session.run(session.request("increase the contrast"))
    second = session.group
    session.run(session.request("remove the giraffe"))  # (no layer: no group's record)
    assert first and second and len(session.runs) == 2
    warmth, vignette = session.layers(first)
    (contrast,) = session.layers(second)
    subtask, tools = session.with_amount(warmth, 1.0)
    job = session.rerun_job(warmth, subtask, tools)
    assert job is not None
    session.finish_rerun(job(session.place, lambda: False))  # type: ignore[arg-type]
    assert session.runs[first].outcomes[0].subtask.params["amount"] == 1.0
    assert session.runs[second].outcomes[0].subtask.params.get("op") == "contrast"
    assert session.layers(first) == [warmth, vignette]  # in their places
    second_pixels = session.placed[contrast].step.pixels

    assert _hide_and_remake(session, document, warmth, False) == []
    group = document.image.layers[1]
    assert isinstance(group, GroupLayer) and len(group.children) == 2
    assert session.placed[contrast].step.pixels is second_pixels
    assert _hide_and_remake(session, document, warmth, True) == []
    whole = composite(document.image)

    saved = document.save(tmp_path / "two.ora")
    reopened = LayeredDocument.open(saved, {})
    assert [r["prompt"] for _, r, _ in reopened.reopened] == [
        "make it warmer and add a vignette",
        "increase the contrast",
    ]
    again = RunSession(reopened, Settings(record_traces=False))
    for group_id, report, _ in reopened.reopened:
        again.adopt(group_id, report, reopened.reopened_steps(group_id), reopened.beneath(group_id))
    assert np.abs(composite(reopened.image).astype(int) - whole.astype(int)).max() <= 1
    warmth2 = again.layers()[0]
    assert again.placed[warmth2].outcome.subtask.params["amount"] == 1.0  # type: ignore[union-attr]
    _hide_and_remake(again, reopened, warmth2, False)
    _hide_and_remake(again, reopened, warmth2, True)
    assert np.abs(composite(reopened.image).astype(int) - whole.astype(int)).max() <= 1
    group2 = reopened.image.layers[1]
    assert isinstance(group2, GroupLayer) and len(group2.children) == 2  # nothing added


def test_a_later_step_the_checks_turn_down_when_made_again_is_hidden_and_comes_back(
    document: LayeredDocument,
) -> None:
    """A vignette made again that its check turns down (here: a threshold no step
    reaches) is hidden, its layer kept, and said; made again once more and passing, it
    is shown again in its place."""
    import dataclasses

    session = RunSession(document, Settings(record_traces=False))
    session.run(session.request("make it warmer and add a vignette"))
    group = session.group
    assert group is not None
    warmth, vignette = session.layers()
    run = session.runs[group]
    strict = dataclasses.replace(run.request, quality_threshold=0.999)
    session.runs[group] = dataclasses.replace(run, request=strict)
    said = _hide_and_remake(session, document, warmth, False)
    assert len(said) == 1 and said[0].startswith("Vignette +0.5 no longer passes its check")
    assert not document.is_visible(vignette) and session.layers() == [warmth, vignette]
    session.runs[group] = dataclasses.replace(session.runs[group], request=run.request)
    assert _hide_and_remake(session, document, warmth, True) == []
    assert document.is_visible(vignette) and session.layers() == [warmth, vignette]
    assert np.array_equal(composite(document.image), run.image)


def test_a_run_whose_group_was_deleted_is_not_kept_in_the_ora(
    document: LayeredDocument, tmp_path: Path
) -> None:
    """A run's group deleted before saving: the ORA keeps no record of it (nothing to
    list again), and saving does not stumble on the record it had."""
    session = RunSession(document, Settings(record_traces=False))
    session.run(session.request("make it warmer"))
    kept = session.group
    session.run(session.request("add a vignette"))
    assert kept is not None and session.group is not None
    document.remove(session.group)
    reopened = LayeredDocument.open(document.save(tmp_path / "one.ora"), {})
    assert [report["prompt"] for _, report, _ in reopened.reopened] == ["make it warmer"]


def test_the_later_steps_of_a_16_bit_photo_are_made_again_at_16_bits(tmp_path: Path) -> None:
    """A 16-bit TIFF (a smooth sky-like gradient with a picture in it), "lift the
    shadows, make it warmer and add a vignette", then Shadows hidden: the two later
    steps are made again from the 16-bit picture beneath them, at 16 bits (their
    layers keep more than 8 bits of gradation), and the document's 16-bit picture is
    what warmer and a vignette make alone, within 2 levels (of 255) on average and 6 at
    the 99th percentile; before, the later layers kept the lift."""
    import tifffile
    from skimage import data

    ramp = np.linspace(0.15, 0.85, 320, dtype=np.float64)[None, :, None]
    picture = data.astronaut()[96:336, :320].astype(np.float64) / 255.0
    deep = (65535 * (0.5 * picture + 0.5 * ramp)).astype(np.uint16)
    photo = tmp_path / "deep.tif"
    tifffile.imwrite(photo, deep, photometric="rgb")

    document, session = _session_on(photo, "lift the shadows, make it warmer and add a vignette")
    shadows, warmth, vignette = session.layers()
    lifted = composite(document.image, deep=True)
    assert _hide_and_remake(session, document, shadows, False) == []
    for layer in (warmth, vignette):
        step = session.placed[layer].step
        assert step.deep is not None and step.deep.dtype == np.uint16
        assert np.unique(step.deep[..., 0] % 257).size > 1  # not 8-bit values scaled up
    seen = composite(document.image, deep=True)[..., :3].astype(np.int64)
    alone = composite(_session_on(photo, "make it warmer and add a vignette")[0].image, deep=True)
    diff = np.abs(seen - alone[..., :3].astype(np.int64)) / 257
    assert diff.mean() <= 2.0 and np.percentile(diff, 99) <= 6, (diff.mean(), diff.max())
    stale = np.abs(lifted[..., :3].astype(np.int64) - alone[..., :3].astype(np.int64)) / 257
    assert stale.mean() > 2.0  # (hiding the lift alone would have left it in the later layers)
    # a step re-run at another amount stays at 16 bits too
    subtask, tools = session.with_amount(warmth, 1.0)
    job = session.rerun_job(warmth, subtask, tools)
    assert job is not None
    session.finish_rerun(job(session.place, lambda: False))  # type: ignore[arg-type]
    step = session.placed[warmth].step
    assert step.deep is not None and np.unique(step.deep[..., 0] % 257).size > 1


def test_the_steps_after_a_crop_are_made_again_in_its_frame(tmp_path: Path) -> None:
    """ "lift the shadows, crop to 4:5 and add a vignette", then Shadows hidden: the crop
    is made again from the picture without the lift, in the same frame, and the vignette
    over it, so the document is what cropping and the vignette make alone; shown again,
    the picture is as it was; the crop's own layer hidden, the vignette is made again
    over the picture beneath it in the crop's frame (the canvas stays as the crop made
    it), which is the same picture."""
    from PIL import Image
    from skimage import data

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)

    document, session = _session_on(photo, "lift the shadows, crop to 4:5 and add a vignette")
    shadows, crop, vignette = session.layers()
    assert session.placed[crop].step.canvas == (410, 512)
    assert _hide_and_remake(session, document, shadows, False) == []
    seen = composite(document.image)
    alone = composite(_session_on(photo, "crop to 4:5 and add a vignette")[0].image)
    assert seen.shape == alone.shape == (512, 410, 4)
    diff = np.abs(seen[..., :3].astype(int) - alone[..., :3].astype(int))
    assert diff.mean() <= 2.0 and np.percentile(diff, 99) <= 6, (diff.mean(), diff.max())
    lifted = composite(
        _session_on(photo, "lift the shadows, crop to 4:5 and add a vignette")[0].image
    )
    assert np.abs(lifted[..., :3].astype(int) - alone[..., :3].astype(int)).mean() > 2
    assert _hide_and_remake(session, document, shadows, True) == []
    assert np.abs(composite(document.image).astype(int) - lifted.astype(int)).max() <= 1
    # the crop's own layer hidden: what lies beneath, in its frame, is the same picture
    assert _hide_and_remake(session, document, crop, False) == []
    assert np.abs(composite(document.image).astype(int) - lifted.astype(int)).max() <= 1


def test_steps_moved_among_themselves_apply_in_their_new_order(tmp_path: Path) -> None:
    """ "make it warmer and make it black and white" (a neutral mono), then the Black &
    white layer moved below the Temperature one, as in the Layers dock: the steps are
    made again in the new order, so the picture is a warm-toned mono, what
    black-and-white-then-warmer makes (the layers as they were would show the warm
    colour photo); a run that crops keeps its order (said)."""
    import dataclasses

    from PIL import Image
    from skimage import data

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    document = LayeredDocument.open(photo, {})
    session = RunSession(document, Settings(record_traces=False))
    session.run(session.request("make it warmer and make it black and white"))
    group = session.group
    assert group is not None
    warm, mono = session.layers()
    assert session.reorder_job(group, [warm, mono]) is None  # (as it was)
    children = document.image.layers[1].children  # type: ignore[union-attr]
    children.reverse()  # (the Layers dock's move: Black & white now beneath)
    order = document.step_order(group)
    assert order == [mono, warm]
    job = session.reorder_job(group, order)
    assert job is not None
    assert session.finish_remake(job(lambda e: None, lambda: False)) == []
    seen = composite(document.image)[..., :3].astype(int)
    assert (seen[..., 0] - seen[..., 2]).mean() > 5  # warm-toned
    run = session.runs[group]
    assert [o.subtask.id for o in run.outcomes] == [
        session.placed[mono].step.subtask_id,
        session.placed[warm].step.subtask_id,
    ]
    in_order = dataclasses.replace(run.request, plan=tuple(o.subtask for o in run.outcomes))
    alone = session.engine().run(in_order).image[..., :3].astype(int)
    diff = np.abs(seen - alone)
    assert diff.mean() <= 2.0 and np.percentile(diff, 99) <= 6, (diff.mean(), diff.max())
    # saved and reopened, the run keeps its new order
    reopened = LayeredDocument.open(document.save(tmp_path / "moved.ora"), {})
    ((_, report, _),) = reopened.reopened
    assert [s["id"] for s in report["plan"]] == [o.subtask.id for o in run.outcomes]

    cropped = LayeredDocument.open(photo, {})
    framing = RunSession(cropped, Settings(record_traces=False))
    framing.run(framing.request("make it warmer and crop to 4:5"))
    assert framing.group is not None
    warmth, crop = framing.layers()
    with pytest.raises(BadInput, match="keep their order"):
        framing.reorder_job(framing.group, [crop, warmth])

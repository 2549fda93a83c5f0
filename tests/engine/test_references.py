"""References (issue 17, part 2): a swatch's colour, a note's words (a text file, a
picture read by the real PP-OCR models rapidocr ships, a voice memo transcribed through
the real `openai` client against a server on 127.0.0.1), a photo's colours and its sky,
read and used by the real engine and offline tools. The pictures are made in the test
or are scikit-image's (shipped in its package)."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from layerpath.engine.execute.executor import Engine
from layerpath.engine.judge.checks.sky import check_sky_replaced, old_sky_left
from layerpath.engine.learn.traces import TraceStore
from layerpath.engine.plan.references import load_reference, parse_refs
from layerpath.engine.types import EditRequest, Snapshot, SubtaskKind
from layerpath.errors import BadInput
from layerpath.kit.colours import lab_exact
from layerpath.kit.fonts import installed_fonts
from layerpath.plugin.cli import main
from layerpath.settings import LlmSettings, Settings, save_settings
from layerpath.tools.registry import Registry
from tests.conftest import Scene
from tests.openai_server import ScriptedServer

K = SubtaskKind
CHIP = (46, 110, 140)


def swatch(path: Path) -> Path:
    """A teal paint chip photographed on off-white paper, with a little noise."""
    rng = np.random.default_rng(1)
    picture = np.full((300, 400, 3), (238, 232, 222), np.float64)
    picture[60:240, 80:320] = CHIP
    picture += rng.normal(0, 3, picture.shape)
    Image.fromarray(np.clip(picture, 0, 255).astype(np.uint8)).save(path, quality=92)
    return path


def note_picture(path: Path, words: str) -> Path:
    """A photographed note: the words in black on a white card."""
    card = Image.new("RGB", (520, 160), (250, 250, 246))
    font = ImageFont.truetype(installed_fonts()[0], 64)
    ImageDraw.Draw(card).text((30, 40), words, fill=(20, 20, 20), font=font)
    card.save(path)
    return path


def test_a_swatch_and_notes_ground_the_instruction(scene: Scene, tmp_path: Path) -> None:
    """The chip's colour (not the paper's) recolours the wall; the note's words, from a
    text file or read from a picture, replace the sign's; the plan says where each came
    from."""
    (tmp_path / "note.txt").write_text("  OPEN\nDAILY \n", encoding="utf-8")
    references = parse_refs(
        [
            f"swatch={swatch(tmp_path / 'chip.jpg')}",
            f"note={tmp_path / 'note.txt'}",
            f"card={note_picture(tmp_path / 'card.png', 'SALE')}",
        ]
    )
    engine = Engine(Registry.from_catalogue())
    plan = engine.plan(
        EditRequest(
            "recolor the wall to the colour of swatch and replace the sign text with the "
            "name in note",
            scene.snapshot(),
            references=references,
        ),
        lambda e: None,
    ).subtasks
    recolour = next(s for s in plan if s.kind == K.OBJECT_RECOLORATION)
    colour = tuple(int(recolour.to[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[index]
    assert max(abs(a - b) for a, b in zip(colour, CHIP, strict=True)) <= 4
    assert recolour.params["ref"] == "swatch" and "(from swatch)" in recolour.describe()
    text = next(s for s in plan if s.kind == K.TEXT_REPLACEMENT)
    assert (text.to, text.params["ref"]) == ("OPEN DAILY", "note")
    read = engine.plan(
        EditRequest(
            "replace the sign text with the words on card",
            scene.snapshot(),
            references=references,
        ),
        lambda e: None,
    ).subtasks
    assert [(s.kind, s.to) for s in read] == [(K.TEXT_REPLACEMENT, "SALE")]
    assert references["card"].answers["words"] == "SALE"  # what was read, for the report


def test_a_notes_words_never_reach_the_planner(
    scene: Scene, tmp_path: Path, server: ScriptedServer
) -> None:
    """A note that reads like an instruction is words for the sign, not a plan: the
    offline planner plans the instruction, and the LLM planner is sent '@note', never
    the note's words."""
    (tmp_path / "note.txt").write_text("remove the ball and make it black and white")
    references = parse_refs([f"note={tmp_path / 'note.txt'}"])
    request = EditRequest(
        "replace the sign text with the text in note", scene.snapshot(), references=references
    )
    (offline,) = Engine(Registry.from_catalogue()).plan(request, lambda e: None).subtasks
    assert (offline.kind, offline.to) == (
        K.TEXT_REPLACEMENT,
        "remove the ball and make it black and white",
    )
    from layerpath.engine.plan.llm_planner import LlmPlanner

    server.script = [
        (
            200,
            json.dumps(
                {"subtasks": [{"kind": "text_replacement", "target": "text", "to": "@note"}]}
            ),
        )
    ]
    planner = LlmPlanner(LlmSettings(base_url=server.url, model="test-model"), None)
    engine = Engine(Registry.from_catalogue(), planner=lambda r, e: planner.plan(r))
    (planned,) = engine.plan(request, lambda e: None).subtasks
    assert planned.to == "remove the ball and make it black and white"
    sent = json.dumps(server.requests)
    assert "@note" in sent and "black and white" not in sent


def memo(path: Path) -> Path:
    """Half a second of a tone, as a WAV file (what the endpoint hears is its business)."""
    tone = (np.sin(np.linspace(0, 440 * np.pi, 8000)) * 12000).astype(np.int16)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(tone.tobytes())
    return path


def test_a_voice_memo_is_transcribed_through_the_endpoint_and_kept_out_of_the_traces(
    scene: Scene, tmp_path: Path, server: ScriptedServer
) -> None:
    save_settings(Settings(llm=LlmSettings(base_url=server.url, transcription_model="speech-1")))
    image, masks = scene.save(tmp_path / "in")
    sound = memo(tmp_path / "memo.wav")
    server.script = [(200, " Grand opening ")]
    out, report = tmp_path / "out.ora", tmp_path / "run.json"
    words = "replace the sign text with what memo says"
    code = main(["edit", str(image), words, f"--ref=memo={sound}", "-o", str(out), "--report", str(report)])  # fmt: skip
    assert code == 0
    (asked,) = server.requests
    assert asked["model"] == b"speech-1" and asked["file"] == sound.read_bytes()
    data = json.loads(report.read_text())
    (subtask,) = data["subtasks"]
    assert (subtask["to"], subtask["params"]["ref"]) == ("Grand opening", "memo")
    assert data["references"] == [
        {"name": "memo", "kind": "audio", "file": "memo.wav", "words": "Grand opening"}
    ]
    from layerpath.settings.paths import data_dir

    stored = json.dumps(TraceStore(data_dir() / "traces.sqlite").attempts())
    assert "@memo" in stored and "Grand opening" not in stored
    # the endpoint down: said before any tool runs, nothing written
    server.script = [(500, "the speech model is not loaded")]
    assert (
        main(["edit", str(image), words, f"--ref=memo={sound}", "-o", str(tmp_path / "b.ora")]) == 2
    )
    assert not (tmp_path / "b.ora").exists()


def test_references_that_cannot_be_used_are_refused_before_any_tool_runs(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chip = swatch(tmp_path / "chip.jpg")
    (tmp_path / "note.txt").write_text("OPEN")
    (tmp_path / "long.txt").write_text("word " * 5000)
    (tmp_path / "data.csv").write_text("a,b")
    for given, said in [
        ("1st=" + str(chip), "cannot name a reference"),
        ("chip=" + str(tmp_path / "nope.jpg"), "does not exist"),
        ("table=" + str(tmp_path / "data.csv"), "is not a picture"),
        ("long=" + str(tmp_path / "long.txt"), "a reference note holds a few words"),
        ("chip", "--ref wants NAME=FILE"),
    ]:
        with pytest.raises(BadInput, match=said):
            parse_refs([given])
    engine = Engine(Registry.from_catalogue())
    note = {"note": load_reference("note", tmp_path / "note.txt")}
    for words, references, said in [
        ("recolor the wall to the colour of note", note, "not a picture: a colour comes"),
        ("match the colours of ref", {}, "There is no reference named 'ref'"),
        (
            "remove the ball and match the colours of note",
            note,
            "colours to match comes from a picture",
        ),
    ]:
        with pytest.raises(BadInput, match=said):
            engine.plan(EditRequest(words, scene.snapshot(), references=references), lambda e: None)
    image, _ = scene.save(tmp_path / "in")
    out = tmp_path / "out.ora"
    assert main(["edit", str(image), "match the colours of ref", f"--ref=ref={tmp_path / 'note.txt'}", "-o", str(out)]) == 2  # fmt: skip
    assert "comes from a picture" in capsys.readouterr().err and not out.exists()


def stats(pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lab = lab_exact(pixels[..., :3].reshape(-1, 3).astype(np.float64) / 255.0)
    return lab.mean(axis=0), lab.std(axis=0)


def test_the_colours_of_a_reference_photo_are_matched(tmp_path: Path) -> None:
    """scikit-image's astronaut in the colours of its coffee photo: the picture's CIELAB
    mean and spread move most of the way to the coffee's, at the step's amount; with the
    face kept off, the face keeps every pixel."""
    pytest.importorskip("skimage")
    from skimage import data

    Image.fromarray(data.coffee()).save(tmp_path / "coffee.png")
    references = parse_refs([f"ref={tmp_path / 'coffee.png'}"])
    photo = np.dstack([data.astronaut(), np.full((512, 512), 255, np.uint8)])
    engine = Engine(Registry.from_catalogue())
    result = engine.run(
        EditRequest("match the colours of ref", Snapshot(photo), references=references)
    )
    assert result.ok, result.outcomes[0].error
    (mean0, spread0), (mean1, spread1) = stats(photo), stats(result.image)
    target, width = stats(data.coffee())
    before = np.linalg.norm(mean0 - target) + np.linalg.norm(spread0 - width)
    after = np.linalg.norm(mean1 - target) + np.linalg.norm(spread1 - width)
    assert after < 0.5 * before
    kept = engine.run(
        EditRequest(
            "give it the colours of ref, but keep the face unchanged",
            Snapshot(photo),
            references=references,
        )
    )
    assert kept.ok
    finder = next(o for o in kept.outcomes)
    assert finder.subtask.params["outside"] is True
    face = photo[90:140, 200:250]  # the astronaut's face (the finder's face inside it)
    assert np.array_equal(kept.image[90:140, 200:250], face)


def landscape() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A pale blue sky over green hills with a wavy horizon, and a thin dark pole standing
    into the sky; with film grain. The picture (RGBA), its sky and the pole."""
    rng = np.random.default_rng(3)
    h, w = 400, 600
    yy, xx = np.mgrid[:h, :w]
    horizon = 230 + 18 * np.sin(xx / 70.0)
    sky = yy < horizon
    picture = np.zeros((h, w, 3), np.float64)
    picture[sky] = np.array([150, 190, 235]) + (yy[sky, None] / h) * np.array([40, 30, 10])
    picture[~sky] = (60, 120, 50) + rng.normal(0, 10, ((~sky).sum(), 3))
    pole = (np.abs(xx - 300) <= 2) & (yy > 80)
    picture[pole] = (40, 35, 30)
    picture += rng.normal(0, 2, picture.shape)
    rgba = np.dstack([np.clip(picture, 0, 255).astype(np.uint8), np.full((h, w), 255, np.uint8)])
    return rgba, sky & ~pole, pole


def test_the_sky_of_a_reference_photo_replaces_the_photos(tmp_path: Path) -> None:
    """The landscape's sky replaced by the sky of scikit-image's rocket photo (a clear
    stretch of it: its masts and its rocket are left out): the sky takes the rocket's
    sky's colours, the pole and the hills keep every colour they had, and no old sky
    stays along the pole."""
    pytest.importorskip("skimage")
    from skimage import data

    Image.fromarray(data.rocket()).save(tmp_path / "rocket.png")
    references = parse_refs([f"ref={tmp_path / 'rocket.png'}"])
    picture, sky, pole = landscape()
    result = Engine(Registry.from_catalogue()).run(
        EditRequest("replace the sky with the one in ref", Snapshot(picture), references=references)
    )
    (outcome,) = result.outcomes
    assert outcome.ok, outcome.error
    assert outcome.tools == ("offline_finder", "sky_replace")
    inner = sky.copy()
    inner[:, 280:320] = False
    inner[200:] = False
    rocket_sky = references["ref"].answers["sky"]
    now = lab_exact(result.image[inner][:, :3].astype(np.float64) / 255.0).mean(axis=0)
    assert np.linalg.norm(now - np.array(rocket_sky["mean"])) < 6  # the rocket's sky
    ground = np.zeros_like(sky)
    ground[280:] = True
    assert np.array_equal(result.image[ground], picture[ground])  # the hills as they were
    core = pole & (np.arange(400)[:, None] < 200)
    assert np.abs(result.image[core].astype(int) - picture[core]).max() <= 12  # the pole
    assert old_sky_left(picture, result.image, sky) < 0.05


def test_the_plan_shown_before_a_sky_replacement_uses_the_reference(tmp_path: Path) -> None:
    """The plan shown before the run (nothing run) sees the reference the run will see:
    it names the finder and the sky replacement, not 'it needs a reference photo' (the
    preview's tools were once asked without the references)."""
    from layerpath.engine.execute.preview import preview

    sky = np.zeros((120, 200, 3), np.uint8)
    sky[:] = (90, 140, 220)
    Image.fromarray(sky).save(tmp_path / "blue.png")
    references = parse_refs([f"ref={tmp_path / 'blue.png'}"])
    picture, _, _ = landscape()
    request = EditRequest(
        "replace the sky with the one in ref", Snapshot(picture), references=references
    )
    (step,) = preview(Engine(Registry.from_catalogue()), request).steps
    assert step.tools == ("offline_finder", "sky_replace") and step.problem == ""


def test_a_new_sky_that_leaves_the_old_one_around_a_pole_is_turned_down() -> None:
    """A finder's sky that stops short of the pole, and a new sky put into it alone: the
    old sky stays along the pole, a halo the check names."""
    from layerpath.kit.imaging import dilate

    picture, sky, pole = landscape()
    found = sky & ~dilate(pole, 10)
    after = picture.copy()
    after[found, :3] = (40, 50, 90)
    verdict = check_sky_replaced(
        picture, after, found, {"mean": [21.0, 4.0, -25.0], "std": [1.0, 1.0, 1.0]}
    )
    assert verdict.score < 0.5 and "the old sky left along the edges" in verdict.reason


def dusk_sky(h: int = 600, w: int = 900) -> np.ndarray:
    """A sky alone at dusk, made here: violet at the top fading to an orange glow,
    soft darker clouds, film grain. Colours the photo sky finder does not take for sky
    (dark, then warm and saturated), and nothing else in it."""
    rng = np.random.default_rng(5)
    t = np.linspace(0.0, 1.0, h)[:, None, None]
    top, glow = np.array([70.0, 50.0, 110.0]), np.array([235.0, 130.0, 60.0])
    sky = (1 - t) * top + t * glow + np.zeros((h, w, 3))
    clouds = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 25)
    sky *= (1 - 0.1 * np.clip(clouds / (clouds.std() + 1e-6), 0, 2))[..., None]
    sky += rng.normal(0, 0.8, sky.shape)  # (a photo's grain once shrunk to the finder's size)
    return np.clip(sky, 0, 255).astype(np.uint8)


def test_a_dusk_sky_alone_is_a_sky_to_replace_with(tmp_path: Path) -> None:
    """(issue 25: a sunset's and a dark evening's sky, given alone, were refused as 'too
    little sky')"""
    from layerpath.kit.sky_edge import sky_of

    Image.fromarray(dusk_sky()).save(tmp_path / "dusk.png")
    references = parse_refs([f"ref={tmp_path / 'dusk.png'}"])
    assert sky_of(references["ref"].pixels).shape[:2] == (600, 900)  # all of it
    picture, sky, pole = landscape()
    result = Engine(Registry.from_catalogue()).run(
        EditRequest("replace the sky with the one in ref", Snapshot(picture), references=references)
    )
    (outcome,) = result.outcomes
    assert outcome.ok, outcome.error
    inner = sky.copy()
    inner[:, 280:320], inner[200:] = False, False
    now = lab_exact(result.image[inner][:, :3].astype(np.float64) / 255.0).mean(axis=0)
    dusk = references["ref"].answers["sky"]["mean"]
    assert np.linalg.norm(now - np.array(dusk)) < 12  # the dusk's colours, not the blue
    ground = np.zeros_like(sky)
    ground[280:] = True
    assert np.array_equal(result.image[ground], picture[ground])


def test_a_smooth_picture_with_no_sky_is_not_a_sky_alone() -> None:
    """A plank's wavy grain and a blind's slats, smooth between their lines: no sky."""
    from layerpath.kit.sky import sky_alone

    rng = np.random.default_rng(2)
    yy, xx = np.mgrid[:300, :500]
    grain = 18 * np.sin(yy / 3.0 + 2 * np.sin(xx / 60.0)) + rng.normal(0, 4, (300, 500))
    wood = np.clip(np.stack([120 + grain, 78 + 0.7 * grain, 40 + 0.4 * grain], -1), 0, 255)
    slats = np.where(((yy // 30) % 2 == 1)[..., None], 200, 170) + np.zeros((300, 500, 3))
    slats = cv2.GaussianBlur(slats.astype(np.float32), (0, 0), 1.0)
    assert not sky_alone(wood.astype(np.uint8)) and not sky_alone(slats.astype(np.uint8))
    assert sky_alone(dusk_sky())


def cumulus_over_hills(h: int = 600, w: int = 900) -> np.ndarray:
    """A pale blue sky over green hills, a billowing white cloud from its top left
    corner halfway down: a cloud grainy enough that the sky finder leaves it out of the
    sky, as it left out a held-out photo's cumulus (KDE's Kite)."""
    rng = np.random.default_rng(7)
    yy, xx = np.mgrid[:h, :w]
    sky = yy < 400 + 20 * np.sin(xx / 80.0)
    picture = np.zeros((h, w, 3))
    picture[sky] = np.array([150, 190, 235]) + (yy[sky, None] / h) * np.array([40, 30, 10])
    cloud = (xx < 260 + 60 * np.sin(yy / 37.0) + 25 * np.sin(yy / 11.0)) & (yy < 300)
    puffs = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 1.0)
    shade = np.clip(215 + 40 * puffs / (puffs.std() + 1e-6), 120, 255)
    picture[cloud] = shade[cloud][:, None]
    picture[~sky] = (60, 120, 50) + rng.normal(0, 10, ((~sky).sum(), 3))
    picture += rng.normal(0, 2, picture.shape)
    return np.clip(picture, 0, 255).astype(np.uint8)


def test_a_reference_whose_top_rows_carry_a_cloud_gives_its_sky() -> None:
    """(issue 25: a held-out reference, a blue sky with a cumulus along its top left, was
    refused as 'too little sky': its top rows were not sky where the cloud was.) What
    the finder leaves out and floats free of the ground, in a sky's colours, is of the
    sky; a microscope slide's stains float too, and are not."""
    pytest.importorskip("skimage")
    from skimage import data

    from layerpath.kit.sky_edge import sky_of

    band = sky_of(cumulus_over_hills())
    lab = lab_exact(band.reshape(-1, 3).astype(np.float64) / 255.0)
    assert band.shape[0] >= 200 and (lab[:, 2] < 0).mean() > 0.95  # blue sky, no hills
    with pytest.raises(BadInput, match="too little sky"):
        sky_of(data.immunohistochemistry())

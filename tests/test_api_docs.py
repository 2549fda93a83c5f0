"""docs/api.md's examples run as they are written, on the generated scene saved as
photo.jpg with its ball's mask as ball.png: the documented API is the real one."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.conftest import Scene

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def _examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("number", range(2))
def test_the_api_page_s_examples_run(
    number: int, scene: Scene, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = _examples()
    assert len(examples) == 2
    Image.fromarray(scene.image[..., :3]).save(tmp_path / "photo.jpg", quality=95)
    Image.fromarray(scene.masks["ball"].astype(np.uint8) * 255).save(tmp_path / "ball.png")
    monkeypatch.chdir(tmp_path)
    exec(compile(examples[number], f"docs/api.md example {number + 1}", "exec"), {})
    if number == 0:
        from layerpath.engine.files.io import read_layered

        saved = read_layered(tmp_path / "out.ora")
        assert len(saved.layers) == 2  # the photo, and the run's group of step layers
        web = Image.open(tmp_path / "web.jpg")
        assert max(web.size) <= 800 and web.info.get("icc_profile")  # (sRGB embedded)
    else:
        after = np.asarray(Image.open(tmp_path / "no-ball.png"))
        ball = scene.masks["ball"]
        assert np.abs(after[ball].astype(int) - scene.image[ball].astype(int)).mean() > 10

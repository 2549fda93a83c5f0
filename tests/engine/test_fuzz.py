"""A short, bounded fuzz of what layerpath reads from disk (issue 26): whatever bytes or
JSON a store, an action file, a run report, a settings file, a mask or a picture holds,
reading it ends in a result or a BadInput naming the problem, never another exception,
a hang or a change to the file. Hypothesis generates the content (a fixed number of
examples, no deadline: CI's machine is slow); the files are real, read by the real
readers."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from layerpath.engine.files.io import read_layered, read_mask
from layerpath.engine.learn.actions import import_json
from layerpath.engine.learn.rulebook import RuleBook
from layerpath.errors import BadInput
from layerpath.settings.store import load_settings
from layerpath.tools.registry import Registry

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,  # the same examples every run: a failure can be rerun
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
#: keys a store's reader looks for, so the fuzz reaches past "not an object"
STORE_KEYS = ["rules", "disabled", "pinned", "actions", "version", "decisions", "learned_at_runs",
              "name", "parts", "format", "action", "schema_version", "planner", "llm"]  # fmt: skip
store_objects = st.dictionaries(st.sampled_from(STORE_KEYS), json_values, max_size=5)
contents = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    store_objects.map(lambda v: json.dumps(v).encode()),
)

REGISTRY = Registry.from_catalogue()


def reads_cleanly(path: Path, data: bytes, read: Callable[[], Any]) -> None:
    """`read()` returns or raises BadInput; the file is left as it was."""
    path.write_bytes(data)
    try:
        read()
    except BadInput:
        pass
    assert path.read_bytes() == data


@FUZZ
@given(data=contents)
def test_any_rules_or_actions_file_is_read_or_refused(data: bytes, tmp_path: Path) -> None:
    book = RuleBook(REGISTRY, tmp_path)
    reads_cleanly(book.rules_path, data, lambda: (book.entries(), book.table(), book.pinned()))
    book.rules_path.unlink()
    reads_cleanly(book.actions_path, data, lambda: (book.actions(), book.entries()))


@FUZZ
@given(data=contents)
def test_any_learning_record_is_read_or_kept_aside(data: bytes, tmp_path: Path) -> None:
    book = RuleBook(REGISTRY, tmp_path)
    book.learning_path.write_bytes(data)
    book.rejected_before()  # a bad record is moved aside, never an error
    assert not book.learning_path.exists() or book.learning_path.read_bytes() == data


@FUZZ
@given(data=contents)
def test_any_settings_file_is_read_or_refused(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    reads_cleanly(path, data, lambda: load_settings(path))


@FUZZ
@given(data=contents, wrapped=st.booleans())
def test_any_action_file_is_imported_or_refused(data: bytes, wrapped: bool) -> None:
    if wrapped:  # past the format check, into the action's own fields
        try:
            inner = json.loads(data)
        except ValueError:
            inner = None
        data = json.dumps({"format": "layerpath-action", "version": 1, "action": inner}).encode()
    try:
        import_json(data, REGISTRY)
    except BadInput:
        pass


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGBA", (width, height), (10, 20, 30, 255)).save(out, "PNG")
    return out.getvalue()


@FUZZ
@given(
    data=st.binary(max_size=300),
    cut=st.integers(0, 400),
    suffix=st.sampled_from([".png", ".jpg", ".tif", ".ora", ".psd"]),
)
def test_any_picture_or_mask_file_is_read_or_refused(
    data: bytes, cut: int, suffix: str, tmp_path: Path
) -> None:
    """Random bytes, and a real PNG or ORA cut short or with bytes spliced in."""
    real = _png(32, 24)
    if suffix == ".ora":
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            archive.writestr("mimetype", "image/openraster")
            archive.writestr(
                "stack.xml", '<image w="32" h="24"><stack><layer src="a.png"/></stack></image>'
            )
            archive.writestr("a.png", real)
        real = out.getvalue()
    for content in (data, real[:cut] + data + real[cut:], real[:cut]):
        path = tmp_path / f"fuzzed{suffix}"
        reads_cleanly(path, content, lambda path=path: read_layered(path))
        reads_cleanly(path, content, lambda path=path: read_mask(path, (32, 24), "m"))


@pytest.mark.parametrize("name", ["rules.json", "actions.json", "settings.json"])
def test_the_fuzz_reaches_the_readers(name: str, tmp_path: Path) -> None:
    """The fuzz's content is read, not refused before it (a sanity check of the
    harness): a good file of each kind reads without error."""
    book = RuleBook(REGISTRY, tmp_path)
    good = {"rules.json": {"disabled": ["SR1"]}, "actions.json": {"version": 2, "actions": []},
            "settings.json": {"schema_version": 1}}[name]  # fmt: skip
    (tmp_path / name).write_text(json.dumps(good))
    if name == "settings.json":
        load_settings(tmp_path / name)
    else:
        assert book.entries()

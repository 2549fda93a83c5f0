"""The model manager against a real HTTP server on 127.0.0.1: downloads, resume after a
cut, sha256 checks, the hub's LFS hash, disk errors, offline mode, reuse of a Hugging
Face cache, and the `layerpath models` command."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from layerpath.errors import DownloadFailed, ModelMissing
from layerpath.plugin.cli import main
from layerpath.tools.models import ModelManager, ModelSpec, ModelState, load_catalogue
from tests.file_server import FileServer

WEIGHTS = os.urandom(3 * 1024 * 1024 + 123)  # three chunks and a bit
CONFIG = b'{"hidden_size": 8}'


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def spec(url: str, **file: object) -> dict[str, ModelSpec]:
    record = {"path": "weights.bin", "size": len(WEIGHTS), "url": f"{url}/weights.bin", **file}
    model = ModelSpec.model_validate(
        {"name": "tiny", "description": "a test model", "licence": "MIT", "files": [record]}
    )
    return {"tiny": model}


@pytest.fixture
def server() -> Iterator[FileServer]:
    with FileServer() as running:
        running.files["/weights.bin"] = WEIGHTS
        yield running


def test_download_checks_the_hash_and_reports_progress(server: FileServer, tmp_path: Path) -> None:
    models = ModelManager(tmp_path / "models", spec(server.url, sha256=sha(WEIGHTS)))
    assert models.status("tiny").state == ModelState.MISSING
    with pytest.raises(ModelMissing, match="layerpath models download tiny"):
        models.require("tiny")
    seen: list[tuple[str, int, int | None]] = []
    status = models.download("tiny", lambda *p: seen.append(p))
    assert status.state == ModelState.PRESENT
    assert (models.require("tiny") / "weights.bin").read_bytes() == WEIGHTS
    assert seen[-1] == ("weights.bin", len(WEIGHTS), len(WEIGHTS)) and len(seen) >= 4
    assert [done for _, done, _ in seen] == sorted(done for _, done, _ in seen)
    assert models.verify("tiny") == []
    models.download("tiny")  # already there: no second request
    assert len(server.requests) == 1


def test_a_cut_download_resumes_with_a_range_request(server: FileServer, tmp_path: Path) -> None:
    models = ModelManager(tmp_path / "models", spec(server.url, sha256=sha(WEIGHTS)))
    server.cut_after["/weights.bin"] = 1_500_000
    with pytest.raises(DownloadFailed, match="run the command again to resume"):
        models.download("tiny")
    part = tmp_path / "models" / "tiny" / "weights.bin.part"
    assert part.stat().st_size == 1_500_000
    assert models.status("tiny").state == ModelState.PARTIAL
    assert not (tmp_path / "models" / "tiny" / "weights.bin").exists()

    assert models.download("tiny").state == ModelState.PRESENT
    assert server.requests[-1] == ("/weights.bin", "bytes=1500000-")
    assert (tmp_path / "models" / "tiny" / "weights.bin").read_bytes() == WEIGHTS
    assert not part.exists()


def test_a_wrong_hash_is_rejected_and_nothing_is_kept(server: FileServer, tmp_path: Path) -> None:
    models = ModelManager(tmp_path / "models", spec(server.url, sha256="0" * 64))
    with pytest.raises(DownloadFailed, match="damaged or not the expected file"):
        models.download("tiny")
    folder = tmp_path / "models" / "tiny"
    assert not (folder / "weights.bin").exists() and not (folder / "weights.bin.part").exists()
    assert models.status("tiny").state == ModelState.MISSING


def test_the_hubs_lfs_hash_verifies_files_the_catalogue_has_no_hash_for(
    server: FileServer, tmp_path: Path
) -> None:
    models = ModelManager(tmp_path / "a", spec(server.url))
    with pytest.raises(DownloadFailed, match="no known sha256"):
        models.download("tiny")  # no hash anywhere: not kept
    assert not (tmp_path / "a" / "tiny" / "weights.bin").exists()

    server.headers["/weights.bin"] = {"X-Linked-Etag": '"' + "1" * 64 + '"'}
    with pytest.raises(DownloadFailed, match="damaged"):
        ModelManager(tmp_path / "b", spec(server.url)).download("tiny")

    server.headers["/weights.bin"] = {"X-Linked-Etag": f'"{sha(WEIGHTS)}"'}
    models = ModelManager(tmp_path / "c", spec(server.url))
    assert models.download("tiny").state == ModelState.PRESENT
    assert models.verify("tiny") == []  # the hub's hash was recorded
    (tmp_path / "c" / "tiny" / "weights.bin").write_bytes(
        bytes([WEIGHTS[0] ^ 1]) + WEIGHTS[1:]
    )  # one bit flipped
    assert models.verify("tiny") == ["weights.bin: sha256 does not match"]


def test_small_config_files_are_trusted_on_first_use_then_verified(
    server: FileServer, tmp_path: Path
) -> None:
    server.files["/config.json"] = CONFIG
    model = ModelSpec.model_validate(
        {
            "name": "tiny",
            "description": "d",
            "licence": "MIT",
            "files": [
                {"path": "config.json", "size": 20, "url": f"{server.url}/config.json"},
            ],
        }
    )
    with pytest.raises(DownloadFailed, match="no known sha256"):
        ModelManager(tmp_path / "a", {"tiny": model}).download("tiny")
    trusted = model.model_copy(
        update={"files": (model.files[0].model_copy(update={"trust_on_first_use": True}),)}
    )
    models = ModelManager(tmp_path / "b", {"tiny": trusted})
    assert models.download("tiny").state == ModelState.PRESENT
    (tmp_path / "b" / "tiny" / "config.json").write_bytes(b'{"hidden_size": 9}')
    assert models.verify("tiny") == ["config.json: sha256 does not match"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_reported(server: FileServer, tmp_path: Path) -> None:
    models = ModelManager(tmp_path / "models", spec(server.url, sha256=sha(WEIGHTS)))
    folder = tmp_path / "models" / "tiny"
    folder.mkdir(parents=True)
    (folder / "weights.bin.part").symlink_to("/dev/full")  # every write: ENOSPC
    with pytest.raises(DownloadFailed, match="disk is full"):
        models.download("tiny")
    assert not (folder / "weights.bin").exists()


def test_an_unwritable_model_folder_is_reported(server: FileServer, tmp_path: Path) -> None:
    (tmp_path / "models").write_text("a file where the folder should be")
    models = ModelManager(tmp_path / "models", spec(server.url, sha256=sha(WEIGHTS)))
    with pytest.raises(DownloadFailed, match="Cannot create the model folder"):
        models.download("tiny")


def test_server_errors_and_unreachable_servers_are_reported(
    server: FileServer, tmp_path: Path
) -> None:
    del server.files["/weights.bin"]
    with pytest.raises(DownloadFailed, match="answered 404"):
        ModelManager(tmp_path / "a", spec(server.url, sha256=sha(WEIGHTS))).download("tiny")
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens
    with pytest.raises(DownloadFailed, match="Check the network connection"):
        ModelManager(tmp_path / "b", spec(closed, sha256=sha(WEIGHTS))).download("tiny")


def test_offline_mode_never_touches_the_network(server: FileServer, tmp_path: Path) -> None:
    models = ModelManager(tmp_path / "m", spec(server.url, sha256=sha(WEIGHTS)), offline=True)
    with pytest.raises(ModelMissing, match="offline mode"):
        models.download("tiny")
    assert server.requests == []


def test_a_file_in_the_hugging_face_cache_is_reused(server: FileServer, tmp_path: Path) -> None:
    hf = tmp_path / "hf"
    snapshot = hf / "models--org--tiny" / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (snapshot / "weights.bin").write_bytes(WEIGHTS)
    catalogue = spec(server.url, sha256=sha(WEIGHTS))
    catalogue["tiny"] = catalogue["tiny"].model_copy(update={"hub_repo": "org/tiny"})
    models = ModelManager(tmp_path / "m", catalogue, offline=True, hf_cache=hf)
    assert models.download("tiny").state == ModelState.PRESENT
    assert server.requests == []
    assert (tmp_path / "m" / "tiny" / "weights.bin").read_bytes() == WEIGHTS
    # a cached file with other contents is not used
    (snapshot / "weights.bin").write_bytes(WEIGHTS[::-1])
    other = ModelManager(tmp_path / "n", catalogue, offline=True, hf_cache=hf)
    with pytest.raises(ModelMissing):
        other.download("tiny")


def test_the_hugging_face_cache_layout_verifies_lfs_files_by_their_blob_name(
    server: FileServer, tmp_path: Path
) -> None:
    """huggingface_hub keeps an LFS file as blobs/<sha256> with the snapshot's file a link
    to it: a catalogue entry without a sha256 is reused when the content matches the name."""
    repo = tmp_path / "hf" / "models--org--tiny"
    (repo / "blobs").mkdir(parents=True)
    (repo / "blobs" / sha(WEIGHTS)).write_bytes(WEIGHTS)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("c0ffee")
    (repo / "snapshots" / "c0ffee").mkdir(parents=True)
    (repo / "snapshots" / "c0ffee" / "weights.bin").symlink_to(
        Path("..") / ".." / "blobs" / sha(WEIGHTS)
    )
    catalogue = spec(server.url)  # no sha256 in the catalogue
    catalogue["tiny"] = catalogue["tiny"].model_copy(update={"hub_repo": "org/tiny"})
    models = ModelManager(tmp_path / "m", catalogue, offline=True, hf_cache=tmp_path / "hf")
    assert models.download("tiny").state == ModelState.PRESENT
    assert models.verify("tiny") == [] and server.requests == []
    # a blob whose content does not match its name is not trusted
    (repo / "blobs" / sha(WEIGHTS)).write_bytes(WEIGHTS[::-1])
    with pytest.raises(ModelMissing):
        ModelManager(tmp_path / "n", catalogue, offline=True, hf_cache=tmp_path / "hf").download(
            "tiny"
        )


def test_remove_frees_the_space(server: FileServer, tmp_path: Path) -> None:
    models = ModelManager(tmp_path / "m", spec(server.url, sha256=sha(WEIGHTS)))
    models.download("tiny")
    assert models.remove("tiny") == len(WEIGHTS)
    assert models.status("tiny").state == ModelState.MISSING


def test_the_built_in_catalogue_is_valid() -> None:
    catalogue = load_catalogue()
    assert len(catalogue) >= 6
    for model in catalogue.values():
        assert model.licence and model.files
        weights = [f for f in model.files if not f.trust_on_first_use]
        assert weights, model.name  # every model has weights that must be verified
        for file in weights:  # no pickles, except a flagged checkpoint its loader re-hashes
            assert file.path.endswith((".safetensors", ".onnx")) or file.pickle, model.name


def test_the_models_command_lists_and_downloads_from_a_hub_mirror(
    server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    """The built-in catalogue's depth model, served by a mirror (HF_ENDPOINT) that
    sends the LFS hash as Hugging Face does; the files are small stand-ins."""
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hf-cache"))
    spec_ = load_catalogue()["depth-anything-small"]
    for file in spec_.files:
        path = f"/{spec_.hub_repo}/resolve/{spec_.revision}/{file.path}"
        body = WEIGHTS if file.path.endswith(".safetensors") else CONFIG
        server.files[path] = body
        if not file.trust_on_first_use:
            server.headers[path] = {"X-Linked-Etag": f'"{sha(body)}"'}

    assert main(["models", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    row = next(m for m in listed["models"] if m["name"] == "depth-anything-small")
    assert row["state"] == "missing" and row["licence"] == "Apache-2.0"
    assert main(["models", "download", "depth-anything-small", "--offline"]) == 2
    assert "offline mode" in capsys.readouterr().err and server.requests == []

    assert main(["models", "download", "depth-anything-small"]) == 0
    assert "depth-anything-small: present" in capsys.readouterr().out
    assert main(["models", "verify", "depth-anything-small"]) == 0
    assert capsys.readouterr().out.strip() == "depth-anything-small: ok"
    assert main(["models", "list"]) == 0
    listed = capsys.readouterr().out
    assert "present" in listed.split("depth-anything-small")[1].splitlines()[0]
    rows = listed.splitlines()[1:]  # one column each, aligned even for a long licence
    states = {max(row.find(" missing "), row.find(" present ")) for row in rows}
    assert len(rows) == len(load_catalogue()) and len(states) == 1 and states != {-1}
    assert main(["models", "remove", "depth-anything-small"]) == 0
    assert main(["models", "download", "no-such-model"]) == 2


def test_a_file_changed_in_place_at_the_same_size_is_caught(
    server: FileServer, tmp_path: Path
) -> None:
    """The lock remembers each verified file's size and modification time; a file that
    differs in either is hashed again: the same size with other bytes is corrupt, the
    same bytes touched again stay present."""
    models = ModelManager(tmp_path / "models", spec(server.url, sha256=sha(WEIGHTS)))
    models.download("tiny")
    target = models.folder("tiny") / "weights.bin"
    os.utime(target, ns=(1, 1))  # touched, same bytes
    assert models.status("tiny").state == ModelState.PRESENT
    assert (
        json.loads((models.folder("tiny") / "layerpath-model.json").read_text())["files"][
            "weights.bin"
        ]["mtime_ns"]
        == 1
    )
    changed = bytearray(WEIGHTS)
    changed[1000] ^= 0xFF
    target.write_bytes(bytes(changed))  # the same size, other bytes
    assert models.status("tiny").state == ModelState.CORRUPT


def test_a_pickle_is_loaded_only_with_a_catalogue_hash(server: FileServer, tmp_path: Path) -> None:
    """A pickled checkpoint verified by the hub's hash when downloaded: editing it and
    the lock beside it does not make it pass, and a tool whose checkpoint is a pickle
    the catalogue pins no hash for is unavailable, naming the safe alternative."""
    from layerpath.tools.registry import Registry

    server.headers["/weights.bin"] = {"X-Linked-Etag": f'"{sha(WEIGHTS)}"'}
    models = ModelManager(tmp_path / "models", spec(server.url, pickle=True))
    models.download("tiny")
    assert models.verify("tiny") == ["weights.bin: no sha256 in the catalogue"]
    pinned = ModelManager(tmp_path / "models", spec(server.url, pickle=True, sha256=sha(WEIGHTS)))
    assert pinned.verify("tiny") == []
    tampered = b"cos\nsystem\n(S'echo owned'\ntR." + WEIGHTS[30:]
    (models.folder("tiny") / "weights.bin").write_bytes(tampered)
    lock = models.folder("tiny") / "layerpath-model.json"
    record = json.loads(lock.read_text())
    record["files"]["weights.bin"]["sha256"] = sha(tampered)
    lock.write_text(json.dumps(record))
    assert pinned.verify("tiny") == ["weights.bin: sha256 does not match"]
    registry = Registry.from_catalogue()
    found = registry.get("yolo_ultralytics").availability()  # ultralytics unpickles it whole
    assert not found.ok and "pickle" in found.reason and "ONNX or safetensors" in found.fix
    sam = registry.get("segment_anything_sam").availability()  # torch, weights only: no code
    assert "pickle" not in sam.reason

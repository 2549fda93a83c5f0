"""The model manager: which weight files the model-based tools need, where they live,
and getting them there safely.

The catalogue (tools/data/models.json) lists each model's files with their source (a
URL, or a Hugging Face repo + revision), size, sha256 and licence. Files live in the
cache folder (settings.model_dir, default <data dir>/models) as <model>/<file>.
Downloads resume (`.part` + an HTTP Range request), are checked against the sha256
before they are used, and report progress through a callback. A file that is already
in the Hugging Face cache is reused instead of downloaded. In offline mode nothing
touches the network. Nothing here runs at import time.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from layerpath.errors import BadInput, DownloadFailed, ModelMissing
from layerpath.settings import Settings, data_dir

CHUNK = 1 << 20
SHA256 = re.compile(r"^[0-9a-f]{64}$")
TOFU_MAX = 4 << 20  # a trust-on-first-use file larger than this is not a config file
LOCK = "layerpath-model.json"  # per model folder: the verified files' hashes and sizes

#: (file name, bytes done, bytes total or None)
Progress = Callable[[str, int, int | None], None]


class ModelFileSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str  # relative to the model's folder (and to the hub repo)
    size: int = Field(gt=0)  # bytes; exact when sha256 is given
    sha256: str | None = None  # None: taken from the hub's LFS hash on download
    url: str | None = None  # else built from the model's hub repo and revision
    trust_on_first_use: bool = False  # small text files only: hash recorded, not checked
    # a pickled checkpoint (ultralytics .pt): unpickling it can run code, so it is loaded
    # only when the catalogue pins its sha256, and re-hashed against that first...
    pickle: bool = False
    # ...unless its loader unpickles tensors only (torch.load(weights_only=True)), which
    # runs no code: then it is verified like any other file
    weights_only: bool = False

    @property
    def runs_code(self) -> bool:
        """Whether loading the file can run code it holds."""
        return self.pickle and not self.weights_only


class ModelSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    licence: str
    tools: tuple[str, ...] = ()
    hub_repo: str | None = None
    revision: str = "main"
    files: tuple[ModelFileSpec, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    def url(self, file: ModelFileSpec, hub: str) -> str:
        if file.url:
            return file.url
        if not self.hub_repo:
            raise BadInput(f"Model {self.name}: file {file.path} has no source.")
        return f"{hub.rstrip('/')}/{self.hub_repo}/resolve/{self.revision}/{file.path}"


class ModelState(str, Enum):
    MISSING = "missing"
    PARTIAL = "partial"  # a download was cut; `download` resumes it
    PRESENT = "present"  # every file there, hashes checked when it was downloaded
    CORRUPT = "corrupt"  # a file's size no longer matches what was verified


@dataclass(frozen=True)
class ModelStatus:
    spec: ModelSpec
    state: ModelState
    folder: Path
    bytes_on_disk: int


def load_catalogue(path: Path | None = None) -> dict[str, ModelSpec]:
    """The built-in model catalogue, or another file of the same shape."""
    if path is None:
        text = resources.files("layerpath.tools").joinpath("data/models.json").read_text()
    else:
        text = Path(path).read_text(encoding="utf-8")
    try:
        specs = [ModelSpec.model_validate(m) for m in json.loads(text)["models"]]
    except (ValueError, KeyError, ValidationError) as exc:
        raise BadInput(f"The model catalogue is not valid: {exc}") from exc
    return {s.name: s for s in specs}


def default_hf_cache() -> Path:
    """Where huggingface_hub keeps its downloads (HF_HUB_CACHE, HF_HOME, ~/.cache)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "huggingface"
    )
    return Path(home) / "hub"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


class ModelManager:
    """Lists, downloads, verifies and removes the catalogue's models in one cache folder."""

    def __init__(
        self,
        cache: Path,
        catalogue: dict[str, ModelSpec] | None = None,
        *,
        offline: bool = False,
        hub: str | None = None,
        hf_cache: Path | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        self.cache = Path(cache)
        self.catalogue = load_catalogue() if catalogue is None else catalogue
        self.offline = offline
        # HF_ENDPOINT: the Hugging Face convention for a mirror
        self.hub = hub or os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
        self.hf_cache = default_hf_cache() if hf_cache is None else hf_cache
        self.timeout_s = timeout_s

    @classmethod
    def from_settings(cls, settings: Settings) -> ModelManager:
        cache = Path(settings.model_dir) if settings.model_dir else data_dir() / "models"
        return cls(cache, offline=settings.offline)

    # --- what is here --------------------------------------------------------------------

    def spec(self, name: str) -> ModelSpec:
        if name not in self.catalogue:
            known = ", ".join(sorted(self.catalogue)) or "none"
            raise BadInput(f"No model named {name!r}. Known models: {known}.")
        return self.catalogue[name]

    def folder(self, name: str) -> Path:
        return self.cache / name

    def _lock(self, name: str) -> dict[str, dict[str, object]]:
        path = self.folder(name) / LOCK
        try:
            files = json.loads(path.read_text(encoding="utf-8"))["files"]
            return dict(files)
        except (OSError, ValueError, KeyError):
            return {}

    def _write_lock(self, name: str, files: dict[str, dict[str, object]]) -> None:
        path = self.folder(name) / LOCK
        path.write_text(json.dumps({"files": files}, indent=2), encoding="utf-8")

    def status(self, name: str) -> ModelStatus:
        spec = self.spec(name)
        folder = self.folder(name)
        lock = self._lock(name)
        on_disk, states = 0, []
        for file in spec.files:
            target, part = folder / file.path, folder / f"{file.path}.part"
            if target.exists():
                on_disk += target.stat().st_size
                ok = self._still_verified(file, target, lock)
                states.append(ModelState.PRESENT if ok else ModelState.CORRUPT)
            elif part.exists():
                on_disk += part.stat().st_size
                states.append(ModelState.PARTIAL)
            else:
                states.append(ModelState.MISSING)
        if lock != self._lock(name):  # re-hashed files that still match: remembered
            try:
                self._write_lock(name, lock)
            except OSError:  # (a shared, read-only model folder: hashed again next time)
                pass
        if all(s == ModelState.PRESENT for s in states):
            state = ModelState.PRESENT
        elif ModelState.CORRUPT in states:
            state = ModelState.CORRUPT
        elif ModelState.PARTIAL in states or ModelState.PRESENT in states:
            state = ModelState.PARTIAL
        else:
            state = ModelState.MISSING
        return ModelStatus(spec, state, folder, on_disk)

    @staticmethod
    def _still_verified(
        file: ModelFileSpec, target: Path, lock: dict[str, dict[str, object]]
    ) -> bool:
        """Whether the file is still the one verified: the same size and modification
        time as when it was hashed, or else hashed again (a file changed in place at the
        same size is caught). A file that matches again has its time recorded anew."""
        verified = lock.get(file.path)
        if verified is None:
            return False
        stat = target.stat()
        if verified.get("size") == stat.st_size and verified.get("mtime_ns") == stat.st_mtime_ns:
            return True
        expected = file.sha256 or verified.get("sha256")
        if verified.get("size") != stat.st_size or sha256_of(target) != expected:
            return False
        lock[file.path] = {**verified, "mtime_ns": stat.st_mtime_ns}
        return True

    def statuses(self) -> list[ModelStatus]:
        return [self.status(name) for name in sorted(self.catalogue)]

    def require(self, name: str) -> Path:
        """The model's folder, for a tool's loader; a clear error when it is not here."""
        status = self.status(name)
        if status.state != ModelState.PRESENT:
            raise ModelMissing(
                f"The model {name} ({human_size(status.spec.size)}) is {status.state.value}. "
                f"Download it with: layerpath models download {name}"
            )
        return status.folder

    # --- getting it ----------------------------------------------------------------------

    def download(self, name: str, progress: Progress | None = None) -> ModelStatus:
        """Fetch every missing file (resuming cut downloads), check each sha256, and
        record the verified hashes. A failed check deletes the file; nothing unverified
        is ever left under its final name."""
        spec = self.spec(name)
        folder = self.folder(name)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DownloadFailed(f"Cannot create the model folder {folder}: {exc}.") from exc
        lock = self._lock(name)
        try:
            for file in spec.files:
                target = folder / file.path
                if target.exists() and file.path in lock:
                    continue
                if target.exists():  # there but never verified (copied in by hand)
                    self._accept(spec, file, target, None, lock)
                    continue
                if self._reuse_hf_cache(spec, file, target, lock):
                    continue
                if self.offline:
                    raise ModelMissing(
                        f"The model {name} is not downloaded and layerpath is in offline mode. "
                        f"Turn offline mode off, or copy its files into {folder}."
                    )
                self._fetch(spec, file, target, progress, lock)
        finally:  # every file verified so far counts, even when a later one fails
            self._write_lock(name, lock)
        return self.status(name)

    def _reuse_hf_cache(
        self, spec: ModelSpec, file: ModelFileSpec, target: Path, lock: dict[str, dict[str, object]]
    ) -> bool:
        """Link (or copy) a file from the Hugging Face cache when its hash matches: the
        catalogue's sha256, or for LFS files the cache's own blob name (which is the
        file's sha256). The snapshot of the model's revision is preferred."""
        if not spec.hub_repo:
            return False
        repo = self.hf_cache / f"models--{spec.hub_repo.replace('/', '--')}"
        if not repo.is_dir():
            return False
        ref = repo / "refs" / spec.revision
        commit = ref.read_text(encoding="utf-8").strip() if ref.is_file() else spec.revision
        candidates = sorted(repo.glob(f"snapshots/*/{file.path}"))
        candidates.sort(key=lambda c: c.parent.name != commit)  # the revision's first
        for candidate in candidates:
            blob = candidate.resolve().name
            expected = file.sha256 or (blob if SHA256.match(blob) else None)
            if expected is None or sha256_of(candidate) != expected:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.symlink(candidate.resolve(), target)
            except OSError:
                shutil.copyfile(candidate, target)
            stat = target.stat()
            lock[file.path] = {
                "sha256": expected,
                "size": stat.st_size,
                "mtime_ns": stat.st_mtime_ns,
                "source": str(candidate),
            }
            return True
        return False

    def _fetch(
        self,
        spec: ModelSpec,
        file: ModelFileSpec,
        target: Path,
        progress: Progress | None,
        lock: dict[str, dict[str, object]],
    ) -> None:
        url = spec.url(file, self.hub)
        part = target.with_name(target.name + ".part")
        target.parent.mkdir(parents=True, exist_ok=True)
        done = part.stat().st_size if part.exists() else 0
        free = shutil.disk_usage(target.parent).free
        if file.size - done > free:
            raise DownloadFailed(
                f"Not enough disk space for {spec.name}: {file.path} needs "
                f"{human_size(file.size - done)} more, {target.parent} has {human_size(free)} "
                f"free. Free some space or choose another model folder in Settings."
            )
        import http.client  # (only a download needs the network's modules: an edit
        import urllib.error  # starts without them)
        import urllib.request

        request = urllib.request.Request(url, headers={"User-Agent": "layerpath"})
        if done:
            request.add_header("Range", f"bytes={done}-")
        hub_sha: str | None = None
        length: str | None = None
        total = file.size
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                hub_sha = _hub_sha256(response.headers)
                if done and response.status != 206:  # the server ignored the range
                    done = 0
                length = response.headers.get("Content-Length")
                total = done + int(length) if length is not None else file.size
                with part.open("ab" if done else "wb") as out:
                    while block := response.read(CHUNK):
                        out.write(block)
                        done += len(block)
                        if progress is not None:
                            progress(file.path, done, total)
        except urllib.error.HTTPError as exc:
            raise DownloadFailed(
                f"Downloading {spec.name} failed: {url} answered {exc.code} {exc.reason}."
            ) from exc
        except (urllib.error.URLError, http.client.HTTPException, TimeoutError) as exc:
            raise self._interrupted(spec, url, exc, done) from exc
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise DownloadFailed(
                    f"The disk is full while downloading {spec.name} into {target.parent}. "
                    f"Free some space and run the command again; it resumes where it stopped."
                ) from exc
            if isinstance(exc, ConnectionError):
                raise self._interrupted(spec, url, exc, done) from exc
            raise DownloadFailed(f"Cannot write {part}: {exc}.") from exc
        expected_total = total if length is not None else (file.size if file.sha256 else None)
        if expected_total is not None and done < expected_total:
            raise self._interrupted(spec, url, "the connection closed early", done)
        self._accept(spec, file, part, hub_sha, lock, final=target)

    @staticmethod
    def _interrupted(spec: ModelSpec, url: str, why: object, done: int) -> DownloadFailed:
        then = (
            f"{human_size(done)} are kept; run the command again to resume."
            if done
            else "Check the network connection, or use offline mode and copy the files in."
        )
        return DownloadFailed(f"Could not download {spec.name} from {url} ({why}). {then}")

    def _accept(
        self,
        spec: ModelSpec,
        file: ModelFileSpec,
        path: Path,
        hub_sha: str | None,
        lock: dict[str, dict[str, object]],
        final: Path | None = None,
    ) -> None:
        """Check the file's sha256 against the catalogue (or the hub's LFS hash) and
        record it; a mismatch or a file with no known hash is deleted, never used."""
        actual = sha256_of(path)
        expected = file.sha256 or hub_sha
        if expected is None and file.trust_on_first_use and path.stat().st_size <= TOFU_MAX:
            expected = actual
        if expected is None:
            path.unlink(missing_ok=True)
            raise DownloadFailed(
                f"{spec.name}: {file.path} has no known sha256 (the catalogue gives none and "
                f"the server sent none), so it cannot be verified and was not kept."
            )
        if actual != expected:
            path.unlink(missing_ok=True)
            raise DownloadFailed(
                f"{spec.name}: {file.path} is damaged or not the expected file (sha256 "
                f"{actual[:12]}…, expected {expected[:12]}…). It was deleted; download it again."
            )
        if final is not None:
            os.replace(path, final)
            path = final
        stat = path.stat()
        lock[file.path] = {"sha256": actual, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}

    # --- checking and removing -----------------------------------------------------------

    def verify(self, name: str) -> list[str]:
        """Re-hash every file; the problems found (empty when all is well). A pickled
        checkpoint is checked against the catalogue's sha256 only: the lock file beside
        it could be edited along with it."""
        spec = self.spec(name)
        lock = self._lock(name)
        problems = []
        for file in spec.files:
            target = self.folder(name) / file.path
            recorded = None if file.runs_code else lock.get(file.path, {}).get("sha256")
            expected = file.sha256 or recorded
            if not target.exists():
                problems.append(f"{file.path}: missing")
            elif expected is None:
                problems.append(
                    f"{file.path}: no sha256 in the catalogue"
                    if file.runs_code
                    else f"{file.path}: no known sha256"
                )
            elif sha256_of(target) != expected:
                problems.append(f"{file.path}: sha256 does not match")
        return problems

    def remove(self, name: str) -> int:
        """Delete the model's folder; the bytes freed."""
        status = self.status(name)
        if status.folder.exists():
            shutil.rmtree(status.folder)
        return status.bytes_on_disk


def _hub_sha256(headers: object) -> str | None:
    """Hugging Face sends an LFS file's sha256 as X-Linked-Etag (or ETag)."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for key in ("X-Linked-Etag", "ETag"):
        value = (get(key) or "").strip().strip('"').removeprefix("W/").strip('"').lower()
        if SHA256.match(value):
            return value
    return None

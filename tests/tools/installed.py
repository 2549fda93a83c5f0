"""Models a test built, installed the way downloaded weights are: the files lie in the
model's folder and `download` (offline) accepts them only because their sha256 matches
the catalogue entry made from them."""

from __future__ import annotations

import hashlib
from pathlib import Path

from layerpath.tools.models import ModelManager, ModelSpec, ModelState, load_catalogue


def install_built(cache: Path, name: str, also: ModelManager | None = None) -> ModelManager:
    """A manager over `cache` whose catalogue is the built-in one (or `also`'s, to install
    several), with `name` describing exactly the files now in cache/name; the model is
    then present."""
    folder = cache / name
    files = [
        {
            "path": str(path.relative_to(folder)),
            "size": path.stat().st_size,
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "url": "http://127.0.0.1:9/unused",
        }
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    ]
    catalogue = dict(also.catalogue) if also is not None else load_catalogue()
    catalogue[name] = ModelSpec.model_validate(
        {**catalogue[name].model_dump(), "files": files, "hub_repo": None}
    )
    models = ModelManager(cache, catalogue, offline=True)
    assert models.download(name).state == ModelState.PRESENT
    return models


def save_word_tokenizer(folder: Path, words: list[str], **special: str) -> None:
    """A whitespace word-level tokenizer over `words` (the test's whole vocabulary), saved
    as tokenizer.json beside a model so AutoTokenizer loads it like a real one."""
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, "[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]", **special
    ).save_pretrained(folder)

"""API keys live in the OS keyring (via `keyring`), never in files, logs or traces."""

from __future__ import annotations

import keyring
import keyring.errors

SERVICE = "layerpath"
#: the keys this process has read, so no message, report or log line shows them (a
#: server may echo the key it refused in its error message)
_SEEN: set[str] = set()


def _user(base_url: str) -> str:
    return f"llm:{base_url}"


def get_api_key(base_url: str) -> str | None:
    """The key stored for this endpoint, or None (also when no keyring backend works)."""
    try:
        key = keyring.get_password(SERVICE, _user(base_url))
    except keyring.errors.KeyringError:
        return None
    if key:
        remember_secret(key)
    return key


def remember_secret(key: str) -> None:
    """Have `redact` hide this key from now on."""
    if len(key) >= 6:  # (a short 'key' would blot out ordinary words)
        _SEEN.add(key)


def redact(text: str) -> str:
    """`text` with every key this process has read replaced by [API key]."""
    for key in sorted(_SEEN, key=len, reverse=True):
        text = text.replace(key, "[API key]")
    return text


def set_api_key(base_url: str, key: str) -> None:
    """Store the key for this endpoint in the OS keyring."""
    remember_secret(key)
    keyring.set_password(SERVICE, _user(base_url), key)


def delete_api_key(base_url: str) -> None:
    try:
        keyring.delete_password(SERVICE, _user(base_url))
    except keyring.errors.PasswordDeleteError:
        pass

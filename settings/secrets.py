"""API keys live in the OS keyring (via `keyring`), never in files, logs or traces."""

from __future__ import annotations

import keyring
import keyring.errors

SERVICE = "layerpath"


def _user(base_url: str) -> str:
    return f"llm:{base_url}"


def get_api_key(base_url: str) -> str | None:
    """The key stored for this endpoint, or None (also when no keyring backend works)."""
    try:
        return keyring.get_password(SERVICE, _user(base_url))
    except keyring.errors.KeyringError:
        return None


def set_api_key(base_url: str, key: str) -> None:
    """Store the key for this endpoint in the OS keyring."""
    keyring.set_password(SERVICE, _user(base_url), key)


def delete_api_key(base_url: str) -> None:
    try:
        keyring.delete_password(SERVICE, _user(base_url))
    except keyring.errors.PasswordDeleteError:
        pass

"""API keys live in the OS keyring (via `keyring`), never in files, logs or traces.
`keyring` is imported when a key is read or stored (an edit with no LLM never loads it)."""

from __future__ import annotations

SERVICE = "layerpath"
#: the keys this process has read, so no message, report or log line shows them (a
#: server may echo the key it refused in its error message)
_SEEN: set[str] = set()


def _user(base_url: str) -> str:
    return f"llm:{base_url}"


def get_api_key(base_url: str) -> str | None:
    """The key stored for this endpoint, else OPENAI_API_KEY where it may go (OpenAI's
    own API, or the endpoint OPENAI_BASE_URL names: settings/endpoints.py), or None
    (also when no keyring backend works and the environment has none)."""
    from layerpath.settings.endpoints import environment_key

    key = stored_api_key(base_url) or environment_key(base_url)
    if key:
        remember_secret(key)
    return key


#: where a key comes from, as key_source says it
FROM_KEYRING, FROM_ENVIRONMENT = "stored in the OS keyring", "from OPENAI_API_KEY"


def key_source(base_url: str) -> str | None:
    """Where the key for this endpoint comes from, in words (never the key): the OS
    keyring, OPENAI_API_KEY, or None for none."""
    from layerpath.settings.endpoints import environment_key

    if stored_api_key(base_url):
        return FROM_KEYRING
    if environment_key(base_url):
        return FROM_ENVIRONMENT
    return None


def stored_api_key(base_url: str) -> str | None:
    """The key stored for this endpoint in the OS keyring, or None (also when no
    keyring backend works, or keyring is not installed)."""
    try:
        import keyring
        import keyring.errors
    except ImportError:
        return None

    try:
        key = keyring.get_password(SERVICE, _user(base_url))
    except keyring.errors.KeyringError:
        return None
    if key:
        remember_secret(key)
    return key or None


def missing_key(base_url: str) -> str | None:
    """Why no API key can be given to this endpoint, in words a user can act on (None
    when one is stored): no keyring backend works on this machine, or none is stored."""
    from layerpath.settings.endpoints import environment_key

    if environment_key(base_url):
        return None
    if not keyring_installed():
        return (
            "No API key could be read: keyring is not installed (pip install "
            "'layerpath[llm]'); or set OPENAI_API_KEY for OpenAI."
        )
    import keyring
    import keyring.errors

    try:
        key = keyring.get_password(SERVICE, _user(base_url))
    except keyring.errors.KeyringError:
        return (
            "No API key could be read: no keyring works on this machine. Start your "
            "desktop's keyring (GNOME Keyring, KWallet), or pip install keyrings.alt for "
            "one kept in a file, then store the key with `layerpath config set-key` or in "
            "Settings > LLM (or set OPENAI_API_KEY for OpenAI)."
        )
    if key:
        return None
    return (
        f"No API key is stored for {base_url}; store one with `layerpath config set-key` "
        "or in Settings > LLM (it is kept in the OS keyring)."
    )


def remember_secret(key: str) -> None:
    """Have `redact` hide this key from now on."""
    if len(key) >= 6:  # (a short 'key' would blot out ordinary words)
        _SEEN.add(key)


def redact(text: str) -> str:
    """`text` with every key this process has read replaced by [API key]."""
    for key in sorted(_SEEN, key=len, reverse=True):
        text = text.replace(key, "[API key]")
    return text


def keyring_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("keyring") is not None


def set_api_key(base_url: str, key: str) -> None:
    """Store the key for this endpoint in the OS keyring (a clear error when keyring,
    part of layerpath[llm], is not installed, or no keyring works on this machine)."""
    from layerpath.errors import BadInput

    if not keyring_installed():
        raise BadInput("Storing an API key needs keyring: pip install 'layerpath[llm]'.")
    import keyring
    import keyring.errors

    remember_secret(key)
    try:
        keyring.set_password(SERVICE, _user(base_url), key)
    except keyring.errors.KeyringError as exc:
        raise BadInput(
            f"The OS keyring could not store the key ({type(exc).__name__}). Start your "
            "desktop's keyring (GNOME Keyring, KWallet), or pip install keyrings.alt for one "
            "kept in a file; for OpenAI, OPENAI_API_KEY in the environment works too."
        ) from exc


def delete_api_key(base_url: str) -> None:
    if not keyring_installed():
        return
    import keyring
    import keyring.errors

    try:
        keyring.delete_password(SERVICE, _user(base_url))
    except keyring.errors.PasswordDeleteError:
        pass

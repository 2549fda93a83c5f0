"""`layerpath config`: the LLM server the planner asks, its API key (stored in the OS
keyring, read without echo, never printed), and the settings at a glance."""

from __future__ import annotations

import argparse
import getpass
import sys

from layerpath.errors import BadInput
from layerpath.settings import load_settings, save_settings
from layerpath.settings.endpoints import (
    chosen,
    endpoint_url,
    forget,
    preset_named,
    recalled,
)


def cmd_config(args: argparse.Namespace) -> int:
    settings = load_settings()
    if args.action == "show":
        llm = chosen(settings.llm)
        print(f"planner: {settings.planner}")
        moved = " (from OPENAI_BASE_URL)" if llm.base_url != settings.llm.base_url else ""
        print(f"LLM server: {llm.base_url}{moved}")
        print(f"LLM model: {llm.model}")
        print(f"picture shown to the LLM: {llm.vision}")
        print(f"API key: {_key_state(llm.base_url)}")
        found = recalled(llm.base_url, llm.model)
        if found:  # what the server was found to take (asked again after a day)
            takes = {"json_schema": "the plan's JSON schema", "json_object": "any JSON object",
                     "text": "words only"}.get(str(found.get("format")), "?")  # fmt: skip
            pictures = {True: "yes", False: "no"}.get(found.get("images"), "not asked yet")
            print(f"found at the server: answers {takes}; takes a picture: {pictures}")
        return 0
    if args.action == "forget":
        print(f"forgot what {forget()} servers were found to take; they are asked again")
        return 0
    if args.action == "endpoint":
        llm = chosen(settings.llm, args.endpoint, args.model)
        saved = settings.model_copy(update={"planner": "llm", "llm": llm})
        path = save_settings(saved)
        print(f"The LLM planner now asks {llm.model} at {llm.base_url} (saved in {path}).")
        preset = preset_named(args.endpoint)
        if preset is not None:
            print(preset.hint)
            if preset.key and _key_state(llm.base_url) == "none stored":
                print("Store its key with: layerpath config set-key")
        return 0
    # (the server `show` names: OPENAI_BASE_URL's when the settings name none)
    base_url = endpoint_url(args.endpoint)[0] if args.endpoint else chosen(settings.llm).base_url
    from layerpath.settings.secrets import delete_api_key, keyring_installed, set_api_key

    if not keyring_installed():
        raise BadInput("Keeping an API key needs keyring: pip install 'layerpath[llm]'.")
    if args.action == "delete-key":
        delete_api_key(base_url)
        print(f"No key is stored for {base_url} now.")
        return 0
    if args.stdin:
        key = sys.stdin.readline().strip()
    else:
        key = getpass.getpass(f"API key for {base_url} (not shown): ").strip()
    if not key:
        raise BadInput("No key was given; nothing was stored.")
    set_api_key(base_url, key)  # (a keyring that cannot store it: a clear error)
    print(f"Stored the key for {base_url} in the OS keyring.")
    return 0


def _key_state(base_url: str) -> str:
    """Whether a key would go to this server, and from where (never the key)."""
    from layerpath.settings.secrets import key_source

    return key_source(base_url) or "none stored"

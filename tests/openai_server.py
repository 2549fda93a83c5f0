"""An OpenAI-compatible HTTP server on 127.0.0.1 with scripted answers, for tests of the
real `openai` client (chat completions, image edits, audio transcriptions, and the model
list for "test connection")."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Trickle:
    """A scripted answer that arrives a byte at a time, for `seconds` in all."""

    seconds: float = 30.0
    every: float = 0.5


class ScriptedServer:
    """Answers each chat completion with the next scripted (status, content)."""

    def __init__(self) -> None:
        #: (status, answer): text is the message's content (or the error's message);
        #: bytes go out as they are (not JSON); a Trickle arrives a byte at a time
        self.script: list[tuple[int, str | bytes | Trickle]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.models = ["test-model"]
        #: how a server unlike OpenAI's answers what it cannot take (a request's body ->
        #: (status, message) of its refusal, or None to answer from the script)
        self.refuses: Callable[[dict[str, Any]], tuple[int, str] | None] = lambda body: None
        #: images.edit answers: the request's form fields -> PNG bytes
        self.painter: Callable[[dict[str, Any]], bytes] = lambda fields: fields["image"]
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path.endswith("/images/edits"):
                    self._image_edit(raw)
                    return
                if self.path.endswith("/audio/transcriptions"):
                    self._transcription(raw)
                    return
                body = json.loads(raw)
                server.requests.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                refused = server.refuses(body)
                if refused is not None:
                    self._send(
                        refused[0],
                        {"error": {"message": refused[1], "type": "invalid_request_error"}},
                    )
                    return
                status, content = (
                    server.script.pop(0) if server.script else (500, "script exhausted")
                )
                if isinstance(content, bytes):  # not JSON at all: an HTML page, bytes
                    self._send_raw(status, content, "text/html")
                    return
                if isinstance(content, Trickle):
                    self._trickle(content)
                    return
                if status == 200:
                    payload = {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": content},
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                else:
                    payload = {"error": {"message": content, "type": "server_error"}}
                self._send(status, payload)

            def _form(self, raw: bytes) -> dict[str, Any]:
                """A multipart form's fields (their bytes), as a client posted them."""
                form = BytesParser().parsebytes(
                    b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + raw
                )
                return {
                    part.get_param("name", header="content-disposition"): part.get_payload(
                        decode=True
                    )
                    for part in form.get_payload()
                }

            def _transcription(self, raw: bytes) -> None:
                """audio.transcriptions: the form's fields kept, answered with the next
                scripted text as what was said (or the scripted error)."""
                server.requests.append(self._form(raw))
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                status, content = server.script.pop(0) if server.script else (500, "no script")
                if status == 200:
                    self._send(200, {"text": content})
                else:
                    self._send(status, {"error": {"message": content, "type": "server_error"}})

            def _image_edit(self, raw: bytes) -> None:
                """images.edit: the multipart form's fields, answered by `server.painter`
                (the request's fields -> a PNG) or with the scripted error."""
                fields = self._form(raw)
                server.requests.append(fields)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                status, content = server.script.pop(0) if server.script else (200, "")
                if status == 200:
                    image = base64.b64encode(server.painter(fields)).decode()
                    payload: dict[str, Any] = {"created": 0, "data": [{"b64_json": image}]}
                else:
                    payload = {"error": {"message": content, "type": "server_error"}}
                self._send(status, payload)

            def do_GET(self) -> None:  # noqa: N802
                server.requests.append({"GET": self.path})
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                models = [
                    {"id": m, "object": "model", "created": 0, "owned_by": "test"}
                    for m in server.models
                ]
                self._send(200, {"object": "list", "data": models})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._send_raw(status, json.dumps(payload).encode(), "application/json")

            def _send_raw(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _trickle(self, slow: Trickle) -> None:
                """A JSON answer sent a byte every `slow.every` seconds: each read is
                quick, the whole answer is not."""
                data = b'{"id": "chatcmpl-slow", "choices": []}' + b" " * 10_000
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    for byte in data[: int(slow.seconds / slow.every)]:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(slow.every)
                except OSError:  # the client hung up: what the test wants
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

"""An OpenAI-compatible HTTP server on 127.0.0.1 with scripted answers, for tests of the
real `openai` client (chat completions, image edits, and the model list for "test
connection")."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedServer:
    """Answers each chat completion with the next scripted (status, content)."""

    def __init__(self) -> None:
        self.script: list[tuple[int, str]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.models = ["test-model"]
        #: images.edit answers: the request's form fields -> PNG bytes
        self.painter: Callable[[dict[str, Any]], bytes] = lambda fields: fields["image"]
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path.endswith("/images/edits"):
                    self._image_edit(raw)
                    return
                body = json.loads(raw)
                server.requests.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                status, content = (
                    server.script.pop(0) if server.script else (500, "script exhausted")
                )
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

            def _image_edit(self, raw: bytes) -> None:
                """images.edit: the multipart form's fields, answered by `server.painter`
                (the request's fields -> a PNG) or with the scripted error."""
                form = BytesParser().parsebytes(
                    b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + raw
                )
                fields = {
                    part.get_param("name", header="content-disposition"): part.get_payload(
                        decode=True
                    )
                    for part in form.get_payload()
                }
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
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

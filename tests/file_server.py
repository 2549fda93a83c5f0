"""A static file server on 127.0.0.1 that honours Range requests and can cut a
response short, for tests of the model downloader."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up mid-file (a cancelled download) is expected here."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class FileServer:
    """Serves `files` (URL path -> bytes); `headers` adds response headers per path;
    `cut_after[path] = n` sends only n bytes of the next full response to that path,
    then drops the connection (once); `hold[path] = (n, event)` sends n bytes, then waits
    for the event before sending the rest (once)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.headers: dict[str, dict[str, str]] = {}
        self.cut_after: dict[str, int] = {}
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        self.hold: dict[str, tuple[int, threading.Event]] = {}  # send n bytes, wait, go on
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                path = self.path
                wanted = self.headers.get("Range")
                server.requests.append((path, wanted))
                if path not in server.files:
                    self.send_error(404, "Not Found")
                    return
                data = server.files[path]
                start = int(wanted.removeprefix("bytes=").split("-")[0]) if wanted else 0
                body = data[start:]
                self.send_response(206 if wanted else 200)
                if wanted:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.send_header("Content-Length", str(len(body)))
                for key, value in server.headers.get(path, {}).items():
                    self.send_header(key, value)
                self.end_headers()
                cut = server.cut_after.pop(path, None)
                held = server.hold.pop(path, None)
                if held is not None:
                    self.wfile.write(body[: held[0]])
                    self.wfile.flush()
                    held[1].wait(30)
                    body = body[held[0] :]
                self.wfile.write(body if cut is None else body[:cut])
                if cut is not None:
                    self.wfile.flush()
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FileServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

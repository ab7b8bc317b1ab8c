"""A real HTTP server on 127.0.0.1 serving recorded catalog responses, plus the bad days a provider has."""
import http.server
import threading
import time
from pathlib import Path

SECRET = "test-secret-token-5f2c"


class Handler(http.server.BaseHTTPRequestHandler):
    """Routes: /ok/<file>, /flaky/<file> (429 then 200), /down/<file> (500 always), /truncated/<file>,
    /slow/<file> (headers, then a pause past the client's read timeout), /auth/<file> (Bearer SECRET)."""

    files: dict[str, bytes] = {}
    hits: dict[str, int] = {}
    lock = threading.Lock()

    def log_message(self, *args):  # keep test output clean
        pass

    def _send(self, code: int, body: bytes, headers: dict | None = None, length: int | None = None):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self):  # noqa: N802 (http.server's naming)
        with self.lock:
            self.hits[self.path] = self.hits.get(self.path, 0) + 1
            hit = self.hits[self.path]
        _, mode, name = self.path.split("/", 2)
        body = self.files.get(name.split("?")[0])
        if body is None:
            return self._send(404, b'{"error": "not found"}')
        if mode == "ok":
            return self._send(200, body)
        if mode == "flaky":
            return self._send(429, b'{"error": "slow down"}', {"Retry-After": "1"}) if hit == 1 else self._send(200, body)
        if mode == "down":
            return self._send(500, b'{"error": "internal"}')
        if mode == "truncated":
            self._send(200, body[: len(body) // 2], length=len(body))
            self.close_connection = True
            return None
        if mode == "slow":
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:10])
            self.wfile.flush()
            time.sleep(3)
            try:
                self.wfile.write(body[10:])
            except OSError:
                pass
            return None
        if mode == "auth":
            if self.headers.get("Authorization") != f"Bearer {SECRET}":
                return self._send(401, b'{"error": "unauthorized"}')
            return self._send(200, body)
        return self._send(404, b'{"error": "no such mode"}')


class FixtureServer:
    """Start on a free port; `url(mode, name)` addresses a file; stop() shuts it down."""

    def __init__(self, files: dict[str, Path]):
        handler = type("BoundHandler", (Handler,), {"files": {k: p.read_bytes() for k, p in files.items()}, "hits": {}})
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.handler = handler
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, mode: str, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/{mode}/{name}"

    def replace(self, name: str, body: bytes) -> None:
        self.handler.files[name] = body

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

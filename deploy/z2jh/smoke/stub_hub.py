"""A stand-in for the hub's REST API, inside the image's container (``make image-test``).

jupyterhub-singleuser asks the hub who a request's token belongs to (``GET /hub/api/user``).
With no network there is no hub, so this answers on 127.0.0.1:8081, inside the container: the
token in ``STUB_USER_TOKEN`` is the user ``jovyan`` with access to their own server, any other
token is refused (403). Activity reports are accepted. Nothing else.
"""

from __future__ import annotations

import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

USER = os.environ.get("JUPYTERHUB_USER", "jovyan")
TOKEN = os.environ["STUB_USER_TOKEN"]


class Handler(BaseHTTPRequestHandler):
    def _reply(self, status: int, body: dict) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-JupyterHub-Version", "6.1.1")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):
        if self.path.split("?")[0].rstrip("/") == "/hub/api/user":
            auth = self.headers.get("Authorization", "")
            if auth in (f"token {TOKEN}", f"bearer {TOKEN}", f"Bearer {TOKEN}"):
                self._reply(200, {"kind": "user", "name": USER, "admin": False, "groups": [], "session_id": None,
                                  "scopes": [f"access:servers!user={USER}", f"read:users:name!user={USER}"]})
            else:
                self._reply(403, {"status": 403, "message": "token not recognised"})
        elif self.path.rstrip("/") == "/hub/api":
            self._reply(200, {"version": "6.1.1"})
        else:
            self._reply(404, {"status": 404, "message": "not in the stub"})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith(f"/hub/api/users/{USER}/activity"):
            self._reply(200, {})
        else:
            self._reply(404, {"status": 404, "message": "not in the stub"})

    def log_message(self, fmt, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", 8081), Handler).serve_forever()

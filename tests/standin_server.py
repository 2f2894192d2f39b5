"""A stand-in for the model server, for the tests of `LocalServer`'s checks: it answers `/v1/models`
like the real one and then, on a completion, does what its mode says.

    python tests/standin_server.py PORT MODE     # MODE: answer | segfault | hang | error
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    mode = "answer"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        print(format % args, flush=True)

    def reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 - http.server's name
        self.reply(200, {"object": "list", "data": [{"id": "standin", "object": "model"}]})

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        print(f"completion asked ({self.mode})", flush=True)
        if self.mode == "segfault":  # what a llama.cpp build for the wrong CPU does: a real fault, which
            ctypes.string_at(0)      # the kernel delivers even where SIGSEGV is blocked or ignored
            os._exit(70)             # never an answer
        if self.mode == "hang":
            time.sleep(3600)
        if self.mode == "error":
            self.reply(500, {"error": {"message": "the model failed to load"}})
            return
        self.reply(200, {"choices": [{"text": " columns", "index": 0, "finish_reason": "length"}]})


if __name__ == "__main__":
    Handler.mode = sys.argv[2]
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()

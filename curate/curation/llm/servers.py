"""Several OpenAI-compatible servers behind one model role: which one takes the next request.

A role's `base_url` may list several servers of the same model (several vLLM servers, llama.cpp
servers, or routers). Each request goes to the live server with the fewest requests in flight, so
a faster server takes more. A server is taken out when it refuses connections (a dead process),
or after `failures_to_take_out` failures in a row of any retryable kind (timeouts, 5xx): its
requests go to the others at once, without spending their retries. After `revive_after` seconds
one request tries it again. With every server out, requests still try the one out the longest,
under the backend's retry policy, so a single server behaves exactly as before.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any


@dataclass
class Server:
    url: str
    client: Any
    in_flight: int = 0
    answered: int = 0
    failed: int = 0
    failures_in_a_row: int = 0
    out_until: float = 0.0
    taken_out: int = 0  # how many times
    reason: str = ""  # why it was last taken out

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {"answered": self.answered, "failed": self.failed, "taken_out": self.taken_out}
        if self.reason:
            out["reason"] = self.reason
        return out


class ServerPool:
    def __init__(self, servers: list[Server], failures_to_take_out: int = 3, revive_after: float = 60.0) -> None:
        if not servers:
            raise ValueError("a model role needs at least one base_url")
        self.servers = servers
        self.failures_to_take_out = max(1, failures_to_take_out)
        self.revive_after = revive_after
        self._lock = threading.Lock()

    def acquire(self, avoid: Server | None = None) -> Server:
        """The server for the next try: live ones first (not `avoid`, which just failed), least busy."""
        with self._lock:
            now = time.monotonic()
            live = [s for s in self.servers if s.out_until <= now]
            choices = [s for s in live if s is not avoid] or live
            if choices:
                server = min(choices, key=lambda s: (s.in_flight, s.answered + s.failed))
            else:  # every server is out: the one out the longest
                server = min(self.servers, key=lambda s: s.out_until)
            server.in_flight += 1
            return server

    def release(self, server: Server, ok: bool, dead: str = "", failure: str = "") -> bool:
        """Count a try's outcome. Returns True when this failure took the server out and another is
        live: the request goes there without spending a retry."""
        with self._lock:
            server.in_flight -= 1
            if ok:
                server.answered += 1
                server.failures_in_a_row = 0
                return False
            server.failed += 1
            server.failures_in_a_row += 1
            if not dead and server.failures_in_a_row < self.failures_to_take_out:
                return False
            now = time.monotonic()
            was_live = server.out_until <= now
            server.out_until = now + self.revive_after
            if was_live:
                server.taken_out += 1
                server.reason = dead or f"{server.failures_in_a_row} failures in a row ({failure})"
            return len(self.servers) > 1 and any(s.out_until <= now for s in self.servers)

    def report(self) -> dict[str, dict[str, Any]]:
        """Per server: requests answered, tries failed, times taken out and why."""
        with self._lock:
            return {s.url: s.report() for s in self.servers}

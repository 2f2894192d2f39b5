"""A request's deadline: `timeout` bounds one try of a request as a whole (connect, send, headers,
body), not each read.

httpx's timeouts are per socket operation, so a server that trickles a valid reply a byte at a
time, or sends its headers and stalls, holds a request for as long as it likes under them. Here
every socket operation of the HTTP client (connect, TLS handshake, each send and each receive)
waits at most until the deadline of the request running on its thread, and one past it raises
httpcore's timeout there: the try ends on time in the thread that made it, httpcore closes its
connection, and no watchdog thread, socket or half-read reply outlives it.

DNS resolution (`getaddrinfo`) is the one step no socket timeout reaches; base URLs are usually
local addresses or resolve at once.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
import urllib.request
from dataclasses import dataclass
from typing import Any, Iterator
from urllib.parse import urlsplit

import httpcore
import httpx

_WRITE_PIECE = 16384  # bytes sent under one look at the clock: a server that reads slowly cannot stretch a send


@dataclass(frozen=True)
class Deadline:
    seconds: float
    at: float  # time.monotonic()

    def left(self) -> float:
        return self.at - time.monotonic()

    @property
    def passed(self) -> bool:
        return self.left() <= 0

    @property
    def reason(self) -> str:
        return f"deadline of {self.seconds:g} s passed"


_current: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar("request_deadline", default=None)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[Deadline]:
    """Every socket operation in this block, on this thread, ends by `seconds` from now."""
    limit = Deadline(seconds, time.monotonic() + seconds)
    token = _current.set(limit)
    try:
        yield limit
    finally:
        _current.reset(token)


def _bounded(timeout: float | None, timed_out: type[Exception]) -> float | None:
    """The operation's own timeout, cut to what is left of the deadline (if one is set)."""
    limit = _current.get()
    if limit is None:
        return timeout
    left = limit.left()
    if left <= 0:  # never hand a socket 0 or less: that is non-blocking mode, not a timeout
        raise timed_out(limit.reason)
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        for start in range(0, len(buffer), _WRITE_PIECE):
            self._inner.write(buffer[start:start + _WRITE_PIECE], _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname,
                                             _bounded(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _bounded(timeout, httpcore.ConnectTimeout),
                                               local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _bounded(timeout, httpcore.ConnectTimeout),
                                                       socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport (proxies, TLS, pooling), its sockets bounded by the thread's deadline."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        pool = self._pool  # httpcore's ConnectionPool (or a proxy pool, a subclass of it)
        if not isinstance(getattr(pool, "_network_backend", None), httpcore.NetworkBackend):
            raise RuntimeError(f"httpx {httpx.__version__} / httpcore {httpcore.__version__}: the connection pool "
                               "has no network backend to bound by a deadline; curate/curation/llm/deadline.py needs updating")
        pool._network_backend = _Backend(pool._network_backend)


def deadline_http_client(base_url: str, **settings: Any) -> httpx.Client:
    """An httpx client for `base_url` whose requests end by the deadline of the thread making them,
    through the proxy the environment names for it (as httpx's default client would)."""
    limits = settings.pop("limits", httpx.Limits(max_connections=1000, max_keepalive_connections=100))
    transport = DeadlineTransport(proxy=environment_proxy(base_url), limits=limits)
    return httpx.Client(transport=transport, follow_redirects=True, **settings)


def environment_proxy(url: str) -> str | None:
    """The proxy that HTTP(S)_PROXY / ALL_PROXY name for `url`, unless NO_PROXY exempts its host."""
    parts = urlsplit(url)
    if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")

"""Content hashes: the same content gives the same id on any machine, in any order."""

from __future__ import annotations

import hashlib
import json
from typing import Any

DIGEST_BYTES = 10  # 80 bits: collisions stay negligible far beyond a billion records


def canonical_json(value: Any) -> bytes:
    """JSON with sorted keys and no whitespace, so equal values hash equally."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


class Hasher:
    """Incremental hash over typed parts (each part is length-prefixed, so ("ab","c") != ("a","bc"))."""

    def __init__(self) -> None:
        self._h = hashlib.blake2b(digest_size=DIGEST_BYTES)

    def bytes(self, data: bytes) -> "Hasher":
        self._h.update(len(data).to_bytes(8, "little"))
        self._h.update(data)
        return self

    def value(self, value: Any) -> "Hasher":
        return self.bytes(canonical_json(value))

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def content_hash(*values: Any) -> str:
    """Hash of JSON-serialisable values."""
    h = Hasher()
    for v in values:
        h.value(v)
    return h.hexdigest()


def file_hash(path: str, chunk: int = 1 << 20) -> str:
    """Hash of a file's bytes (sources are identified by content, not by modification time)."""
    h = hashlib.blake2b(digest_size=DIGEST_BYTES)
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()

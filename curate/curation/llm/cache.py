"""The response cache: SQLite in WAL mode, so several worker processes read and write it at once.

The key hashes the backend's identity (kind, base URL, model, revision), the messages, every
output-affecting parameter and the request's index. Two models never share an answer
(lm-evaluation-harness's bug #2715 shared answers across models), and a finished stage reruns with
zero requests. Only successful replies are stored: an error is retried on the next run.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from curate.curation.hashing import content_hash
from curate.curation.llm.types import ChatRequest, ChatResponse


CACHE_FILE = "llm-cache.sqlite"


def workspace_cache(dataset: Any) -> str:
    """The workspace's response cache (`<workspace>/llm-cache.sqlite`), found from any of its stage
    datasets (`<workspace>/stages/<dataset>`)."""
    return str(dataset.workspace_root / CACHE_FILE)


def cache_key(identity: dict[str, Any], request: ChatRequest, by_tag: bool = False) -> str:
    """`by_tag`: the backend answers by the request's tag (a replay file), so the tag is part of the key."""
    return content_hash("chat", identity, [dict(m) for m in request.messages], request.params, request.index,
                        *([request.tag] if by_tag else []))


class ResponseCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("""CREATE TABLE IF NOT EXISTS responses (
            key TEXT PRIMARY KEY, model TEXT NOT NULL, response TEXT NOT NULL, created REAL NOT NULL)""")

    def get_many(self, keys: list[str]) -> dict[str, ChatResponse]:
        found: dict[str, ChatResponse] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            rows = self._db.execute(f"SELECT key, response FROM responses WHERE key IN ({','.join('?' * len(chunk))})",
                                    chunk).fetchall()
            for key, text in rows:
                data = json.loads(text)
                found[key] = ChatResponse(**data, cached=True)
        return found

    def put(self, key: str, model: str, response: ChatResponse) -> None:
        """Store one reply as soon as it arrives: a killed run loses no finished request."""
        if not response.ok:
            return
        self._db.execute("INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?)",
                         (key, model, json.dumps(response.as_dict(), ensure_ascii=False), time.time()))

    def count(self, model: str | None = None) -> int:
        if model is None:
            return self._db.execute("SELECT count(*) FROM responses").fetchone()[0]
        return self._db.execute("SELECT count(*) FROM responses WHERE model = ?", (model,)).fetchone()[0]

    def close(self) -> None:
        self._db.close()

"""Batch files: a model's requests written down to run where the GPUs are, its replies read back.

A request is written as one line of the OpenAI Batch API's input (`{"custom_id", "method": "POST",
"url": "/v1/chat/completions", "body": {"model", "messages", ...parameters}}`), which vLLM's
`run-batch` reads too. Its `custom_id` is a hash of everything that changes the answer (model,
messages, parameters, the draw's index), so a reply maps back to its request in whatever order the
output comes. The output (`{"custom_id", "response": {"status_code", "body": <chat.completion>},
"error"}`, OpenAI's and vLLM's) is read by `read_outputs`.

`BatchBackend` is the backend of a role that runs in batches: a request whose reply it holds is
answered, any other is appended to the requests file and answered "pending" (a failure, never
cached), so a caller stops where it would stop for a dead server and the next run, with the
replies, goes on. See docs/batch.md.
"""

from __future__ import annotations

import fcntl
import json
import sqlite3
from pathlib import Path
from typing import Any, Callable, Iterable

from curate.curation.hashing import content_hash
from curate.curation.llm.types import PENDING, ChatRequest, ChatResponse

URL = "/v1/chat/completions"
REPLIES_TABLE = "batch_replies"
HOW_TO_RUN = ("run it as a batch (the OpenAI Batch API, or `vllm run-batch -i FILE -o OUTPUT --model MODEL`) "
              "and bring the output back")


class BatchError(ValueError):
    """A batch output that cannot be read: `FILE:LINE: reason`."""


def request_id(model: str, request: ChatRequest) -> str:
    """The request's `custom_id`: one per distinct answer (model, messages, parameters, index)."""
    return "curate-" + content_hash("batch-request", model, [dict(m) for m in request.messages], request.params,
                                    request.index)


def request_line(model: str, request: ChatRequest) -> dict[str, Any]:
    """One line of a batch input file."""
    return {"custom_id": request_id(model, request), "method": "POST", "url": URL,
            "body": {"model": model, "messages": [dict(m) for m in request.messages], **request.params}}


def append_requests(path: Path, lines: Iterable[dict[str, Any]]) -> int:
    """Append the lines whose custom_id the file does not hold yet (under a lock: the parts of a
    stage run in several processes). Returns how many were new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        held = {json.loads(line)["custom_id"] for line in f if line.strip()}
        new = [line for line in lines if line["custom_id"] not in held and not held.add(line["custom_id"])]
        f.seek(0, 2)
        f.write("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in new))
        return len(new)


def is_batch_output(record: Any) -> bool:
    """A line of a batch output (not a replay line `{"sample_id", "reply"}`)."""
    return isinstance(record, dict) and "custom_id" in record and ("response" in record or "error" in record)


def read_outputs(path: str | Path) -> dict[str, ChatResponse]:
    """{custom_id: reply} of a batch output file. A request the batch failed (an error, a status
    other than 200, a body without a message) is a failed reply naming why; a line that is not a
    batch output line stops the read, naming the file and line."""
    path = Path(path)
    out: dict[str, ChatResponse] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise BatchError(f"{path}:{number}: not JSON ({e})") from None
        if not is_batch_output(record) or not isinstance(record["custom_id"], str):
            raise BatchError(f"{path}:{number}: a batch output line is {{\"custom_id\", \"response\": "
                             "{\"status_code\", \"body\"}, \"error\"}")
        out[record["custom_id"]] = output_reply(record, f"{path}:{number}")
    return out


def output_reply(record: dict[str, Any], where: str) -> ChatResponse:
    def failed(kind: str, detail: str) -> ChatResponse:
        return ChatResponse(error=f"{where}: {kind}: {detail}", failure=kind)

    response = record.get("response") or {}
    if record.get("error"):
        return failed("batch error", json.dumps(record["error"], ensure_ascii=False)[:300])
    if not isinstance(response, dict):
        return failed("malformed reply", "`response` is not an object")
    status = response.get("status_code", 200)
    body = response.get("body")
    if status != 200:
        return failed(f"HTTP {status}", json.dumps(body, ensure_ascii=False)[:300])
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return failed("malformed reply", "the body is not a chat completion with choices")
    content = (choices[0].get("message") or {}).get("content")
    if not isinstance(content, str):
        return failed("no content", "the reply's message has no content")
    usage = body.get("usage") or {}
    return ChatResponse(text=content, prompt_tokens=usage.get("prompt_tokens") or 0,
                        completion_tokens=usage.get("completion_tokens") or 0,
                        finish_reason=choices[0].get("finish_reason") or "",
                        raw={"id": body.get("id", ""), "model": body.get("model", ""), "batch": where.rsplit(":", 1)[0]})


def models_named(path: str | Path) -> set[str]:
    """The models a batch output's bodies name (vLLM repeats the request's; OpenAI may add a date)."""
    names = set()
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            body = (json.loads(line).get("response") or {}).get("body") or {}
        except (json.JSONDecodeError, AttributeError):
            continue
        if isinstance(body, dict) and isinstance(body.get("model"), str):
            names.add(body["model"])
    return names


class ReplyStore:
    """A workspace's batch replies by custom_id (a table in its response cache file): brought back by
    `curate build --replies`, read by every role that runs in batches."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"CREATE TABLE IF NOT EXISTS {REPLIES_TABLE} (custom_id TEXT PRIMARY KEY, response TEXT NOT NULL)")

    def put(self, replies: dict[str, ChatResponse]) -> int:
        """Keep the successful replies (a failed one is asked again in the next batch)."""
        rows = [(k, json.dumps(r.as_dict(), ensure_ascii=False)) for k, r in replies.items() if r.ok]
        self._db.executemany(f"INSERT OR REPLACE INTO {REPLIES_TABLE} VALUES (?, ?)", rows)
        return len(rows)

    def get(self, ids: list[str]) -> dict[str, ChatResponse]:
        found: dict[str, ChatResponse] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            for key, text in self._db.execute(f"SELECT custom_id, response FROM {REPLIES_TABLE} WHERE custom_id IN "
                                              f"({','.join('?' * len(chunk))})", chunk):
                found[key] = ChatResponse(**json.loads(text))
        return found

    def close(self) -> None:
        self._db.close()


def bring_back(outputs: list[str | Path], cache_path: str | Path, batches: Path | None = None) -> dict[str, int]:
    """Store batch outputs in a workspace (`cache_path`: its response cache file) and drop the
    answered requests from its pending batch files (`batches/*.jsonl`): what is left there is what
    still waits. Returns counts: replies read, kept (successful), requests still pending."""
    replies: dict[str, ChatResponse] = {}
    for output in outputs:
        replies.update(read_outputs(output))
    store = ReplyStore(cache_path)
    try:
        kept = store.put(replies)
    finally:
        store.close()
    answered = {k for k, r in replies.items() if r.ok}
    pending = 0
    for file in sorted(batches.glob("*.jsonl")) if batches and batches.is_dir() else []:
        with open(file, "r+", encoding="utf-8") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            left = [line for line in f if line.strip() and json.loads(line)["custom_id"] not in answered]
            f.seek(0)
            f.truncate()
            f.write("".join(left))
        pending += len(left)
        if not left:
            file.unlink()
    return {"replies": len(replies), "kept": kept, "pending": pending}


def pending_files(batches: Path) -> dict[str, int]:
    """{file: requests waiting} of a workspace's batch folder."""
    if not batches.is_dir():
        return {}
    return {str(f): sum(1 for line in f.read_text(encoding="utf-8").splitlines() if line.strip())
            for f in sorted(batches.glob("*.jsonl"))}


class BatchBackend:
    """A role that runs in batches: `replies` answers what it holds; anything else is written to
    `requests` (when given) and answered pending, or, without a requests file, failed as "no reply".

    `identity` is the model's own (the live backend's), so a batch reply is cached as that model's
    answer; `model` is the name written into each request's body and hashed into its custom_id."""

    kind = "batch"
    structured_output = "none"

    def __init__(self, model: str, identity: dict[str, Any], requests: str | Path | None = None,
                 replies: Callable[[list[str]], dict[str, ChatResponse]] | dict[str, ChatResponse] | None = None,
                 structured_output: str = "none", source: str = "") -> None:
        self.model, self._identity = model, dict(identity)
        self.requests = Path(requests) if requests else None
        self._replies = replies if callable(replies) else (lambda ids, held=dict(replies or {}):
                                                           {i: held[i] for i in ids if i in held})
        self.structured_output = structured_output
        self.source = source  # where the replies come from, for a message
        self.written = 0  # requests newly written to the file by this backend
        self.matched = 0  # requests answered from `replies`

    def identity(self) -> dict[str, Any]:
        return dict(self._identity)

    def server_report(self) -> None:
        return None

    def complete(self, requests: list[ChatRequest], on_response: Callable[[int, ChatResponse], None] | None = None
                 ) -> list[ChatResponse]:
        ids = [request_id(self.model, r) for r in requests]
        held = self._replies(ids)
        missing = [(i, r) for i, (key, r) in enumerate(zip(ids, requests)) if key not in held]
        self.matched += len(requests) - len(missing)
        if self.source and not self.requests and requests and not self.matched:
            raise BatchError(f"{self.source}: none of {len(requests)} requests has a reply there: were they exported "
                             f"for model {self.model!r} (--model names the model they were), with the same --modes, "
                             "--configs, --temperature and --max-tokens?")
        if self.requests and missing:
            self.written += append_requests(self.requests, (request_line(self.model, r) for _, r in missing))
        out = []
        for i, key in enumerate(ids):
            if key in held:
                response = held[key]
            elif self.requests:
                response = ChatResponse(error=f"pending: waiting for its batch reply; the request is in {self.requests}: "
                                              f"{HOW_TO_RUN}", failure=PENDING, transient=True)
            else:
                response = ChatResponse(error=f"no reply for {key} in {self.source or 'the batch output'} "
                                              f"(requests for model {self.model!r})", failure=PENDING)
            out.append(response)
            if on_response:
                on_response(i, response)
        return out


def export_requests(client: Any, path: str | Path) -> BatchBackend:
    """Turn `client` into one that asks nothing and writes each request still without a reply to
    `path` (written anew): a live model's client, or one replaying a batch output (then what that
    output lacks: the next turn of a multi-turn loop). Returns its BatchBackend (`.written` counts)."""
    Path(path).unlink(missing_ok=True)
    if isinstance(client.backend, BatchBackend):
        client.backend.requests = Path(path)
    else:
        client.backend = BatchBackend(client.identity["model"], client.identity, path,
                                      structured_output=getattr(client.backend, "structured_output", "none"))
    client.preflight = False
    return client.backend

"""Replies read from a file instead of asked of a model.

`curate evaluate RELEASE --backend replay --predictions FILE` scores predictions made elsewhere; a
build's role can answer from one too (`[models.judge] backend = "replay"`, `predictions = "FILE"`).
One JSON object per line: `{"sample_id" or "source_id", "reply"}`, optionally `mode`, `config`,
`task` and `program_output`. A line that is not that stops the run, naming the file, the line and
why. The file decides what is answered: the evaluator scores its lines (`records`) rather than
asking about every sample; a role's request is answered by the line whose id is its `tag`.

A batch output (`{"custom_id", "response": {...}}` per line, OpenAI's or vLLM's `run-batch`'s: the
replies to a `--export-requests` file) is read as such instead: each request is answered by the line
whose custom_id is its own (`curate.curation.llm.batch`), so it is asked as a live model would be
(every selected sample, multi-turn modes included) and a request without a line is not scored.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

from curate.curation.llm.backends import backend
from curate.curation.llm.types import ChatRequest, ChatResponse

# optional fields of a line and the JSON types they may hold
FIELDS: dict[str, tuple[type, ...]] = {"sample_id": (str,), "reply": (str,), "config": (str, type(None)),
                                       "mode": (str,), "program_output": (str, type(None))}


class ReplayError(ValueError):
    """A replay file that cannot be read: `FILE:LINE: reason`."""


@backend("replay", recorded=True)  # recorded: its replies were made elsewhere, the file says which
class ReplayBackend:
    kind = "replay"
    structured_output = "none"

    def __new__(cls, predictions: str, model: str | None = None) -> Any:
        """A batch output makes a `BatchBackend` answering from it; any other file, a ReplayBackend."""
        if not _first_is_batch_output(Path(predictions)):
            return super().__new__(cls)
        from curate.curation.llm.batch import BatchBackend, models_named, read_outputs

        path = Path(predictions)
        named = sorted(models_named(path))
        if model is None and len(named) != 1:
            raise ReplayError(f"{path}: a batch output whose replies name {len(named)} models ({', '.join(named)}): "
                              "give the model the requests were exported for (--model)")
        asked = model or named[0]
        identity = {"backend": cls.kind, "model": asked, "file": str(path),
                    "sha256": hashlib.sha256(path.read_bytes()).hexdigest()[:16]}
        return BatchBackend(asked, identity, replies=read_outputs(path), source=str(path))

    def __init__(self, predictions: str, model: str | None = None) -> None:
        self.path = Path(predictions)
        self.model = model or self.path.name
        self._bytes = self.path.read_bytes()
        self._records: list[tuple[int, dict[str, Any]]] | None = None

    def identity(self) -> dict[str, Any]:
        """The file's content, not only its name: another file of the same name is another model."""
        return {"backend": self.kind, "model": self.model, "file": str(self.path),
                "sha256": hashlib.sha256(self._bytes).hexdigest()[:16]}

    def records(self) -> list[tuple[int, dict[str, Any]]]:
        """(line number, object) of every non-blank line, each checked for its shape and field types
        (read when first asked, so a bad line stops the run that uses it, not the command line)."""
        if self._records is None:
            self._records = self._read()
        return self._records

    def _read(self) -> list[tuple[int, dict[str, Any]]]:
        out = []
        for number, line in enumerate(self._bytes.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise TypeError(f"a {type(record).__name__}, not an object")
                for key in ("sample_id" if "source_id" not in record else "source_id", "reply"):
                    if key not in record:
                        raise KeyError(key)
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise ReplayError(f"{self.path}:{number}: each line is {{\"sample_id\" or \"source_id\", "
                                  f"\"reply\"}} ({type(e).__name__}: {e})") from None
            for name, kinds in FIELDS.items():
                if name in record and not isinstance(record[name], kinds):
                    raise ReplayError(f"{self.path}:{number}: {name!r} must be "
                                      f"{' or '.join('null' if k is type(None) else k.__name__ for k in kinds)}, "
                                      f"got {type(record[name]).__name__} {json.dumps(record[name])[:80]}")
            out.append((number, record))
        return out

    @cached_property
    def _by_tag(self) -> dict[str, str]:
        replies: dict[str, str] = {}
        for _, record in self.records():
            replies.setdefault(str(record.get("sample_id", record.get("source_id"))), record["reply"])
        return replies

    def complete(self, requests: list[ChatRequest], on_response: Callable[[int, ChatResponse], None] | None = None
                 ) -> list[ChatResponse]:
        """The first line's reply whose sample_id (or source_id) is the request's tag; none is a failed
        request (not the server's fault: asking again gives the same)."""
        out = []
        for i, request in enumerate(requests):
            reply = self._by_tag.get(request.tag)
            response = (ChatResponse(text=reply, finish_reason="stop") if reply is not None else
                        ChatResponse(error=f"{self.path}: no line for {request.tag!r}", failure="no reply"))
            out.append(response)
            if on_response:
                on_response(i, response)
        return out

    def server_report(self) -> None:
        return None


def _first_is_batch_output(path: Path) -> bool:
    from curate.curation.llm.batch import is_batch_output

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.strip():
                try:
                    return is_batch_output(json.loads(line))
                except json.JSONDecodeError:
                    return False
    return False

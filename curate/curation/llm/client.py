"""ChatClient: a backend behind the response cache, with token counts and structured replies."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from curate.curation.llm.backend import Backend, RecordedBackend, require_backend
from curate.curation.llm.cache import ResponseCache, cache_key
from curate.curation.llm.types import ChatRequest, ChatResponse

RETRY_PROMPT = ("Your reply could not be read: {error}. Reply again with only the requested format, "
                "nothing before or after it.")


@dataclass
class StructuredReply:
    """A reply parsed against a schema. `flagged` when it still failed after one retry with the
    parse error: the record keeps the raw exchange instead of crashing the stage."""

    value: Any
    text: str
    error: str = ""
    retried: bool = False
    exchange: list[dict[str, str]] = field(default_factory=list)  # every message sent and received
    unavailable: bool = False  # no reply because the server failed (not the request): ask again later

    @property
    def flagged(self) -> bool:
        return bool(self.error)


@dataclass
class Usage:
    requests: int = 0  # reached the backend
    cached: int = 0  # answered by the cache
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)  # with several: each one's share and faults

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        if not self.servers:
            del out["servers"]
        return out


class ChatClient:
    def __init__(self, backend: Backend, cache: ResponseCache | None = None, role: str = "") -> None:
        self.backend = require_backend(backend)
        self.cache = cache
        self.role = role
        self.identity = backend.identity()
        self._by_tag = isinstance(backend, RecordedBackend)  # a replay answers by tag, not by the messages
        self.usage = Usage()
        # ask one request alone before the others (`client_from_config` turns it on for servers): a dead or
        # misconfigured server fails once, naming itself, instead of once per request of a long run
        self.preflight = False

    @property
    def model(self) -> str:
        return f"{self.identity['backend']}:{self.identity['model']}"

    def complete(self, requests: list[ChatRequest]) -> list[ChatResponse]:
        """One response per request, in order. Cached answers are not asked again; identical
        requests in one batch are asked once."""
        keys = [cache_key(self.identity, r, self._by_tag) for r in requests]
        hits = self.cache.get_many(keys) if self.cache else {}
        unique: dict[str, int] = {}
        for i, key in enumerate(keys):
            if key not in hits and key not in unique:
                unique[key] = i
        todo = list(unique.items())

        def store(j: int, response: ChatResponse) -> None:
            if self.cache:
                self.cache.put(todo[j][0], self.model, response)

        asked = [requests[i] for _, i in todo]
        fresh: list[ChatResponse] = []
        if self.preflight and len(asked) > 1:
            self.preflight = False
            fresh = self.backend.complete(asked[:1], on_response=store)
            if fresh[0].unreachable:
                from curate.curation.llm.types import ModelUnavailable

                raise ModelUnavailable(f"{self.role or 'model'} ({self.model}): the first request got no reply, so the "
                                       f"other {len(asked) - 1} were not sent: {fresh[0].error}")
        if len(asked) > len(fresh):
            start = len(fresh)
            fresh += self.backend.complete(asked[start:], on_response=lambda j, r: store(start + j, r))
        answered = dict(hits)
        for (key, _), response in zip(todo, fresh):
            answered[key] = response
            self.usage.requests += 1
            self.usage.errors += 0 if response.ok else 1
            self.usage.prompt_tokens += response.prompt_tokens
            self.usage.completion_tokens += response.completion_tokens
        self.usage.cached += sum(1 for k in keys if k in hits)
        servers = self.backend.server_report()
        if servers:
            self.usage.servers = servers
        return [answered[k] for k in keys]

    def structured(self, requests: list[ChatRequest], parse: Callable[[str], Any],
                   schema: dict[str, Any] | None = None) -> list[StructuredReply]:
        """Replies parsed by `parse` (which raises ValueError with a reason). A reply that does not
        parse is asked once more, with the parse error; if it fails again it is flagged.

        `schema` (a JSON schema of the reply) constrains decoding where the backend's
        `structured_output` setting says how its server takes one; the prompt asks for the same
        format either way, and `parse` checks every reply."""
        response_format = structured_output_format(self.backend.structured_output, schema)
        if response_format:
            requests = [ChatRequest(r.messages, {**r.params, "response_format": response_format}, r.index, r.tag)
                        if "response_format" not in r.params else r for r in requests]
        first = self.complete(requests)
        out: list[StructuredReply] = []
        retry: list[tuple[int, ChatRequest]] = []
        for i, (request, response) in enumerate(zip(requests, first)):
            exchange = [*request.messages, {"role": "assistant", "content": response.text}]
            if not response.ok:
                out.append(StructuredReply(None, "", f"no reply: {response.error}", exchange=exchange,
                                           unavailable=response.transient))
                continue
            try:
                out.append(StructuredReply(parse(response.text), response.text, exchange=exchange))
            except ValueError as e:
                out.append(StructuredReply(None, response.text, str(e), exchange=exchange))
                retry.append((i, ChatRequest(
                    messages=(*request.messages, {"role": "assistant", "content": response.text},
                              {"role": "user", "content": RETRY_PROMPT.format(error=e)}),
                    params=request.params, index=request.index, tag=request.tag)))
        second = self.complete([r for _, r in retry]) if retry else []
        for (i, request), response in zip(retry, second):
            exchange = [*request.messages, {"role": "assistant", "content": response.text}]
            reply = StructuredReply(None, response.text, retried=True, exchange=exchange)
            if not response.ok:
                reply.error = f"no reply: {response.error}"
                reply.unavailable = response.transient
            else:
                try:
                    reply.value = parse(response.text)
                except ValueError as e:
                    reply.error = str(e)
            out[i] = reply
        return out


STRUCTURED_OUTPUT_MODES = ("none", "json_schema", "json_object")


def object_schema(**properties: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema of an object with exactly these properties, all required."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def structured_output_format(mode: str, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `response_format` that asks a server for replies matching `schema`.

    - "json_schema": OpenAI's structured outputs (OpenAI, vLLM's server and vLLM in-process)
    - "json_object": {"type": "json_object", "schema": ...} (llama.cpp's server)
    - "none": nothing; the prompt alone asks for the format
    """
    if mode not in STRUCTURED_OUTPUT_MODES:
        raise ValueError(f"structured_output must be one of {', '.join(STRUCTURED_OUTPUT_MODES)}, got {mode!r}")
    if not schema or mode == "none":
        return None
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def parse_json_object(text: str, schema: dict[str, type | tuple[type, ...]]) -> dict[str, Any]:
    """The first JSON object in a reply (fenced or not), with every key of `schema` of its type."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            break
    else:
        raise ValueError("no JSON object found")
    for key, kind in schema.items():
        if key not in value:
            raise ValueError(f"the JSON object has no {key!r}")
        if not isinstance(value[key], kind) or (kind in (int, float, (int, float)) and isinstance(value[key], bool)):
            raise ValueError(f"{key!r} must be {getattr(kind, '__name__', kind)}, got {value[key]!r}")
    return value


def require_replies(client: "ChatClient", replies: list[Any]) -> None:
    """Raise ModelUnavailable when a server gave no reply to some requests (ChatResponses that
    failed transiently, or StructuredReplies marked unavailable): the stage's part stays unfinished,
    and the rerun asks only those again, the finished ones coming from the cache."""
    from curate.curation.llm.batch import HOW_TO_RUN, BatchBackend
    from curate.curation.llm.types import BatchPending, ModelUnavailable

    down = [r for r in replies if getattr(r, "unavailable", False)
            or (isinstance(r, ChatResponse) and not r.ok and r.transient)]
    waiting = getattr(client.backend, "requests", None) if isinstance(client.backend, BatchBackend) else None
    if down and waiting:
        raise BatchPending(f"{client.role or 'model'} ({client.model}): {len(down)} requests wait for their batch "
                               f"replies in {waiting}: {HOW_TO_RUN} with `curate build --replies OUTPUT`; "
                               "the build goes on from there")
    if down:
        raise ModelUnavailable(f"{client.role or 'model'} ({client.model}): {len(down)} requests got no reply "
                               f"({down[0].error}); rerun when it answers: finished requests are cached")


def client_from_config(section: dict[str, Any], cache_path: str | Path | None, role: str = ""
                       ) -> tuple[ChatClient, dict[str, Any]]:
    """A `[models.<role>]` table: `backend` (default openai), the backend's settings, and request
    parameters (temperature, max_tokens, ...). Returns the client and the request parameters."""
    from curate.curation.llm import BACKENDS
    from curate.curation.llm.types import OUTPUT_PARAMETERS

    settings = dict(section)
    backend_name = settings.pop("backend", "openai")
    batch = settings.pop("batch", False)
    params = {k: settings.pop(k) for k in list(settings) if k in OUTPUT_PARAMETERS}
    try:
        backend = BACKENDS.get(backend_name)(**settings)
    except TypeError as e:
        raise ValueError(f"[models.{role}]: {e}") from None
    if batch:
        backend = batch_backend(backend, batch, cache_path, role)
    cache = ResponseCache(cache_path) if cache_path else None
    client = ChatClient(backend, cache, role)
    client.preflight = bool(getattr(backend, "preflight", False))
    return client, params


def batch_backend(live: Backend, batch: Any, cache_path: str | Path | None, role: str) -> Backend:
    """`[models.<role>] batch = true` (or a file name): the role's requests go to a batch file
    (`<workspace>/batches/<role>.jsonl`) and its replies come from those `curate build --replies` brought
    back, cached as the live model's answers (docs/batch.md)."""
    from curate.curation.llm.batch import BatchBackend, ReplyStore

    if not cache_path:
        raise ValueError(f"[models.{role}] batch: needs a workspace (its replies are kept there)")
    if not isinstance(batch, (bool, str)):
        raise ValueError(f"[models.{role}] batch: true, or the file to write the requests to; got {batch!r}")
    workspace = Path(cache_path).parent
    requests = workspace / "batches" / f"{role or 'model'}.jsonl" if batch is True else workspace / batch
    identity = live.identity()
    store = ReplyStore(cache_path)
    return BatchBackend(identity["model"], identity, requests, store.get,
                        getattr(live, "structured_output", "none"))

"""What a chat backend is: the one interface the client, every LLM stage and `curate evaluate` ask.

A backend turns a batch of `ChatRequest`s into one `ChatResponse` each, in order (calling
`on_response(i, response)` as each arrives, so the cache keeps what finished if the run is killed),
names itself (`identity()`: everything that changes its answers, part of the cache key), says how it
takes a JSON schema for structured replies (`structured_output`: "json_schema", "json_object" or
"none") and, where it spreads requests over several servers, how each fared (`server_report()`).
The backends in `curate/curation/llm/backends/` implement it (openai, vllm, scripted, replay); `BACKENDS` names
them for `[models.<role>] backend = "..."` and `curate evaluate --backend`.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable, Protocol, runtime_checkable

from curate.curation.llm.types import ChatRequest, ChatResponse


@runtime_checkable
class Backend(Protocol):
    kind: str
    structured_output: str

    def identity(self) -> dict[str, Any]:
        """Everything that changes what this backend answers: backend kind, model, revision, settings."""
        ...

    def complete(self, requests: list[ChatRequest], on_response: Callable[[int, ChatResponse], None] | None = None
                 ) -> list[ChatResponse]:
        """One response per request, in order; a failed request is a response with `error`, never an exception."""
        ...

    def server_report(self) -> dict[str, dict[str, Any]] | None:
        """With several servers: each one's share and faults; else None."""
        ...


@runtime_checkable
class RecordedBackend(Backend, Protocol):
    """A backend whose replies were made elsewhere (`replay`): `records()` are the (line, object)
    pairs of its file `path`, and they, not the release, say what `curate evaluate` scores."""

    path: Path

    def records(self) -> list[tuple[int, dict[str, Any]]]:
        ...


MEMBERS = ("kind", "structured_output", "identity", "complete", "server_report")


def require_backend(backend: Any) -> Backend:
    """`backend` itself, or a TypeError naming what it lacks of the `Backend` protocol."""
    missing = [m for m in MEMBERS if not hasattr(backend, m)]
    if missing:
        raise TypeError(f"{type(backend).__name__} is no chat backend: it lacks {', '.join(missing)} "
                        "(see curate/curation/llm/backend.py)")
    return backend


def settings_taken(backend_class: type, offered: dict[str, Any]) -> dict[str, Any]:
    """Of `offered` settings, those the backend's constructor names (by name, not through **kwargs):
    the CLI offers its generic options (--base-url, --concurrency, ...) and each backend takes its own."""
    parameters = inspect.signature(backend_class).parameters
    named = {n for n, p in parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return {k: v for k, v in offered.items() if k in named}


def required_settings(backend_class: type) -> list[str]:
    """The constructor's settings without a default (`model`; replay's `predictions`): the CLI asks for them."""
    parameters = inspect.signature(backend_class).parameters
    return [n for n, p in parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.default is p.empty]


def parse_model_args(items: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """`--model-arg key=value` pairs: a value that reads as JSON is that (`8`, `true`, `{"a": 1}`), else the text."""
    import json

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--model-arg {item!r}: write key=value")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out

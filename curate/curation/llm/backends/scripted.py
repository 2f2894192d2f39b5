"""A backend whose replies a test writes: for unit tests of logic (voting rules, parsers, loops)."""

from __future__ import annotations

from typing import Any, Callable

from curate.curation.llm.backends import backend
from curate.curation.llm.types import ChatRequest, ChatResponse


@backend("scripted", for_tests=True)  # not offered on the command line
class ScriptedBackend:
    """`reply(request) -> str` (or a ChatResponse, e.g. with an error) decides every answer.

    `calls` lists every request that reached the backend, so a test can prove what the cache
    saved.
    """

    kind = "scripted"
    structured_output = "none"  # a test sets it to see the schema reach the request

    def __init__(self, reply: Callable[[ChatRequest], Any], model: str = "scripted", **_: Any) -> None:
        self.reply = reply
        self.model = model
        self.calls: list[ChatRequest] = []

    def identity(self) -> dict[str, Any]:
        return {"backend": self.kind, "model": self.model}

    def server_report(self) -> None:
        return None

    def complete(self, requests: list[ChatRequest], on_response: Callable[[int, ChatResponse], None] | None = None
                 ) -> list[ChatResponse]:
        out = []
        for i, request in enumerate(requests):
            self.calls.append(request)
            value = self.reply(request)
            response = value if isinstance(value, ChatResponse) else ChatResponse(
                text=str(value), prompt_tokens=sum(len(m["content"].split()) for m in request.messages),
                completion_tokens=len(str(value).split()), finish_reason="stop")
            if on_response:
                on_response(i, response)
            out.append(response)
        return out

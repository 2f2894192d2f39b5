"""What goes to a model and what comes back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# request parameters that change what a model answers: all of them are part of the cache key
OUTPUT_PARAMETERS = ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop", "frequency_penalty",
                     "presence_penalty", "response_format", "logit_bias", "n")

DEADLINE = "deadline"  # the failure kind of a request that passed its deadline (`deadline.py`)
PENDING = "pending"  # the failure kind of a request written to a batch file, its reply not back yet (`batch.py`)


class ModelUnavailable(RuntimeError):
    """Requests got no reply (a dead endpoint, a server that keeps failing). A stage raises it so
    that its part stays unfinished: the rerun asks again, and finished requests come from the cache."""


class BatchPending(ModelUnavailable):
    """Requests were written to a batch file and wait for their replies. A stage's part raises it once
    it has written every request it can (a whole round); the stage runs its other parts before it
    stops, so one stop of a build holds the round of every part (`pipeline/runner.py`)."""


@dataclass(frozen=True)
class ChatRequest:
    """One conversation to complete.

    `index` tells apart repeated draws of the same prompt (the n-th sample of a self-consistency
    vote): equal requests with another index are another answer, not a cache hit. `tag` names
    the record the answer belongs to; it is not part of the key.
    """

    messages: tuple[dict[str, str], ...]
    params: dict[str, Any] = field(default_factory=dict)
    index: int = 0
    tag: str = ""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.params) - set(OUTPUT_PARAMETERS))
        if unknown:
            raise ValueError(f"unknown request parameter(s) {', '.join(unknown)}; known: {', '.join(OUTPUT_PARAMETERS)}")
        for m in self.messages:
            if set(m) != {"role", "content"} or m["role"] not in ("system", "user", "assistant"):
                raise ValueError(f"a message is {{'role': system|user|assistant, 'content': str}}, got {m!r}")


@dataclass
class ChatResponse:
    """The reply, or the error that stopped it (then `text` is empty and nothing is cached)."""

    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""
    error: str = ""
    transient: bool = False  # the error was the server's (unreachable, overloaded), not the request's
    failure: str = ""  # the error's kind, short and stable ("HTTP 401", "malformed reply", "no content")
    cached: bool = False
    attempts: int = 1
    # wall time of the request, from its first try to its reply (retries and their waits included); None where
    # nothing was timed (a cache hit, a replay, a batch). Not cached: a cache hit makes no call
    latency_s: float | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def unreachable(self) -> bool:
        """The server gave no reply at all (down, refusing, overloaded): an evaluation stops, and its
        rerun asks again. A request past its deadline is not that: the server answers, too slowly for
        this request, which is recorded failed while the run goes on (a build stage still treats it as
        `transient`: its part stays unfinished, and the rerun asks again). Nor is a request waiting in a
        batch file (`PENDING`): the run goes on writing the others."""
        return not self.ok and self.transient and self.failure not in (DEADLINE, PENDING)

    @property
    def truncated(self) -> bool:
        """The reply stopped at `max_tokens`: it may be cut before its answer."""
        return self.finish_reason == "length"

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "finish_reason": self.finish_reason, "error": self.error, "raw": self.raw}


def user(content: str, system: str = "") -> tuple[dict[str, str], ...]:
    """The messages of a one-turn prompt."""
    messages = ({"role": "system", "content": system},) if system else ()
    return messages + ({"role": "user", "content": content},)

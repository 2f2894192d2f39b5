"""Any OpenAI-compatible chat server (vLLM's, llama.cpp's, hosted APIs) through the `openai` package.

Requests run on a bounded thread pool. A 429, a 5xx, a timeout or a refused connection is
retried with exponential backoff (honouring Retry-After); any other 4xx is the request's own fault
and is not retried. `timeout` is a deadline per try, for connect, headers and body together
(`deadline.py`): a server that trickles or stalls fails the try on time, as "deadline", a try
under the retry policy like any timeout. A 200 that is not a chat completion (an HTML page,
malformed JSON, no choices, a message without content) is a failure too, never an empty answer.
A request that still fails becomes a response with `error` and its kind (`failure`: "HTTP 401",
"malformed reply", ...) set: the batch goes on, and nothing failed is cached, so a rerun asks again.

`base_url` may list several servers of the same model (a list, or URLs separated by commas):
requests are spread over them, `concurrency` in flight on each, and a server that dies is taken
out while its requests go to the others (`servers.py`). The cache key names the servers as a set,
never the one that answered; each reply's `raw["server"]` says which did.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable

from curate.curation.llm.backends import backend
from curate.curation.llm.types import DEADLINE, ChatRequest, ChatResponse


@backend("openai")
class OpenAIBackend:
    kind = "openai"
    preflight = True  # a remote server: the client asks one request before a long run (`ChatClient.preflight`)

    def __init__(self, model: str, base_url: str | list[str] | None = None, api_key: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", revision: str = "", concurrency: int = 8,
                 timeout: float = 120.0, retries: int = 4, backoff: float = 1.0, max_backoff: float = 30.0,
                 structured_output: str = "none", failures_to_take_out: int = 3, revive_after: float = 60.0) -> None:
        """`structured_output`: how this server takes a JSON schema for structured replies ("json_schema"
        for OpenAI and vLLM, "json_object" for llama.cpp, "none" to ask by prompt only). `concurrency`
        is per server; `failures_to_take_out` and `revive_after` matter with several servers."""
        import openai

        from curate.curation.llm.client import structured_output_format
        from curate.curation.llm.deadline import deadline, deadline_http_client
        from curate.curation.llm.servers import Server, ServerPool

        structured_output_format(structured_output, None)  # a bad mode fails here, not at the first request
        self.structured_output = structured_output

        self.base_urls = base_urls(base_url)
        self.model, self.base_url, self.revision = model, self.base_urls[0], revision
        self.concurrency, self.retries, self.backoff, self.max_backoff = max(1, concurrency), retries, backoff, max_backoff
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds (a deadline per try), got {timeout!r}")
        self.timeout = float(timeout)
        key = api_key or os.environ.get(api_key_env) or "not-needed"  # local servers take any key
        # retries are ours (the policy above), not the client's; the deadline is ours too (httpx's timeouts are per read)
        self.pool = ServerPool([Server(url, openai.OpenAI(base_url=url, api_key=key, timeout=timeout, max_retries=0,
                                                          http_client=deadline_http_client(url)))
                                for url in self.base_urls], failures_to_take_out, revive_after)
        self._openai, self._deadline = openai, deadline

    def identity(self) -> dict[str, Any]:
        urls = sorted({u.rstrip("/") for u in self.base_urls})
        return {"backend": self.kind, "base_url": urls[0] if len(urls) == 1 else urls, "model": self.model,
                "revision": self.revision}

    def server_report(self) -> dict[str, dict[str, Any]] | None:
        """With several servers: each one's requests answered, tries failed, times taken out and why."""
        return self.pool.report() if len(self.pool.servers) > 1 else None

    def complete(self, requests: list[ChatRequest], on_response: Callable[[int, ChatResponse], None] | None = None
                 ) -> list[ChatResponse]:
        out: list[ChatResponse | None] = [None] * len(requests)
        workers = min(self.concurrency * len(self.pool.servers), max(1, len(requests)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(self._one, r): i for i, r in enumerate(requests)}
            for future in as_completed(futures):
                i = futures[future]
                out[i] = future.result()
                if on_response:
                    on_response(i, out[i])  # in this thread: the cache is written by one thread
        return [r for r in out if r is not None]

    def retryable(self, error: Exception) -> bool:
        o = self._openai
        if isinstance(error, (o.RateLimitError, o.APITimeoutError, o.APIConnectionError, o.InternalServerError)):
            return True
        return isinstance(error, o.APIStatusError) and error.status_code >= 500

    def _one(self, request: ChatRequest) -> ChatResponse:
        """The reply, timed from the first try (`latency_s`), its tries counted (`attempts`)."""
        started = time.monotonic()
        response = self._tries(request, started)
        response.latency_s = time.monotonic() - started
        return response

    def _tries(self, request: ChatRequest, started: float) -> ChatResponse:
        attempt = moved = 0  # tries under the retry policy; tries moved off a server just taken out
        server = None

        def named(error: str, tries: int) -> str:  # the server first (a message cut short keeps it), then how long
            return f"{server.url}: {error} ({tries} {'try' if tries == 1 else 'tries'} in {time.monotonic() - started:.1f} s)"
        while True:
            server = self.pool.acquire(avoid=server)
            try:
                with self._deadline(self.timeout) as limit:
                    reply = server.client.chat.completions.create(model=self.model, messages=list(request.messages),
                                                                  **request.params)
            except Exception as e:  # noqa: BLE001 - classified below; a bad request must not stop the batch
                late = limit.passed and isinstance(e, self._openai.APITimeoutError)
                kind = DEADLINE if late else self.failure_kind(e)
                last = limit.reason if late else f"{type(e).__name__}: {e}"
                tries = attempt + moved + 1
                if not self.retryable(e):  # the request's own fault: the server is fine
                    self.pool.release(server, ok=True)
                    return ChatResponse(error=named(last, tries), failure=kind, attempts=tries)
                if self.pool.release(server, ok=False, dead=self.dead(e), failure=kind) \
                        and moved < len(self.pool.servers):
                    moved += 1  # its server was just taken out: another one takes it now
                    continue
                if attempt == self.retries:
                    return ChatResponse(error=named(last, tries), transient=True, failure=kind, attempts=tries)
                time.sleep(self._delay(e, attempt))
                attempt += 1
                continue
            self.pool.release(server, ok=True)
            response = self._read(reply, attempt + moved + 1)
            if len(self.pool.servers) > 1:
                response.raw["server"] = server.url
            return response

    def dead(self, error: Exception) -> str:
        """Why `error` says its server is gone (a refused or dropped connection), or "" (a timeout, a 5xx:
        a busy server, taken out only after several in a row)."""
        o = self._openai
        if isinstance(error, o.APIConnectionError) and not isinstance(error, o.APITimeoutError):
            cause = error.__cause__ or error.__context__
            return f"no connection ({type(cause).__name__ if cause else type(error).__name__})"
        return ""

    @staticmethod
    def _read(reply: Any, attempts: int) -> ChatResponse:
        """A chat completion, or the failure that a 200 carrying something else is."""
        def failed(kind: str, detail: str) -> ChatResponse:
            return ChatResponse(error=f"{kind}: {detail}", failure=kind, attempts=attempts)

        choices = getattr(reply, "choices", None)
        if not isinstance(choices, list):
            return failed("malformed reply", f"the server answered 200 with something that is not a chat completion: "
                                             f"{str(reply)[:200]!r}")
        if not choices:
            return failed("no choices", "the reply's `choices` list is empty")
        choice = choices[0]
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        if not isinstance(content, str):
            return failed("no content", f"the reply's message has no content (finish_reason "
                                        f"{getattr(choice, 'finish_reason', None)!r})")
        usage = getattr(reply, "usage", None)
        return ChatResponse(text=content, prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
                            finish_reason=getattr(choice, "finish_reason", "") or "", attempts=attempts,
                            raw={"id": getattr(reply, "id", ""), "model": getattr(reply, "model", "")})

    def failure_kind(self, error: Exception) -> str:
        """A short, stable name of what went wrong, for counting failures and stopping on a streak."""
        o = self._openai
        if isinstance(error, o.APIStatusError):
            return f"HTTP {error.status_code}"
        if isinstance(error, o.APITimeoutError):
            return "timeout"
        if isinstance(error, o.APIConnectionError):
            return "no connection"
        if isinstance(error, (o.APIResponseValidationError, ValueError)):
            return "malformed reply"
        return type(error).__name__

    def _delay(self, error: Exception, attempt: int) -> float:
        response = getattr(error, "response", None)
        if response is not None:
            after = response.headers.get("retry-after")
            try:
                return min(self.max_backoff, float(after))
            except (TypeError, ValueError):
                pass
        return min(self.max_backoff, self.backoff * 2 ** attempt)


def base_urls(base_url: str | list[str] | None) -> list[str]:
    """One server or several: a list, or URLs separated by commas."""
    if base_url is None:
        return ["https://api.openai.com/v1"]
    listed = base_url.split(",") if isinstance(base_url, str) else base_url
    if not isinstance(listed, (list, tuple)) or not all(isinstance(u, str) for u in listed):
        raise ValueError(f"base_url must be a URL or a list of URLs, got {base_url!r}")
    urls = [u.strip() for u in listed if u.strip()]
    if not urls:
        raise ValueError(f"base_url must be a URL or a list of URLs, got {base_url!r}")
    return urls

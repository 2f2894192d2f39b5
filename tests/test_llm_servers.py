"""One model role over two real local servers (the suite's llama.cpp server with Gemma 3 270M,
twice), one of them killed mid-run: every request is answered exactly once, none is lost, and the
dead server is reported with the reason it was taken out."""

from __future__ import annotations

import pytest

from curate.curation.llm.cache import ResponseCache
from curate.curation.llm.client import ChatClient
from curate.curation.llm.backends.openai_backend import OpenAIBackend
from curate.curation.llm.types import ChatRequest, user
from tests.llm_server import MODEL_NAME, LocalServer

# per test; the build of .envs/llm (the `llm_env` fixture) is not counted
pytestmark = [pytest.mark.integration, pytest.mark.timeout(300, func_only=True)]

REQUESTS = 10


@pytest.fixture
def two_servers(llm_env, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    servers = [LocalServer(tmp_path / f"server-{i}.log", n_ctx=512) for i in range(2)]
    try:
        with ThreadPoolExecutor(2) as pool:  # started side by side: each waits on its model's load
            list(pool.map(lambda s: s.start(), servers))
        yield servers
    finally:
        for s in servers:
            s.kill()


def test_a_server_killed_mid_run_loses_no_request_and_answers_none_twice(two_servers, tmp_path):
    kept, doomed = two_servers
    backend = OpenAIBackend(MODEL_NAME, base_url=[kept.url, doomed.url], concurrency=2, timeout=60, backoff=0.2,
                            retries=2)
    answered: dict[int, int] = {}
    by_doomed: list[int] = []

    def watch(i, response):  # each reply as it arrives: once the doomed server has answered one, it dies
        answered[i] = answered.get(i, 0) + 1
        if response.raw.get("server") == doomed.url:
            by_doomed.append(i)
            if len(by_doomed) == 1:
                doomed.kill()

    observed = backend.complete

    def complete(batch, on_response=None):
        def both(i, response):
            watch(i, response)
            if on_response:
                on_response(i, response)
        return observed(batch, both)

    backend.complete = complete
    requests = [ChatRequest(user(f"Count from {i} to {i + 3}:"), {"temperature": 0, "max_tokens": 4, "seed": i})
                for i in range(REQUESTS)]
    client = ChatClient(backend, ResponseCache(tmp_path / "cache.sqlite"), "generator")
    replies = client.complete(requests)

    assert doomed.process.poll() is not None, "the second server was not killed during the run"
    assert all(r.ok for r in replies) and len(replies) == REQUESTS
    assert answered == {i: 1 for i in range(REQUESTS)}  # every request answered once: none lost, none twice
    assert ResponseCache(tmp_path / "cache.sqlite").count() == REQUESTS
    servers = client.usage.as_dict()["servers"]
    assert servers[doomed.url]["answered"] >= 1 and servers[doomed.url]["taken_out"] >= 1
    assert servers[doomed.url]["reason"].startswith("no connection")
    assert servers[doomed.url]["failed"] >= 1  # a request it held when it died was answered by the other
    assert servers[kept.url]["answered"] + servers[doomed.url]["answered"] == REQUESTS
    assert sum(1 for r in replies if r.raw["server"] == doomed.url) == servers[doomed.url]["answered"]

"""`--request-timeout` is a deadline: a try ends by it however the server stalls (a reply trickled a
byte at a time, a connection accepted and never answered, headers and then nothing), against a
real HTTP server on 127.0.0.1. The try is recorded failed with its reason, its connection is
closed, nothing failed is cached, and `curate evaluate` records the sample failed, never scored,
and finishes the run. pytest-timeout bounds each test: on a client whose timeouts are per read,
the trickle alone holds a request for about a minute."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pyarrow as pa
import pytest
from click.testing import CliRunner

from curate.curation.llm.types import ChatRequest, ModelUnavailable, user

pytestmark = pytest.mark.timeout(30)
STALLS = ("trickle", "silent", "headers-then-stall")


def completion(content: str = "Final Answer: 42") -> bytes:
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "tiny",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}],
                       "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}).encode()


class StallingServer:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 that stalls as `mode` says:
    "trickle" sends a valid reply, status line to last byte, one byte every 0.2 s; "silent" reads the
    request and never answers; "headers-then-stall" sends the status line and headers, then nothing;
    "answer" answers at once. `closed_by_client` is set when the client hung up on a stalled reply."""

    def __init__(self, mode: str) -> None:
        self.mode, self.hits = mode, 0
        self.closed_by_client = threading.Event()
        self.stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("content-length", 0)))
                outer.hits += 1
                outer.serve(self.connection, outer.mode)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def serve(self, connection: socket.socket, mode: str) -> None:
        body = completion()
        head = (f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n").encode()
        connection.settimeout(20)
        try:
            if mode == "answer":
                connection.sendall(head + body)
                return
            if mode == "trickle":
                for byte in head + body:
                    if self.stop.wait(0.2):
                        return
                    connection.sendall(bytes([byte]))
                return
            if mode == "headers-then-stall":
                connection.sendall(head)
            while not self.stop.is_set() and connection.recv(1024):  # wait for the client to hang up
                pass
            if not self.stop.is_set():
                self.closed_by_client.set()
        except OSError:  # the client hung up mid-trickle: a send fails
            self.closed_by_client.set()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stalling():
    servers: list[StallingServer] = []

    def start(mode: str) -> StallingServer:
        servers.append(StallingServer(mode))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def backend(server: StallingServer, timeout: float = 1.0, retries: int = 0):
    from curate.curation.llm.backends.openai_backend import OpenAIBackend

    return OpenAIBackend("tiny", base_url=server.url, timeout=timeout, retries=retries, backoff=0.0)


@pytest.mark.parametrize("mode", STALLS)
def test_a_stalled_request_fails_at_its_deadline_and_its_connection_is_closed(stalling, mode):
    server = stalling(mode)
    [response] = backend(server).complete([ChatRequest(user("How many?"))])
    assert not response.ok and response.text == ""
    assert response.failure == "deadline" and response.error.startswith(f"{server.url}: deadline of 1 s passed (1 try in")
    assert response.transient and not response.unreachable  # the server's fault, but the run goes on
    assert server.closed_by_client.wait(10)  # the client hung up: no connection left open on a stalled reply


def test_a_retry_gets_a_deadline_of_its_own_and_counts_as_a_try(stalling):
    server = stalling("silent")
    [response] = backend(server, timeout=0.5, retries=1).complete([ChatRequest(user("How many?"))])
    assert response.failure == "deadline" and response.attempts == 2 and server.hits == 2


def test_an_answer_within_the_deadline_is_read_as_before(stalling):
    server = stalling("answer")
    [response] = backend(server).complete([ChatRequest(user("How many?"))])
    assert response.ok and response.text == "Final Answer: 42" and response.completion_tokens == 3


def test_a_build_stage_gets_no_reply_past_the_deadline_and_its_rerun_asks_again(stalling, tmp_path):
    """Build stages and the audit share the client: a reply past its deadline leaves the stage's part
    unfinished (ModelUnavailable) and is not cached, so the rerun asks again and gets the answer."""
    from curate.curation.llm.client import client_from_config, require_replies

    server = stalling("trickle")
    settings = {"model": "tiny", "base_url": server.url, "timeout": 1, "retries": 0}
    client, _ = client_from_config(settings, tmp_path / "cache.sqlite", role="extract")
    request = ChatRequest(user("Reply with JSON."))
    [reply] = client.structured([request], json.loads)
    assert reply.unavailable and reply.error.startswith(f"no reply: {server.url}: deadline of 1 s passed (1 try in")
    with pytest.raises(ModelUnavailable, match="deadline of 1 s passed"):
        require_replies(client, [reply])
    assert client.cache.count() == 0

    server.mode = "answer"
    healed, _ = client_from_config(settings, tmp_path / "cache.sqlite", role="extract")
    [again] = healed.complete([request])
    assert again.ok and not again.cached and server.hits == 2


def test_curate_evaluate_against_a_trickling_server_records_the_samples_failed_and_finishes(stalling, tmp_path):
    from curate.curation.cli import main
    from curate.curation.sample import Sample
    from curate.curation.table import Table
    from tests.files import release_of

    table = Table(name="towns", body=pa.table({"town": ["Oslo", "Bergen"], "people": [42, 290]}))
    samples = [Sample(task="TCO/general_operations", question=f"How many people live in Oslo? ({n})", answer=42,
                      answer_type="number", table_ids=(table.id,)) for n in range(2)]
    release = release_of(tmp_path, samples, [table])
    server, out = stalling("trickle"), tmp_path / "out"

    def evaluate():
        return CliRunner().invoke(main, ["evaluate", str(release), "--backend", "openai", "--base-url", server.url,
                                         "--model", "tiny", "--out", str(out), "--request-timeout", "1",
                                         "--retries", "0", "--json", "-q"])

    done = evaluate()
    assert done.exit_code == 1, done.output
    assert f"2 requests got no usable reply (deadline 2), e.g. {server.url}: deadline of 1 s passed" in done.output
    assert pd.read_parquet(out / "results.parquet").empty  # failed, never scored
    run = json.loads((out / "run.json").read_text())
    assert run["failures"]["by_kind"] == {"deadline": 2}

    server.mode, server.hits = "answer", 0
    healed = evaluate()
    assert healed.exit_code == 0, healed.output
    assert server.hits == 2  # exactly the failed samples, asked again
    assert (pd.read_parquet(out / "results.parquet")["score"] == 1.0).all()


@pytest.mark.parametrize("timeout", [0, -1, None, "5"])
def test_a_timeout_that_is_no_deadline_is_refused(timeout):
    from curate.curation.llm.backends.openai_backend import OpenAIBackend

    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        OpenAIBackend("tiny", base_url="http://127.0.0.1:9/v1", timeout=timeout)

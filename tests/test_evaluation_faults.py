"""A failure is never a score: `curate evaluate` against a real local HTTP server that answers each
way a server fails (a bad key, an unknown model, a refused request, malformed JSON, an HTML page,
no choices, no content), then is healed. The failed requests are reported apart, not scored, and
the rerun asks exactly them again. A streak of the same failure stops the run early, a reply cut
at max_tokens is marked, a server that never answers fails after the timeout the user set, and a
replay line of the wrong type is named."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pyarrow as pa
import pytest
from click.testing import CliRunner

from curate.curation.cli import main
from curate.curation.sample import Sample
from curate.curation.table import Table
from tests.files import release_of

pytestmark = pytest.mark.timeout(120)
SAMPLES = 6


class FaultyServer:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 whose answer is `mode`; `hits` counts requests."""

    def __init__(self, mode: str) -> None:
        self.mode, self.hits = mode, 0
        self.release_hang = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                outer.hits += 1
                status, kind, data = outer.answer(outer.mode, body)
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, mode: str, body: dict) -> tuple[int, str, bytes]:
        def completion(content, finish="stop", choices=True) -> bytes:
            return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": finish, "message": {
                                   "role": "assistant", "content": content}}] if choices else [],
                               "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}).encode()

        if mode in ("401", "404", "400"):
            return int(mode), "application/json", json.dumps({"error": {"message": f"status {mode}"}}).encode()
        if mode == "escapes":  # a hostile endpoint's error, written for the user's terminal
            return 400, "application/json", json.dumps({"error": {"message": "\x1b]0;pwned\x07\x1b[2J\rok"}}).encode()
        if mode == "malformed":
            return 200, "application/json", b'{"id": "c", "choices": [{"message": '
        if mode == "html":
            return 200, "text/html", b"<html><body><h1>Welcome to nginx!</h1></body></html>"
        if mode == "no-choices":
            return 200, "application/json", completion("", choices=False)
        if mode == "null-content":
            return 200, "application/json", completion(None)
        if mode == "hang":
            self.release_hang.wait(60)
        if mode == "length":
            return 200, "application/json", completion("Let me count the rows one by one: first", finish="length")
        return 200, "application/json", completion("Final Answer: 42")

    def close(self) -> None:
        self.release_hang.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server():
    s = FaultyServer("ok")
    yield s
    s.close()


@pytest.fixture
def release(tmp_path):
    table = Table(name="towns", body=pa.table({"town": ["Oslo", "Bergen"], "people": [42, 290]}))
    samples = [Sample(task="TCO/general_operations", question=f"How many people live in Oslo? ({n})", answer=42,
                      answer_type="number", table_ids=(table.id,)) for n in range(SAMPLES)]
    return release_of(tmp_path, samples, [table])


def evaluate(release, server, out, *extra: str):
    return CliRunner().invoke(main, ["evaluate", str(release), "--backend", "openai", "--base-url", server.url,
                                     "--model", "tiny", "--out", str(out), "--retries", "0", "--json", "-q", *extra])


@pytest.mark.parametrize("mode, kind", [("401", "HTTP 401"), ("404", "HTTP 404"), ("400", "HTTP 400"), ("escapes", "HTTP 400"),
                                        ("malformed", "malformed reply"), ("html", "malformed reply"),
                                        ("no-choices", "no choices"), ("null-content", "no content")])
def test_a_failed_request_is_reported_never_scored_and_asked_again_once_the_server_is_healed(
        release, server, tmp_path, mode, kind):
    server.mode = mode
    out = tmp_path / "out"
    failed = evaluate(release, server, out, "--max-failures-in-a-row", "100")
    assert failed.exit_code == 1, failed.output
    assert f"{SAMPLES} requests got no usable reply ({kind} {SAMPLES})" in failed.output
    assert not {"\x1b", "\x07", "\r"} & set(failed.output)  # a server's escape sequences never reach the terminal
    assert pd.read_parquet(out / "results.parquet").empty  # nothing scored: no 0.000 for a failure
    run = json.loads((out / "run.json").read_text())
    assert run["failures"]["count"] == SAMPLES and run["failures"]["by_kind"] == {kind: SAMPLES}
    assert "no usable reply" in (out / "report.md").read_text()

    server.mode, server.hits = "ok", 0
    healed = evaluate(release, server, out)
    assert healed.exit_code == 0, healed.output
    assert server.hits == SAMPLES  # exactly the failed requests, asked again
    results = pd.read_parquet(out / "results.parquet")
    assert len(results) == SAMPLES and (results["score"] == 1.0).all()
    assert json.loads((out / "run.json").read_text())["failures"]["count"] == 0


def test_the_same_failure_again_and_again_stops_the_run_instead_of_burning_through_the_release(release, server,
                                                                                               tmp_path):
    from curate.curation.llm.client import client_from_config
    from curate.evaluation.evaluate import Evaluator, RequestsFailing, Settings

    server.mode = "401"
    out = tmp_path / "out"
    client, params = client_from_config({"model": "tiny", "base_url": server.url, "retries": 0, "concurrency": 1},
                                        out / "cache.sqlite")
    settings = Settings(batch=2, max_failures_in_a_row=2)
    with pytest.raises(RequestsFailing, match="2 requests in a row failed with HTTP 401.*Check the API key"):
        Evaluator(release, out, settings, client, params).run()
    assert server.hits == 2  # the first batch, not the whole release


def test_a_reply_cut_at_max_tokens_is_marked_truncated_and_counted(release, server, tmp_path):
    server.mode = "length"
    out = tmp_path / "out"
    done = evaluate(release, server, out)
    assert done.exit_code == 0, done.output
    results = pd.read_parquet(out / "results.parquet")
    assert len(results) == SAMPLES and results["truncated"].all() and (results["score"] == 0.0).all()
    assert json.loads(done.output)["truncated"] == SAMPLES
    assert f"{SAMPLES} replies were cut at max_tokens" in (out / "report.md").read_text()


def test_a_server_that_never_answers_fails_after_the_timeout_the_user_set(release, server, tmp_path):
    """Each request past its deadline is recorded failed, not scored; the run finishes (tests/test_deadlines.py)."""
    server.mode = "hang"
    out = tmp_path / "out"
    done = evaluate(release, server, out, "--request-timeout", "1")
    assert done.exit_code == 1
    assert (f"{SAMPLES} requests got no usable reply (deadline {SAMPLES}), e.g. {server.url}: deadline of 1 s passed"
            in done.output)
    assert pd.read_parquet(out / "results.parquet").empty


@pytest.mark.parametrize("line, says", [({"reply": ["Final Answer: 42"]}, "'reply' must be str, got list"),
                                        ({"reply": None}, "'reply' must be str, got NoneType"),
                                        ({"reply": "x", "mode": 3}, "'mode' must be str, got int"),
                                        ({"reply": "x", "config": {"a": 1}}, "'config' must be str or null, got dict")])
def test_a_replay_line_of_the_wrong_type_is_named(release, tmp_path, line, says):
    from curate.evaluation.dataset import ReleaseData

    sample_id = ReleaseData(release).samples()[0].id
    replies = tmp_path / "replies.jsonl"
    replies.write_text(json.dumps({"sample_id": sample_id, "reply": "Final Answer: 42"}) + "\n"
                       + json.dumps({"sample_id": sample_id, **line}) + "\n")
    done = CliRunner().invoke(main, ["evaluate", str(release), "--backend", "replay", "--predictions", str(replies),
                                     "--out", str(tmp_path / "out")])
    assert done.exit_code == 1 and f"replies.jsonl:2: {says}" in done.output, done.output


def test_a_store_from_before_that_holds_failures_as_predictions_asks_them_again(release, server, tmp_path):
    """Older runs stored a failed request as a prediction ("no reply: ...") scored 0; the rerun
    never asked again. Opening such a store drops them, so the next run asks the server."""
    import sqlite3

    out = tmp_path / "out"
    assert evaluate(release, server, out).exit_code == 0 and server.hits == SAMPLES
    db = sqlite3.connect(out / "predictions.sqlite")
    db.execute("UPDATE predictions SET error = 'no reply: AuthenticationError: 401', answer = 'null', method = 'none'")
    db.commit()
    db.close()
    server.hits = 0
    again = evaluate(release, server, out)
    assert again.exit_code == 0 and server.hits == 0  # every answer comes from the response cache
    results = pd.read_parquet(out / "results.parquet")
    assert len(results) == SAMPLES and (results["score"] == 1.0).all()

"""Issue 46: each prediction records how long its model calls took (`latency_s`, summed over turns)
and the client's retries, from `predictions.sqlite` to `samples.jsonl`, the viewer and the report's
Latency table. Tested against a real local HTTP server that sleeps a known time per request, so a
latency is bounded from below (never from above: timing is noisy here). Replies not timed (a cache
hit, a replay line without a time, gold) say null; a store from before the columns opens and migrates."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyarrow as pa
import pytest
from click.testing import CliRunner

from curate.curation.cli import main
from curate.curation.sample import Sample
from curate.curation.table import Table
from tests.files import release_of

pytestmark = pytest.mark.timeout(120)
SLEEP = 0.2  # seconds the server takes for every request, a failed try included


class SleepyServer:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 that sleeps SLEEP per request. A request
    whose prompt holds a marker of `retry_once` fails its first try with a 500 (Retry-After: 0),
    one holding a marker of `refuse` always gets a 400; `hits` counts requests."""

    def __init__(self, retry_once: tuple[str, ...] = (), refuse: tuple[str, ...] = ()) -> None:
        self.hits, self.seen = 0, set()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                outer.hits += 1
                time.sleep(SLEEP)
                text = json.dumps(body["messages"])
                asked = (text, len(body["messages"]))  # one request: its conversation so far
                if any(m in text for m in refuse):
                    self.answer(400, {"error": {"message": "refused"}})
                elif any(m in text for m in retry_once) and asked not in outer.seen:
                    outer.seen.add(asked)
                    self.answer(500, {"error": {"message": "busy"}}, {"Retry-After": "0"})
                else:
                    self.answer(200, {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                                      "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                          "role": "assistant", "content": "Final Answer: 42"}}],
                                      "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})

            def answer(self, status, body, headers=None):
                data = json.dumps(body).encode()
                self.send_response(status)
                for key, value in {"content-type": "application/json", "content-length": str(len(data)),
                                   **(headers or {})}.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def release(tmp_path):
    table = Table(name="towns", body=pa.table({"town": ["Oslo", "Bergen"], "people": [42, 290]}))
    samples = [Sample(task="TCO/general_operations", question=f"How many people live in Oslo? (question {n})",
                      answer=42, answer_type="number", table_ids=(table.id,)) for n in range(3)]
    return release_of(tmp_path, samples, [table])


def evaluate(release, out, *extra):
    return CliRunner().invoke(main, ["evaluate", str(release), "--out", str(out), "--json", "-q", *map(str, extra)])


def live(release, server, out, *extra):
    return evaluate(release, out, "--backend", "openai", "--base-url", server.url, "--model", "tiny",
                    "--retries", "2", *extra)


def log(out) -> dict[tuple[str, str], dict]:
    """samples.jsonl by (question number, mode)."""
    lines = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return {(line["question"].rsplit(" ", 1)[-1].rstrip(")"), line["mode"]): line for line in lines}


def stored(out) -> list[dict]:
    db = sqlite3.connect(out / "predictions.sqlite")
    db.row_factory = sqlite3.Row
    rows = [dict(r) for table in ("predictions", "failures") for r in db.execute(f"SELECT * FROM {table}")]
    db.close()
    return rows


def test_each_sample_records_its_model_calls_latency_and_retries_summed_over_turns(release, tmp_path):
    server = SleepyServer(retry_once=("(question 0)",), refuse=("(question 2)",))
    try:
        out = tmp_path / "out"
        done = live(release, server, out, "--modes", "tcot,treethinker", "--allow-partial")
    finally:
        server.close()
    assert done.exit_code == 0, done.output
    lines = log(out)
    # question 0: each turn's first try failed and was retried (tcot 1 turn, treethinker 2)
    assert lines["0", "tcot"]["retries"] == 1 and lines["0", "tcot"]["latency_s"] >= 2 * SLEEP
    assert lines["0", "treethinker"]["retries"] == 2 and lines["0", "treethinker"]["latency_s"] >= 4 * SLEEP
    assert lines["1", "tcot"]["retries"] == 0 and lines["1", "tcot"]["latency_s"] >= SLEEP
    assert lines["1", "treethinker"]["retries"] == 0 and lines["1", "treethinker"]["latency_s"] >= 2 * SLEEP
    # question 2: refused, not scored, and still timed (one try of the first turn)
    for mode in ("tcot", "treethinker"):
        failed = lines["2", mode]
        assert failed["failure"] == "HTTP 400" and failed["score"] is None
        assert failed["retries"] == 0 and failed["latency_s"] >= SLEEP
    # the store holds what the log says
    by_key = {(r["sample_id"], r["mode"]): r for r in stored(out)}
    assert all(by_key[line["sample_id"], line["mode"]]["latency_s"] == line["latency_s"]
               and by_key[line["sample_id"], line["mode"]]["retries"] == line["retries"] for line in lines.values())
    # the report: a Latency table per model and mode, over the replies (not the refused requests)
    latency = json.loads((out / "summary.json").read_text())["latency"]
    assert list(latency) == ["openai:tiny"] and sorted(latency["openai:tiny"]) == ["tcot", "treethinker"]
    tcot = latency["openai:tiny"]["tcot"]
    assert tcot["n"] == 2 and tcot["retries"] == 1 and tcot["max"] >= 2 * SLEEP
    assert tcot["max"] >= tcot["p90"] >= tcot["median"] >= SLEEP
    assert latency["openai:tiny"]["treethinker"]["median"] >= 2 * SLEEP
    report = (out / "report.md").read_text()
    assert "## Latency (seconds per sample" in report and "| model | mode | timed | median | p90 | max | retries |" in report
    assert f"| openai:tiny | tcot | 2 | {tcot['median']:.2f} | {tcot['p90']:.2f} | {tcot['max']:.2f} | 1 |" in report
    # the viewer's sample carries it too
    page = (out / "report.html").read_text()
    island = page.split('id="curate-samples">', 1)[1].split("</script>", 1)[0]
    shown = {(i["id"], i["mode"]): i["by"]["openai:tiny"] for i in json.loads(island)["items"]}
    assert {k: (v["latency"], v["retries"]) for k, v in shown.items()} == {
        (line["sample_id"], line["mode"]): (line["latency_s"], line["retries"]) for line in lines.values()}
    from tests.browser import Browser, find_chromium

    chromium = find_chromium()
    if chromium:  # and the page shows it (the viewer's tests skip without a browser too)
        browser = Browser(chromium)
        try:
            browser.open(out / "report.html")
            browser.click("#sample-list tbody tr:nth-child(1)")
            browser.wait_for("!!document.querySelector('#sample-detail .latency')")
            opened = browser.evaluate("[...document.querySelectorAll('#sample-list tr.open td')].map(t => t.textContent)")
            text = browser.evaluate("document.querySelector('#sample-detail .latency').textContent")
        finally:
            browser.close()
        line = next(v for v in lines.values() if [v["sample_id"], v["mode"]] == [opened[0], opened[2]])
        want = ("latency: not timed" if line["latency_s"] is None else
                f"latency: {line['latency_s']:.2f} s (model calls, all turns); retries: {line['retries']}")
        assert text == want


# the store as it was before latency was recorded (finish_reason was added to such stores when opened)
OLD_PREDICTIONS = """CREATE TABLE predictions (
    key TEXT PRIMARY KEY, model TEXT, sample_id TEXT, mode TEXT, config TEXT, reply TEXT, answer TEXT,
    method TEXT, program TEXT, program_output TEXT, error TEXT, turns TEXT, prompt_tokens INTEGER,
    completion_tokens INTEGER, at REAL, finish_reason TEXT DEFAULT '')"""
OLD_FAILURES = """CREATE TABLE failures (
    key TEXT PRIMARY KEY, model TEXT, sample_id TEXT, mode TEXT, config TEXT, failure TEXT, error TEXT, at REAL)"""


def test_a_store_from_before_latency_migrates_and_a_cache_hit_is_not_timed(release, tmp_path):
    server = SleepyServer(refuse=("(question 2)",))
    try:
        out = tmp_path / "out"
        assert live(release, server, out, "--allow-partial").exit_code == 0
        # rewrite the store as one from before the columns: its predictions and failures, without them
        rows = stored(out)
        (out / "predictions.sqlite").unlink()
        db = sqlite3.connect(out / "predictions.sqlite")
        db.execute(OLD_PREDICTIONS)
        db.execute(OLD_FAILURES)
        for row in rows:
            table, width = ("failures", 8) if row.get("failure") else ("predictions", 16)
            kept = {k: v for k, v in row.items() if k not in ("latency_s", "retries")}
            assert len(kept) == width
            db.execute(f"INSERT INTO {table} ({', '.join(kept)}) VALUES ({', '.join('?' * len(kept))})", list(kept.values()))
        db.commit()
        db.close()
        hits = server.hits
        assert live(release, server, out, "--allow-partial").exit_code == 0
        assert server.hits == hits + 1  # only the refused request is asked again: the old predictions are kept
        lines = log(out)
        assert lines["0", "tcot"]["score"] == 1.0 and lines["0", "tcot"]["latency_s"] is None  # never timed
        assert lines["2", "tcot"]["failure"] == "HTTP 400" and lines["2", "tcot"]["latency_s"] >= SLEEP  # asked now
        columns = {r[1] for r in sqlite3.connect(out / "predictions.sqlite").execute("PRAGMA table_info(failures)")}
        assert {"latency_s", "retries"} <= columns
        # another folder with the same response cache: the replies come from it, and were not timed now
        again = tmp_path / "again"
        again.mkdir()
        with sqlite3.connect(out / "llm-cache.sqlite") as cache, sqlite3.connect(again / "llm-cache.sqlite") as copy:
            cache.backup(copy)  # the cache's replies, its write-ahead log included
        assert live(release, server, again, "--allow-partial").exit_code == 0
    finally:
        server.close()
    assert server.hits == hits + 2
    lines = log(again)
    assert (lines["1", "tcot"]["score"], lines["1", "tcot"]["latency_s"], lines["1", "tcot"]["retries"]) == (1.0, None, None)
    assert json.loads((again / "summary.json").read_text())["latency"] == {}
    assert "Not timed: none of these predictions has a latency" in (again / "report.md").read_text()


def test_a_replay_keeps_the_times_its_lines_carry_and_gold_is_not_timed(release, tmp_path):
    from curate.evaluation.dataset import ReleaseData

    samples = ReleaseData(release).samples()
    lines = [{"sample_id": samples[0].id, "reply": "Final Answer: 42", "latency_s": 1.5, "retries": 2},
             {"sample_id": samples[1].id, "reply": "Final Answer: 42"},
             {"sample_id": samples[2].id, "reply": "Final Answer: 41", "latency_s": 0.25}]
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "replayed"
    assert evaluate(release, out, "--backend", "replay", "--predictions", replies).exit_code == 0
    found = {line["sample_id"]: (line["latency_s"], line["retries"]) for line in log(out).values()}
    assert found == {samples[0].id: (1.5, 2), samples[1].id: (None, None), samples[2].id: (0.25, None)}
    latency = json.loads((out / "summary.json").read_text())["latency"]["replay:replies.jsonl"]["tcot"]
    assert latency == {"n": 2, "median": 0.875, "p90": 1.375, "max": 1.5, "retries": 2}
    # a time that is not one is named, with its file and line
    replies.write_text(json.dumps({**lines[0], "latency_s": "fast"}) + "\n")
    done = evaluate(release, tmp_path / "bad", "--backend", "replay", "--predictions", replies)
    assert done.exit_code == 1 and "replies.jsonl:1: 'latency_s' must be seconds" in done.output, done.output
    gold = tmp_path / "gold"
    assert evaluate(release, gold, "--backend", "gold").exit_code == 0
    assert {line["latency_s"] for line in log(gold).values()} == {None}
    assert "## Latency\n" in (gold / "report.md").read_text()


def test_icot_sums_its_turns_and_one_turn_not_timed_leaves_the_sample_untimed(release, tmp_path):
    """The times here are the backend's own (a scripted one): the sum over turns is exact."""
    from curate.curation.llm.backends.scripted import ScriptedBackend
    from curate.curation.llm.client import ChatClient
    from curate.curation.llm.types import ChatResponse
    from curate.evaluation.dataset import ReleaseData
    from curate.evaluation.evaluate import Evaluator, Settings
    from curate.evaluation.selection import select

    timed, untimed = select(ReleaseData(release), limit=2)  # two samples: two sandbox sessions, not three

    def reply(request):
        if len(request.messages) == 1:  # the first turn runs code, retried once
            return ChatResponse(text="```python\nprint(len(df))\n```", latency_s=0.5, attempts=2, finish_reason="stop")
        answer_untimed = untimed.question in request.messages[0]["content"]  # its answer came from nowhere timed
        return ChatResponse(text="Final Answer: 42", latency_s=None if answer_untimed else 0.25, finish_reason="stop")

    out = tmp_path / "out"
    settings = Settings(modes=["icot"], limit=2)
    Evaluator(release, out, settings, ChatClient(ScriptedBackend(reply, "scripted")), {}).run()
    lines = {line["sample_id"]: line for line in log(out).values()}
    assert json.loads(lines[timed.id]["turns"])[0]["output"].strip() == "2"  # two turns: code, then the answer
    assert (lines[timed.id]["latency_s"], lines[timed.id]["retries"]) == (0.75, 1)
    assert (lines[untimed.id]["latency_s"], lines[untimed.id]["retries"]) == (None, None)

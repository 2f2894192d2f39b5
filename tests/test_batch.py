"""Batch files: requests exported in the OpenAI Batch API's format, outputs (OpenAI's and vLLM's
`run-batch`'s) read back, in evaluation and in a build's model stages; errors that name the server."""

from __future__ import annotations

import json
import random
import socket

import pytest
from click.testing import CliRunner

from curate.curation.cli import main
from curate.curation.llm import BACKENDS
from curate.curation.llm.batch import BatchError, read_outputs, request_id
from curate.curation.llm.types import ChatRequest, user

BACKENDS.register("canned", "tests.canned_backend:CannedBackend")


def output_line(custom_id: str, reply: str, model: str, style: str = "vllm") -> dict:
    """One line of a batch output as vLLM's `run-batch` writes it, or as OpenAI's Batch API does."""
    body = {"id": f"chatcmpl-{custom_id[-8:]}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}
    if style == "vllm":
        return {"id": f"vllm-{custom_id[-6:]}", "custom_id": custom_id,
                "response": {"status_code": 200, "request_id": f"vllm-batch-{custom_id[-6:]}", "body": body},
                "error": None}
    return {"id": f"batch_req_{custom_id[-6:]}", "custom_id": custom_id,
            "response": {"status_code": 200, "request_id": custom_id[-10:], "body": body}, "error": None}


def run_batch(requests_file, out_file, reply, model_named=None, style="vllm"):
    """A stand-in for the remote batch runner: every request line answered by `reply(body)`, in shuffled order."""
    lines = [json.loads(line) for line in requests_file.read_text().splitlines() if line.strip()]
    random.Random(7).shuffle(lines)
    out_file.write_text("".join(json.dumps(output_line(r["custom_id"], reply(r["body"]),
                                                       model_named or r["body"]["model"], style)) + "\n"
                                for r in lines))
    return lines


def test_batch_outputs_are_read_in_either_shape_and_a_bad_line_is_named(tmp_path):
    ok = request_id("m", ChatRequest(user("a")))
    failed = request_id("m", ChatRequest(user("b")))
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(output_line(ok, "Final Answer: 3", "m", "openai")) + "\n"
                    + json.dumps({"id": "x", "custom_id": failed, "response": {"status_code": 400, "body": {
                        "error": {"message": "too long"}}}, "error": None}) + "\n")
    replies = read_outputs(path)
    assert replies[ok].text == "Final Answer: 3" and replies[ok].completion_tokens == 3
    assert replies[failed].failure == "HTTP 400" and "too long" in replies[failed].error
    # the custom_id is the request: another model, parameter or message is another id
    assert len({ok, request_id("n", ChatRequest(user("a"))), request_id("m", ChatRequest(user("a"), {"seed": 1}))}) == 3
    path.write_text(path.read_text() + '{"sample_id": "s1", "reply": "x"}\n')
    with pytest.raises(BatchError, match=r"out.jsonl:3: a batch output line"):
        read_outputs(path)


def test_a_failed_batch_reply_stays_pending_and_a_kept_one_leaves_the_batch_file(tmp_path):
    from curate.curation.llm.batch import ReplyStore, append_requests, bring_back, request_line

    asked = [ChatRequest(user(q)) for q in ("a", "b", "a")]
    batches = tmp_path / "batches"
    assert append_requests(batches / "judge.jsonl", [request_line("m", r) for r in asked]) == 2  # "a" once
    ok, failed = (request_id("m", r) for r in asked[:2])
    (tmp_path / "out.jsonl").write_text(json.dumps(output_line(ok, "yes", "m")) + "\n" + json.dumps(
        {"id": "x", "custom_id": failed, "response": None, "error": {"code": "server_error", "message": "boom"}}) + "\n")
    assert bring_back([tmp_path / "out.jsonl"], tmp_path / "c.sqlite", batches) == {"replies": 2, "kept": 1, "pending": 1}
    assert [json.loads(line)["custom_id"] for line in (batches / "judge.jsonl").read_text().splitlines()] == [failed]
    assert ReplyStore(tmp_path / "c.sqlite").get([ok, failed])[ok].text == "yes"


def gold_by_request(release, model, modes, params, tasks):
    """{custom_id: gold reply} of every sample x mode of the release, as `curate evaluate` would ask it."""
    from curate.curation.llm.client import ChatClient
    from curate.curation.llm.backends.scripted import ScriptedBackend
    from curate.evaluation.evaluate import Evaluator, Item, Settings
    from curate.evaluation.gold import gold_reply
    from curate.evaluation.modes import effective_mode, task_rules

    ev = Evaluator(release, release.parent / "unused", Settings(modes=modes, tasks=tasks), ChatClient(ScriptedBackend(str)), params)
    out = {}
    for sample in ev.samples():
        for mode in modes:
            for config in ev.configs:
                request = ChatRequest(ev._messages(Item(sample, mode, config, "")), params)
                answers_with = "sql" if task_rules(sample.task).get("answer") == "sql" else effective_mode(mode, sample.task)
                out[request_id(model, request)] = gold_reply(sample, mode, answers_with)
    return out


@pytest.mark.parametrize("style", ["vllm", "openai"])
def test_exported_requests_answered_by_the_gold_replay_as_a_batch_output_and_score_one(small_release, tmp_path, style):
    """`--export-requests` asks nothing (the server named does not exist); the gold replies, written as
    a batch output in another order (vLLM's shape, or OpenAI's naming a dated model), replay to 1.000."""
    requests = tmp_path / "requests.jsonl"
    modes = ["tcot", "pot"] if style == "vllm" else ["tcot"]  # pot's programs run in the sandbox: once is enough
    common = ["--modes", ",".join(modes), "--tasks", "TCO/,DA/", "--limit", "6", "-q"]
    done = CliRunner().invoke(main, ["evaluate", str(small_release), "--model", "tiny", "--base-url",
                                     "http://127.0.0.1:9/v1", "--export-requests", str(requests),
                                     "--out", str(tmp_path / "export"), *common])
    assert done.exit_code == 0, done.output
    lines = [json.loads(line) for line in requests.read_text().splitlines()]
    assert f"{len(lines):,} requests written to {requests}" in done.output and len(lines) == 6 * len(modes)
    assert {(r["method"], r["url"], r["body"]["model"]) for r in lines} == {("POST", "/v1/chat/completions", "tiny")}
    assert lines[0]["body"]["temperature"] == 0.0 and lines[0]["body"]["messages"][-1]["role"] == "user"
    gold = gold_by_request(small_release, "tiny", modes, {"temperature": 0.0, "max_tokens": 1024},
                           ["TCO/", "DA/"])
    assert {r["custom_id"] for r in lines} <= set(gold)
    output = tmp_path / "output.jsonl"
    run_batch(requests, output, lambda body: gold[request_id("tiny", ChatRequest(
        tuple(body["messages"]), {k: v for k, v in body.items() if k not in ("model", "messages")}))],
        model_named="tiny-2025-01-01" if style == "openai" else None, style=style)
    replay = ["evaluate", str(small_release), "--backend", "replay", "--predictions", str(output),
              "--out", str(tmp_path / "scored"), "--json", *common]
    if style == "openai":  # the replies name a dated model: the one exported for is given
        refused = CliRunner().invoke(main, replay)
        assert refused.exit_code == 1 and "--model names the model they were" in refused.output
        replay += ["--model", "tiny"]
    scored = CliRunner().invoke(main, replay)
    assert scored.exit_code == 0, scored.output
    import pandas as pd

    results = pd.read_parquet(tmp_path / "scored" / "results.parquet")
    assert len(results) == len(lines) and set(results["mode"]) == set(modes)
    wrong = results[results["score"] != 1.0]
    assert wrong.empty, wrong[["task", "mode", "gold", "answer", "error"]].head(10).to_string()


def test_a_build_stage_stops_writing_a_batch_and_goes_on_with_its_replies_for_each_round(tmp_path):
    """The phrase stage in batch mode: round 1 writes its requests and stops naming the file; the
    replies brought back answer them; a reply that does not parse is asked again (round 2) with the
    parse error; then the stage finishes, with no request sent to the model itself."""
    from curate.curation.llm.batch import bring_back
    from curate.curation.llm.types import ModelUnavailable
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.pipeline.runner import run_stage
    from tests.canned_backend import CannedBackend
    from tests.test_llm_writing import dataset, sql_sample

    kept = sql_sample("SELECT town FROM towns WHERE people > 500", "Which town has people greater than 500?")
    retried = sql_sample("SELECT town FROM towns WHERE people < 100", "Which town has people less than 100?")
    sql = dataset(tmp_path, "sql", [kept, retried])
    CannedBackend.calls_by_model.pop("writer", None)
    config = {"generator": {"backend": "canned", "model": "writer", "batch": True}, "tasks": ["MMQA/"]}

    def reply(body):
        last = body["messages"][-1]["content"]
        if "could not be read" in last:
            return '{"question": "Which towns have under 100 people?"}'
        return '{"question": "Which towns are home to over 500 people?"}' if "greater than 500" in last else "junk"

    batches = tmp_path / "batches"
    for round_ in (1, 2):
        with pytest.raises(ModelUnavailable, match=r"wait for their batch replies in .*batches/generator.jsonl"):
            run_stage("phrase", config, [sql, sql], tmp_path / "stages", LocalExecutor(1))
        sent = run_batch(batches / "generator.jsonl", tmp_path / f"out{round_}.jsonl", reply)
        assert len(sent) == (2 if round_ == 1 else 1)  # the second round asks again only the unreadable reply
        counts = bring_back([tmp_path / f"out{round_}.jsonl"], tmp_path / "llm-cache.sqlite", batches)
        assert counts == {"replies": len(sent), "kept": len(sent), "pending": 0}
    run = run_stage("phrase", config, [sql, sql], tmp_path / "stages", LocalExecutor(1))
    assert run.report["by_reason"] == {"kept": 2} and not CannedBackend.calls_by_model.get("writer")
    assert not (batches / "generator.jsonl").exists()


def test_a_dead_server_is_named_with_what_failed_and_how_long_after_one_preflight_request(small_release, tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    done = CliRunner().invoke(main, ["evaluate", str(small_release), "--model", "tiny", "--base-url", url,
                                     "--retries", "1", "--tasks", "TCO/", "--out", str(tmp_path / "out"), "-q"])
    assert done.exit_code == 1
    message = " ".join(done.output.split())
    assert "the first request got no reply, so the other" in message and "were not sent" in message
    assert f"{url}: APIConnectionError: Connection error. (2 tries in " in message


class GoldServer:
    """A real OpenAI-compatible HTTP server on localhost that answers each request with the reply
    `answers` holds for its custom_id, counting what it was asked."""

    def __init__(self, answers: dict[str, str]) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # noqa: A002
                pass

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.asked += 1
                custom_id = request_id(body["model"], ChatRequest(tuple(body["messages"]), {
                    k: v for k, v in body.items() if k not in ("model", "messages")}))
                data = json.dumps(output_line(custom_id, answers.get(custom_id, "no idea"), body["model"])
                                  ["response"]["body"]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.asked = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_audit_candidates_go_through_a_batch_file_or_a_live_server_and_are_cached(small_release, tmp_path):
    """`curate audit --model M --export-requests` writes `curate evaluate --modes pot`'s requests for the
    golds without SQL; a batch output answering three of them gives those three candidates, and so does
    the same model asked live (a real HTTP server), whose replies the workspace caches. (Three, not all:
    each candidate program runs in the sandbox.)"""
    from curate.evaluation.candidates import replayed_answers

    requests, output, workspace = tmp_path / "candidates.jsonl", tmp_path / "out.jsonl", tmp_path / "ws"
    done = CliRunner().invoke(main, ["audit", str(small_release), "--model", "tiny", "--export-requests",
                                     str(requests), "-w", str(workspace)])
    assert done.exit_code == 0 and "candidate requests written to" in done.output, done.output
    lines = [json.loads(line) for line in requests.read_text().splitlines()]
    gold = gold_by_request(small_release, "tiny", ["pot"], {"temperature": 0.0, "max_tokens": 1024}, None)
    assert len(lines) > 3 and {r["custom_id"] for r in lines} <= set(gold)
    three = {r["custom_id"]: gold[r["custom_id"]] for r in lines[:3]}
    output.write_text("".join(json.dumps(output_line(k, reply, "tiny")) + "\n" for k, reply in three.items()))
    answers, programs = replayed_answers(str(small_release), str(output), "bwrap")
    assert len(answers) == len(programs) == 3
    server = GoldServer(three)  # the others get a reply without a program: no candidate
    try:
        live = CliRunner().invoke(main, ["audit", str(small_release), "--model", "tiny", "--base-url", server.url,
                                         "--limit", "1", "-w", str(workspace)])
    finally:
        server.close()
    assert live.exit_code in (0, 1) and isinstance(live.exception, (SystemExit, type(None))), live.output
    from curate.curation.llm.cache import ResponseCache

    assert server.asked == len(lines) == ResponseCache(workspace / "llm-cache.sqlite").count()  # each asked once, kept


def test_curate_build_stops_naming_the_batch_file_and_goes_on_with_replies(tmp_path):
    """`curate build` with a role in batch mode: exit 1 naming `<workspace>/batches/generator.jsonl`;
    `--replies OUTPUT` brings the replies back and the build goes on past the stage."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "towns.csv").write_text("town,people\nOslo,700\nBergen,290\nBodo,52\n")
    config = tmp_path / "build.toml"
    config.write_text(f'[build]\nsources = ["{tmp_path / "in"}"]\nstages = ["questions"]\n'
                      '[models.generator]\nbackend = "canned"\nmodel = "writer"\nbatch = true\n'
                      '[generate.questions]\nmax_tables = 1\ntypes = ["RH/NR/counting"]\n')
    build = ["build", str(config), "-w", str(tmp_path / "ws"), "--releases", str(tmp_path / "rel"),
             "--until", "questions", "--workers", "1", "-q"]
    stopped = CliRunner().invoke(main, build)
    requests = tmp_path / "ws" / "batches" / "generator.jsonl"
    message = " ".join(stopped.output.split())
    assert stopped.exit_code == 1 and f"{requests} (1 requests)" in message and "--replies OUTPUT" in message
    run_batch(requests, tmp_path / "out.jsonl", lambda body: '{"question": "How many towns have over 100 people?", '
                                                             '"answer": "2"}')
    went_on = CliRunner().invoke(main, [*build, "--replies", str(tmp_path / "out.jsonl"), "--json"])
    assert went_on.exit_code == 0, went_on.output
    steps = {s["stage"]: s for s in json.loads(went_on.output[went_on.output.index("{"):])["steps"]}
    assert steps["questions"]["summary"] and not requests.exists()

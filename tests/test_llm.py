"""The LLM layer: cache keys, batching, structured replies, and the HTTP retry policy.

Logic tests use the scripted backend (replies written here). The retry policy is tested against a
real HTTP server on 127.0.0.1 that answers as an OpenAI-compatible server would, failures included.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from curate.curation.llm.cache import ResponseCache
from curate.curation.llm.client import ChatClient, parse_json_object
from curate.curation.llm.backends.scripted import ScriptedBackend
from curate.curation.llm.types import ChatRequest, ChatResponse, user


def echo(request: ChatRequest) -> str:
    return "answer to " + request.messages[-1]["content"]


def client(tmp_path, model="m1", reply=echo, cache_name="cache.sqlite"):
    backend = ScriptedBackend(reply, model=model)
    return ChatClient(backend, ResponseCache(tmp_path / cache_name)), backend


def test_the_same_request_to_the_same_model_is_answered_by_the_cache(tmp_path):
    c, backend = client(tmp_path)
    first = c.complete([ChatRequest(user("2+2?"), {"temperature": 0})])
    again = c.complete([ChatRequest(user("2+2?"), {"temperature": 0})])
    assert first[0].text == again[0].text == "answer to 2+2?"
    assert len(backend.calls) == 1 and again[0].cached and not first[0].cached
    assert c.usage.requests == 1 and c.usage.cached == 1


def test_another_model_prompt_parameter_or_index_misses_the_cache(tmp_path):
    c, backend = client(tmp_path)
    base = ChatRequest(user("2+2?"), {"temperature": 0})
    c.complete([base])
    c.complete([ChatRequest(user("2+3?"), {"temperature": 0})])  # another prompt
    c.complete([ChatRequest(user("2+2?"), {"temperature": 0.7})])  # another parameter
    c.complete([ChatRequest(user("2+2?"), {"temperature": 0}, index=1)])  # another draw
    c.complete([ChatRequest(user("2+2?", system="Be brief."), {"temperature": 0})])  # another system prompt
    assert len(backend.calls) == 5
    other, other_backend = client(tmp_path, model="m2")  # the same cache file, another model
    other.complete([base])
    assert len(other_backend.calls) == 1
    assert ResponseCache(tmp_path / "cache.sqlite").count() == 6


def test_identical_requests_in_one_batch_are_sent_once_and_answers_keep_their_order(tmp_path):
    c, backend = client(tmp_path)
    replies = c.complete([ChatRequest(user(q)) for q in ("a", "b", "a", "c")])
    assert [r.text for r in replies] == ["answer to a", "answer to b", "answer to a", "answer to c"]
    assert len(backend.calls) == 3


def test_errors_are_not_cached_so_a_rerun_asks_again(tmp_path):
    state = {"fail": True}

    def flaky(request):
        return ChatResponse(error="server down") if state["fail"] else "ok"

    c, backend = client(tmp_path, reply=flaky)
    assert c.complete([ChatRequest(user("q"))])[0].error == "server down"
    state["fail"] = False
    assert c.complete([ChatRequest(user("q"))])[0].text == "ok"
    assert len(backend.calls) == 2 and c.usage.errors == 1


def test_a_broken_structured_reply_is_retried_once_with_the_parse_error(tmp_path):
    def reply(request):
        if "could not be read" in request.messages[-1]["content"]:
            return '{"answer": 4}'
        return "The answer is four."

    c, backend = client(tmp_path, reply=reply)
    [result] = c.structured([ChatRequest(user("2+2? Reply as JSON {\"answer\": number}"))],
                            lambda text: parse_json_object(text, {"answer": (int, float)}))
    assert result.value == {"answer": 4} and result.retried and not result.flagged
    assert "no JSON object found" in backend.calls[1].messages[-1]["content"]
    assert [m["role"] for m in result.exchange] == ["user", "assistant", "user", "assistant"]


def test_a_reply_broken_twice_becomes_a_flagged_record_not_a_crash(tmp_path):
    c, _ = client(tmp_path, reply=lambda r: '{"answer": "four"}')
    [result] = c.structured([ChatRequest(user("2+2?"))], lambda t: parse_json_object(t, {"answer": (int, float)}))
    assert result.flagged and result.value is None and "'answer' must be" in result.error
    assert result.exchange[-1]["content"] == '{"answer": "four"}'


def test_parse_json_object_reads_fenced_and_bare_objects():
    assert parse_json_object('Sure!\n```json\n{"a": 1}\n```', {"a": int}) == {"a": 1}
    assert parse_json_object('noise {"a": true, "b": "x"} noise', {"a": bool}) == {"a": True, "b": "x"}
    with pytest.raises(ValueError, match="must be int"):
        parse_json_object('{"a": true}', {"a": int})


def test_unknown_request_parameters_and_bad_messages_are_refused():
    with pytest.raises(ValueError, match="unknown request parameter"):
        ChatRequest(user("q"), {"temprature": 0})
    with pytest.raises(ValueError, match="role"):
        ChatRequest(({"role": "robot", "content": "q"},))


# ------------------------------------------------------------------------------ the HTTP retry policy


class FakeServer:
    """An OpenAI-compatible endpoint on 127.0.0.1 that answers from a script of status codes."""

    def __init__(self, statuses):
        self.statuses = list(statuses)
        self.hits = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                outer.hits += 1
                status = outer.statuses.pop(0) if outer.statuses else 200
                if status == 200:
                    payload = {"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": "pong"}}],
                               "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}
                else:
                    payload = {"error": {"message": f"status {status}", "type": "error"}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if status == 429:
                    self.send_header("retry-after", "0")
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def http_backend():
    from curate.curation.llm.backends.openai_backend import OpenAIBackend

    servers = []

    def make(statuses, **settings):
        server = FakeServer(statuses)
        servers.append(server)
        return server, OpenAIBackend("tiny", base_url=server.url, backoff=0.01, retries=3, timeout=5, **settings)

    yield make
    for s in servers:
        s.close()


def test_rate_limits_and_server_errors_are_retried_with_backoff(http_backend):
    server, backend = http_backend([429, 503, 500])
    [response] = backend.complete([ChatRequest(user("ping"))])
    assert response.text == "pong" and response.attempts == 4 and server.hits == 4
    assert (response.prompt_tokens, response.completion_tokens) == (3, 1)


def test_other_client_errors_are_not_retried(http_backend):
    server, backend = http_backend([400])
    [response] = backend.complete([ChatRequest(user("ping"))])
    assert "BadRequestError" in response.error and server.hits == 1 and response.attempts == 1


def test_a_request_that_keeps_failing_becomes_an_error_response(http_backend):
    server, backend = http_backend([500] * 10)
    [response] = backend.complete([ChatRequest(user("ping"))])
    assert "InternalServerError" in response.error and server.hits == 4


def test_a_dead_endpoint_is_reported_per_request_and_the_batch_goes_on(tmp_path):
    import socket

    from curate.curation.llm.backends.openai_backend import OpenAIBackend

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = OpenAIBackend("tiny", base_url=f"http://127.0.0.1:{port}/v1", backoff=0.01, retries=1, timeout=2)
    c = ChatClient(backend, ResponseCache(tmp_path / "c.sqlite"))
    replies = c.complete([ChatRequest(user("a")), ChatRequest(user("b"))])
    assert all("APIConnectionError" in r.error and r.attempts == 2 for r in replies)
    assert ResponseCache(tmp_path / "c.sqlite").count() == 0


def test_backend_identity_keys_the_cache_by_server_and_model(http_backend, tmp_path):
    server, backend = http_backend([])
    c = ChatClient(backend, ResponseCache(tmp_path / "c.sqlite"))
    c.complete([ChatRequest(user("ping"), {"temperature": 0, "max_tokens": 5})] * 2)
    c.complete([ChatRequest(user("ping"), {"temperature": 0, "max_tokens": 5})])
    assert server.hits == 1
    assert c.identity == {"backend": "openai", "base_url": server.url, "model": "tiny", "revision": ""}


def test_a_schema_constrains_decoding_as_the_backend_takes_it_and_is_part_of_the_cache_key(tmp_path):
    from curate.curation.llm.client import object_schema, structured_output_format

    schema = object_schema(answer={"type": "number"})
    assert structured_output_format("none", schema) is None
    assert structured_output_format("json_object", schema) == {"type": "json_object", "schema": schema}
    assert structured_output_format("json_schema", schema)["json_schema"]["schema"] == schema
    with pytest.raises(ValueError, match="structured_output must be one of"):
        structured_output_format("grammar", schema)

    backend = ScriptedBackend(lambda r: '{"answer": 4}', "m")
    backend.structured_output = "json_object"
    client = ChatClient(backend, ResponseCache(tmp_path / "c.sqlite"))
    [reply] = client.structured([ChatRequest(user("2+2?"))], lambda t: parse_json_object(t, {"answer": int}), schema)
    assert reply.value == {"answer": 4}
    assert backend.calls[0].params["response_format"] == {"type": "json_object", "schema": schema}
    # the same prompt without the schema is another request: decoding differed
    client.structured([ChatRequest(user("2+2?"))], lambda t: parse_json_object(t, {"answer": int}))
    assert len(backend.calls) == 2 and "response_format" not in backend.calls[1].params


# ------------------------------------------------------------------------------ several servers for one role


def test_requests_are_spread_over_several_servers_and_the_cache_key_names_the_set(http_backend, tmp_path):
    from curate.curation.llm.backends.openai_backend import OpenAIBackend

    a, _ = http_backend([])
    b, _ = http_backend([])
    backend = OpenAIBackend("tiny", base_url=f"{b.url},{a.url}", concurrency=2, backoff=0.01, timeout=5)
    c = ChatClient(backend, ResponseCache(tmp_path / "c.sqlite"))
    replies = c.complete([ChatRequest(user(f"q{i}")) for i in range(12)])
    assert all(r.ok for r in replies) and a.hits + b.hits == 12 and a.hits >= 2 and b.hits >= 2
    assert {r.raw["server"] for r in replies} == {a.url, b.url}
    assert c.identity["base_url"] == sorted([a.url, b.url])  # the set, whichever order the config lists
    assert c.usage.as_dict()["servers"] == {a.url: {"answered": a.hits, "failed": 0, "taken_out": 0},
                                            b.url: {"answered": b.hits, "failed": 0, "taken_out": 0}}


def test_a_dead_server_is_taken_out_and_its_requests_go_to_the_others_without_spending_retries(http_backend):
    import socket

    from curate.curation.llm.backends.openai_backend import OpenAIBackend

    live, _ = http_backend([])
    with socket.socket() as s:  # a port nothing listens on: a server that died
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    backend = OpenAIBackend("tiny", base_url=[dead, live.url], concurrency=1, retries=0, timeout=5)
    replies = backend.complete([ChatRequest(user(f"q{i}")) for i in range(6)])
    assert all(r.ok and r.raw["server"] == live.url for r in replies) and live.hits == 6  # none lost, none twice
    report = backend.server_report()
    assert report[dead]["answered"] == 0 and report[dead]["taken_out"] == 1
    assert report[dead]["reason"].startswith("no connection")


def test_a_server_failing_again_and_again_is_taken_out_after_that_many_in_a_row(http_backend):
    from curate.curation.llm.backends.openai_backend import OpenAIBackend

    sick, _ = http_backend([503] * 3)
    well, _ = http_backend([])
    backend = OpenAIBackend("tiny", base_url=[sick.url, well.url], concurrency=1, retries=4, backoff=0.01, timeout=5,
                            failures_to_take_out=3)
    replies = backend.complete([ChatRequest(user(f"q{i}")) for i in range(8)])
    assert all(r.ok for r in replies) and sick.hits == 3  # taken out at its third 503: no fourth request
    assert backend.server_report()[sick.url]["reason"] == "3 failures in a row (HTTP 503)"


def test_vllm_data_parallel_settings_pass_through_to_the_engine_and_stay_out_of_the_cache_key():
    from curate.curation.llm.client import client_from_config
    from curate.curation.llm.backends.vllm_backend import VLLMBackend

    settings = {"data_parallel_size": 2, "data_parallel_backend": "ray", "data_parallel_size_local": 1,
                "data_parallel_address": "10.0.0.1", "data_parallel_rpc_port": 13345}
    backend = VLLMBackend("org/model", **settings)  # vllm itself is imported at the first batch, not here
    assert {k: backend.engine_args[k] for k in settings} == settings
    assert backend.identity() == VLLMBackend("org/model").identity()  # replicas change speed, not answers
    with pytest.raises(ValueError, match="unexpected setting.*data_paralel_size"):
        client_from_config({"backend": "vllm", "model": "org/model", "data_paralel_size": 2}, None, "model")

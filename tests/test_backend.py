"""The chat backend protocol (curate/curation/llm/backend.py) and backend settings from the command line."""

import json

import pytest
from click.testing import CliRunner

from curate.curation.cli import main
from curate.curation.llm import BACKENDS
from curate.curation.llm.backend import Backend, parse_model_args, require_backend, settings_taken
from curate.curation.llm.client import ChatClient
from curate.curation.llm.backends.scripted import ScriptedBackend


def test_every_registered_backend_implements_the_protocol(tmp_path):
    from curate.curation.llm.backends.openai_backend import OpenAIBackend
    from curate.curation.llm.backends.replay import ReplayBackend
    from curate.curation.llm.backends.vllm_backend import VLLMBackend

    (tmp_path / "p.jsonl").write_text("")
    made = [OpenAIBackend("m", base_url="http://127.0.0.1:9/v1"), VLLMBackend("m"),  # vllm is imported at first use
            ScriptedBackend(lambda r: "ok"), ReplayBackend(str(tmp_path / "p.jsonl"))]
    assert [b.kind for b in made] == ["openai", "vllm", "scripted", "replay"]
    assert {"openai", "vllm", "scripted", "replay"} <= set(BACKENDS.names())
    for backend in made:
        assert isinstance(backend, Backend)
        assert backend.identity()["backend"] == backend.kind
        assert backend.structured_output in ("json_schema", "json_object", "none")
        assert backend.server_report() is None  # one server, one engine, one script


def test_a_client_refuses_what_is_no_backend_and_says_what_it_lacks():
    class Half:
        kind = "half"

        def identity(self):
            return {"backend": "half", "model": "m"}

    with pytest.raises(TypeError, match="lacks structured_output, complete, server_report"):
        ChatClient(Half())
    assert require_backend(ScriptedBackend(lambda r: "")) is not None


def test_generic_settings_reach_only_the_backends_that_name_them():
    from curate.curation.llm.backends.openai_backend import OpenAIBackend
    from curate.curation.llm.backends.vllm_backend import VLLMBackend

    offered = {"base_url": "http://h/v1", "concurrency": 4, "timeout": 5.0, "data_parallel_size": 2}
    assert settings_taken(OpenAIBackend, offered) == {"base_url": "http://h/v1", "concurrency": 4, "timeout": 5.0}
    assert settings_taken(VLLMBackend, offered) == {"data_parallel_size": 2}  # not through its **data_parallel


def test_model_args_read_json_values_and_keep_text():
    assert parse_model_args(["tensor_parallel_size=2", "dtype=bfloat16", "enforce_eager=true",
                             'engine={"max_num_seqs": 8}', "stop=a=b"]) == {
        "tensor_parallel_size": 2, "dtype": "bfloat16", "enforce_eager": True, "engine": {"max_num_seqs": 8},
        "stop": "a=b"}
    with pytest.raises(ValueError, match="key=value"):
        parse_model_args(["nokey"])


def test_evaluate_refuses_an_unknown_backend_naming_the_known_ones(tmp_path):
    result = CliRunner().invoke(main, ["evaluate", str(tmp_path), "--backend", "nope", "--model", "m"])
    assert result.exit_code == 2 and "--backend 'nope': choose one of" in result.output
    # every name a user may give (replay among them; not scripted, which only tests use), then gold
    from curate.curation.llm.backends import offered

    assert ", ".join(offered()) + ", gold" in result.output and "replay" in offered()
    assert "scripted" in BACKENDS.names() and "scripted" not in offered()


def test_evaluate_hands_model_args_to_any_registered_backend(small_release, tmp_path):
    """A backend registered by name gets --model-arg settings: no CLI change for a new backend."""
    BACKENDS.register("canned", "tests.canned_backend:CannedBackend")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [
        "evaluate", str(small_release), "--backend", "canned", "--model", "canned-model", "--limit", "3",
        "--model-arg", "default=Final Answer: 42", "--out", str(out), "--json", "--quiet"])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "run.json").read_text())
    assert run["backend"]["backend"] == "canned"
    from tests.canned_backend import CannedBackend

    calls = CannedBackend.calls_by_model["canned-model"]
    assert len(calls) == 3


def test_replay_is_a_backend_that_answers_a_role_by_tag_and_names_a_bad_line(tmp_path):
    """`[models.<role>] backend = "replay"`: a request is answered by the line whose id is its tag;
    no such line is a failed request, never a server fault to retry; a malformed line stops with
    the file, its line and why. The identity holds the file's content, so another file is another model."""
    from curate.curation.llm.backend import RecordedBackend
    from curate.curation.llm.client import client_from_config
    from curate.curation.llm.types import ChatRequest, user

    replies = tmp_path / "judge.jsonl"
    replies.write_text(json.dumps({"sample_id": "smp-1", "reply": "yes"}) + "\n\n"
                       + json.dumps({"source_id": "42", "reply": "no"}) + "\n")
    client, params = client_from_config({"backend": "replay", "predictions": str(replies), "temperature": 0.0},
                                        None, "judge")
    assert isinstance(client.backend, RecordedBackend) and params == {"temperature": 0.0}
    got = client.complete([ChatRequest(user("q"), tag="smp-1"), ChatRequest(user("q"), tag="42"),
                           ChatRequest(user("q"), tag="smp-2")])
    assert [r.text for r in got[:2]] == ["yes", "no"]
    assert not got[2].ok and not got[2].transient and "judge.jsonl: no line for 'smp-2'" in got[2].error
    assert [n for n, _ in client.backend.records()] == [1, 3]
    identity = client.identity
    replies.write_text(json.dumps({"sample_id": "smp-1", "reply": ["a list"]}) + "\n")
    again, _ = client_from_config({"backend": "replay", "predictions": str(replies)}, None)
    assert again.identity != identity and again.identity["model"] == "judge.jsonl"
    with pytest.raises(ValueError, match=r"judge.jsonl:1: 'reply' must be str, got list"):
        again.backend.records()
    replies.write_text('{"reply": "x"}\n')
    with pytest.raises(ValueError, match=r'judge.jsonl:1: each line is \{"sample_id" or "source_id", "reply"\} '
                                         r"\(KeyError: 'sample_id'\)"):
        client_from_config({"backend": "replay", "predictions": str(replies)}, None)[0].backend.records()


def test_evaluate_asks_for_what_a_backend_cannot_do_without(tmp_path):
    for backend, needs in (("replay", "--predictions"), ("openai", "--model")):
        result = CliRunner().invoke(main, ["evaluate", str(tmp_path), "--backend", backend])
        assert result.exit_code == 2 and f"--backend {backend} needs {needs}" in result.output

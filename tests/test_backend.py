"""The chat backend protocol (curation/llm/backend.py) and backend settings from the command line."""

import json

import pytest
from click.testing import CliRunner

from curation.cli import main
from curation.llm import BACKENDS
from curation.llm.backend import Backend, parse_model_args, require_backend, settings_taken
from curation.llm.client import ChatClient
from curation.llm.backends.scripted import ScriptedBackend


def test_every_registered_backend_implements_the_protocol():
    from curation.llm.backends.openai_backend import OpenAIBackend
    from curation.llm.backends.vllm_backend import VLLMBackend

    made = [OpenAIBackend("m", base_url="http://127.0.0.1:9/v1"), VLLMBackend("m"),  # vllm is imported at first use
            ScriptedBackend(lambda r: "ok")]
    assert [b.kind for b in made] == ["openai", "vllm", "scripted"]
    assert {"openai", "vllm", "scripted"} <= set(BACKENDS.names())
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
    from curation.llm.backends.openai_backend import OpenAIBackend
    from curation.llm.backends.vllm_backend import VLLMBackend

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
    # every registered name (a test module may have registered more), then the two that read a file
    assert ", ".join(BACKENDS.names()) + ", replay, gold" in result.output


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

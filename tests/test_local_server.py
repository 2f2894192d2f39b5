"""The local model server's start-up checks, against a stand-in server (no model, no build): a
server that dies on its first completion is reported at once with its exit signal and its log,
one that never finishes it is given up at the deadline, and neither is left running."""

from __future__ import annotations

import sys

import psutil
import pytest

from tests.conftest import ROOT
from tests.llm_server import LocalServer, ServerFailed, build_stamp, cmake_args, cpu_flags

pytestmark = pytest.mark.timeout(60)  # every wait below has its own deadline of seconds


def standin(tmp_path, mode: str) -> LocalServer:
    return LocalServer(tmp_path / "server.log", argv=[sys.executable, str(ROOT / "tests" / "standin_server.py"),
                                                      "{port}", mode])


def no_survivor(server: LocalServer) -> bool:
    return not psutil.pid_exists(server.process.pid) or psutil.Process(server.process.pid).status() == "zombie"


def test_a_server_that_crashes_on_its_first_completion_is_reported_with_its_signal_and_log(tmp_path):
    server = standin(tmp_path, "segfault")
    with pytest.raises(ServerFailed) as failure:
        server.start(timeout=30, smoke_timeout=600)  # the crash is seen from the process, not the socket's timeout
    message = str(failure.value)
    assert "died on its first completion" in message and "SIGSEGV (signal 11)" in message
    assert str(server.log) in message and "completion asked (segfault)" in message  # the log's tail, too
    assert no_survivor(server)


def test_a_server_that_never_finishes_its_first_completion_is_given_up_at_the_deadline(tmp_path):
    server = standin(tmp_path, "hang")
    with pytest.raises(ServerFailed, match="did not finish a 2-token completion within 2s"):
        server.start(timeout=30, smoke_timeout=2)
    assert no_survivor(server)


def test_a_server_whose_first_completion_fails_says_what_it_answered(tmp_path):
    server = standin(tmp_path, "error")
    with pytest.raises(ServerFailed, match="first completion failed: HTTPError: HTTP Error 500"):
        server.start(timeout=30, smoke_timeout=30)
    assert no_survivor(server)


def test_a_server_that_answers_is_started_and_killed(tmp_path):
    server = standin(tmp_path, "answer").start(timeout=30, smoke_timeout=30)
    try:
        assert server.process.poll() is None
    finally:
        server.kill()
    assert server.process.returncode == -9


def test_the_local_model_is_built_for_a_portable_target_and_stamped_with_its_flags():
    flags = cmake_args()
    assert "-DGGML_NATIVE=OFF" in flags and "-DGGML_NATIVE=ON" not in flags
    assert all(f"-DGGML_{x}=OFF" in flags for x in ("AVX512", "AMX_TILE", "AMX_INT8", "AMX_BF16"))
    if {"avx2", "fma", "f16c", "bmi2"} <= cpu_flags():
        assert "-DGGML_AVX2=ON" in flags
    assert build_stamp()["cmake_args"] == flags and any(p.startswith("llama-cpp-python") for p in build_stamp()["packages"])

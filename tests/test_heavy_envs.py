"""The background builds of the heavy test environments (tests/heavy_envs.py), on a stand-in
environment that takes no time to build: one build at a time under the lock, the waiter reusing
what the builder stamped; a failed build failing the fixture that waits on it with its log; a build
still running at the session's end killed; and the suite's order (heavy-environment tests last)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import heavy_envs
from tests.conftest import ROOT
from tests.heavy_envs import EnvBuildFailed, build_lock

STANDIN = '''
import os, time
from pathlib import Path
from tests.heavy_envs import build_lock

ENV = Path(os.environ["STANDIN_ENV"])

def ensure_env():
    if (ENV / ".ready").exists():
        return ENV
    with build_lock(ENV):
        if (ENV / ".ready").exists():
            return ENV
        ENV.mkdir(parents=True, exist_ok=True)
        with open(ENV.parent / "builds", "a") as f:
            f.write(f"{os.getpid()}\\n")
        time.sleep(0.5)  # long enough for an unlocked second build to start beside it
        (ENV / ".ready").write_text("ok\\n")
        return ENV

def broken():
    print("collecting standin==1.0")
    raise RuntimeError("pip install standin==1.0 failed: no matching distribution")

def endless():
    ENV.parent.mkdir(parents=True, exist_ok=True)
    (ENV.parent / "started").write_text("yes")
    time.sleep(600)
'''


@pytest.fixture
def standin(tmp_path, monkeypatch):
    (tmp_path / "standin_env.py").write_text(STANDIN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("STANDIN_ENV", str(tmp_path / "envs" / "standin"))
    started: list[str] = []
    yield tmp_path, started
    for name in started:  # never stop_all(): the session's own background builds are in the same table
        heavy_envs.stop(name)
        heavy_envs._builds.pop(name, None)


def test_two_builds_of_one_environment_run_one_at_a_time_and_the_second_reuses_the_first(standin):
    tmp, started = standin
    env = tmp / "envs" / "standin"
    with build_lock(env):  # both start while the lock is held: both see no stamp, then queue on the lock
        for name in ("standin-a", "standin-b"):
            heavy_envs.start(name, "standin_env:ensure_env", tmp / f"{name}.log")
            started.append(name)
        assert not (tmp / "envs" / "builds").exists()
    for name in started:
        heavy_envs.wait(name, timeout=120)
    assert len((tmp / "envs" / "builds").read_text().split()) == 1, "the environment was built twice"
    assert (env / ".ready").exists()
    for name in started:
        assert f"built: {env}" in (tmp / f"{name}.log").read_text()


def test_a_failed_background_build_fails_the_waiting_fixture_with_its_log(standin):
    tmp, started = standin
    log = tmp / "broken.log"
    heavy_envs.start("standin-broken", "standin_env:broken", log)
    started.append("standin-broken")
    with pytest.raises(EnvBuildFailed) as failed:
        heavy_envs.wait("standin-broken", timeout=120)
    message = str(failed.value)
    assert "exited with 1" in message and f"its log: {log}" in message
    assert "no matching distribution" in message  # the log's end: the build's own error


def test_a_build_still_running_at_the_end_is_killed_and_leaves_no_stamp(standin):
    tmp, started = standin
    heavy_envs.start("standin-endless", "standin_env:endless", tmp / "endless.log")
    started.append("standin-endless")
    from tests.waiting import wait_for

    assert wait_for(lambda: (tmp / "envs" / "started").exists(), timeout=60)
    process = heavy_envs._builds["standin-endless"].process
    heavy_envs.stop("standin-endless")
    assert process.poll() is not None and not (tmp / "envs" / "standin" / ".ready").exists()


def collected(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_tests_needing_a_heavy_environment_run_last_and_the_fast_run_leaves_them_out():
    from tests.heavy_envs import ENVS

    everything = collected()
    modules = [t.split("::")[0] for t in everything]
    runs = [m for i, m in enumerate(modules) if i == 0 or modules[i - 1] != m]
    assert len(runs) == len(set(runs)), "a module's tests were split up"
    heavy = {"tests/test_ray_executor.py", "tests/test_review.py", "tests/test_audit_review.py",
             "tests/test_vllm.py", "tests/test_llm_server.py", "tests/test_llm_servers.py"}
    assert set(runs[-len(heavy):]) == heavy and runs[-1] == "tests/test_llm_servers.py"
    assert runs.index("tests/test_ray_executor.py") < runs.index("tests/test_vllm.py") < runs.index(
        "tests/test_llm_server.py")
    assert [e.name for e in sorted(ENVS.values(), key=lambda e: e.order)][-1] == "llm"  # the longest build last

    fast = collected("--no-heavy-envs")
    left_out = set(everything) - set(fast)
    assert set(fast) <= set(everything) and left_out
    assert {t.split("::")[0] for t in left_out} == heavy
    # the tests of those modules that need no server stay in the fast run
    assert "tests/test_review.py::test_an_annotation_maps_to_a_decision" in fast

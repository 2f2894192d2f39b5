"""The heavy test environments (`.envs/llm`, `.envs/vllm`, `.envs/labelstudio` with its migrated
data folder, `.envs/ray`), built in the background while the rest of the suite runs.

At the start of a test session (`tests/conftest.py`) every environment that a selected test needs
and that is not ready yet is built by a process of its own (`python -m tests.heavy_envs NAME`, at a
lower CPU priority than the tests, its output in a log file); the tests that need one run last
(`pytest_collection_modifyitems`), and the fixture that needs one waits for its build. A build that
failed fails that fixture, with the exit status, the log's path and the log's end. Without a
background build (one test file run alone, say, with its environment missing) the fixture builds it
itself, as before.

Each environment's `ensure_env()` builds under a file lock of its own (`.envs/.NAME.lock`): a
background build, a fixture and another checkout that shares `.envs` never build one environment
at the same time, and the one that waited finds the environment ready (stamped `.ready`, written
last) and reuses it. A build killed half-way leaves no stamp and is redone from scratch next time.
"""

from __future__ import annotations

import fcntl
import importlib
import json
import os
import signal
import subprocess
import sys
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
WAIT_TIMEOUT = 3600.0  # seconds a fixture waits for a background build (each build step has its own deadline)
NICENESS = 10  # background builds yield the CPU to the tests running meanwhile


@dataclass(frozen=True)
class HeavyEnv:
    name: str
    fixture: str  # the session fixture in tests/conftest.py that returns it
    module: str  # has `ready() -> bool` (cheap, builds nothing) and `ensure_env()` (builds when not ready)
    order: int  # the tests needing it run after every other test, in this order (shortest build first)


ENVS = {e.name: e for e in (
    HeavyEnv("ray", "ray_env", "tests.ray_env", 1),
    HeavyEnv("labelstudio", "label_studio_template", "tests.label_studio", 2),
    HeavyEnv("vllm", "vllm_env", "tests.vllm_env", 3),
    HeavyEnv("llm", "llm_env", "tests.llm_server", 4),
)}


def read_stamp(ready: Path) -> dict | None:
    """An environment's `.ready` stamp, or None (no environment, a half-written stamp, or one from
    before stamps: plain text)."""
    try:
        stamp = json.loads(ready.read_text())
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


@contextmanager
def build_lock(env: Path) -> Iterator[None]:
    """Held while `env` is checked and built: `.envs/.NAME.lock` (flock, released when the holder
    exits, however it exits)."""
    env.parent.mkdir(parents=True, exist_ok=True)
    with open(env.parent / f".{env.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class EnvBuildFailed(RuntimeError):
    """A background build of a test environment failed or did not finish; the message says how and
    where its log is."""


@dataclass
class Build:
    name: str
    target: str  # "module:function"
    log: Path
    process: subprocess.Popen


_builds: dict[str, Build] = {}


def needed(fixturenames: set[str]) -> list[HeavyEnv]:
    return sorted((e for e in ENVS.values() if e.fixture in fixturenames), key=lambda e: e.order)


def order_of(fixturenames: set[str]) -> int:
    """0 for a test needing no heavy environment, else the latest `order` among those it needs."""
    return max((e.order for e in needed(fixturenames)), default=0)


def _module(env: HeavyEnv):
    return importlib.import_module(env.module)


def start_missing(envs: list[HeavyEnv], log_dir: Path) -> list[str]:
    """Start a background build of each of `envs` that is not ready; returns the names started."""
    started = []
    for env in envs:
        if env.name not in _builds and not _module(env).ready():
            start(env.name, f"{env.module}:ensure_env", log_dir / f"{env.name}.log")
            started.append(env.name)
    return started


def start(name: str, target: str, log: Path) -> Build:
    """`target` ("module:function") run by `python -m tests.heavy_envs` in a session of its own."""
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    with open(log, "wb") as handle:
        process = subprocess.Popen([sys.executable, "-m", "tests.heavy_envs", target], cwd=ROOT, env=env,
                                   stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    _builds[name] = Build(name, target, log, process)
    return _builds[name]


def wait(name: str, timeout: float = WAIT_TIMEOUT) -> None:
    """Wait for the background build of `name`, if one was started; raise EnvBuildFailed if it failed."""
    from tests.llm_server import exit_reason, log_tail

    build = _builds.get(name)
    if build is None:
        return
    if build.process.poll() is None:  # the tests wait on it now: it need not yield to them any more
        try:
            os.setpriority(os.PRIO_PGRP, build.process.pid, 0)
        except OSError:  # raising a priority takes root (CAP_SYS_NICE): elsewhere it stays niced
            pass
    try:
        code = build.process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(name)
        raise EnvBuildFailed(f"the background build of {name} ({build.target}) did not finish within {timeout:.0f}s; "
                             f"its log: {build.log}{log_tail(build.log, 4000)}") from None
    if code != 0:
        raise EnvBuildFailed(f"the background build of {name} ({build.target}) failed ({exit_reason(code)}); "
                             f"its log: {build.log}{log_tail(build.log, 4000)}")


def ensure(name: str):
    """What the environment's fixture returns: after its background build (if any), `ensure_env()`,
    which reuses the environment that build stamped ready, or builds it here."""
    wait(name)
    return _module(ENVS[name]).ensure_env()


def stop(name: str) -> None:
    """Kill a background build still running (its whole process group: pip, the compiler)."""
    build = _builds.get(name)
    if build is not None and build.process.poll() is None:
        try:
            os.killpg(build.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        build.process.wait(timeout=60)


def stop_all() -> list[str]:
    """At the session's end: kill the builds still running (the tests needing them did not run);
    returns their names. A killed build left no `.ready`: the next run builds again from scratch."""
    running = [name for name, b in _builds.items() if b.process.poll() is None]
    for name in running:
        stop(name)
    _builds.clear()
    return running


def main(target: str) -> int:
    os.nice(NICENESS)
    module, function = target.split(":")
    try:
        result = getattr(importlib.import_module(module), function)()
    except BaseException:  # noqa: BLE001 - the traceback is the log's end, which the waiting fixture shows
        traceback.print_exc()
        sys.stdout.flush()
        return 1
    print(f"built: {result}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

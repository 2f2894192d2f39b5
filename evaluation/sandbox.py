"""Run model-written programs safely: one process per program, limits, no network, no secrets.

Each program runs in a worker process of its own (`sandbox_worker.py`) with:
- a wall-clock timeout (the parent kills the worker's whole process group),
- CPU-time, memory (address space beyond the pre-imported libraries) and file-size limits,
- no network: a new network namespace where the system allows one (Linux, enough privilege),
  and in any case sockets that refuse,
- a scratch working directory of its own, removed afterwards,
- a minimal environment: PATH, HOME (the scratch folder), locale and thread settings; nothing of
  the parent's (API keys stay out).

Workers are started ahead of time and have pandas, numpy and matplotlib imported when a program
arrives: a program costs a process that is already warm, then the worker is replaced (a
program never sees another's leftovers). A `Session` keeps one worker for several code cells
(ICoT's interleaved turns share their variables).
"""

from __future__ import annotations

import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WORKER = Path(__file__).with_name("sandbox_worker.py")


@dataclass
class SandboxResult:
    ok: bool
    stdout: str = ""
    error: str = ""
    elapsed: float = 0.0
    figures: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "stdout": self.stdout, "error": self.error, "elapsed": round(self.elapsed, 4),
                "figures": self.figures}


@dataclass(frozen=True)
class Limits:
    timeout: float = 10.0  # wall clock, seconds
    cpu_seconds: float = 10.0
    memory_mb: int = 1024
    file_mb: int = 64
    max_output: int = 4000  # characters of output kept (the start and the end)


def _environment(scratch: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": scratch, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "MPLBACKEND": "Agg", "MPLCONFIGDIR": scratch, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit} characters cut] ...\n{text[-half:]}"


class Worker:
    """One sandboxed process, started now, pre-importing while it waits for its first program."""

    def __init__(self) -> None:
        self.scratch = tempfile.mkdtemp(prefix="curate-sandbox-")
        self.process = subprocess.Popen(
            [sys.executable, "-I", str(WORKER), self.scratch], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, cwd=self.scratch, env=_environment(self.scratch), start_new_session=True,
            text=True, bufsize=1)
        self.jobs = 0
        self.ready = False

    def _line(self, deadline: float) -> str | None:
        """The worker's next protocol line before the deadline (None: too late or it died)."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([self.process.stdout], [], [], left)
            if not readable:
                return None
            line = self.process.stdout.readline()
            if not line:
                return None  # the worker exited
            if line.startswith(("ready", "done ")):
                return line.strip()

    def run(self, code: str, tables: dict[str, str] | None, limits: Limits, start_timeout: float = 60.0
            ) -> SandboxResult:
        if not self.ready:
            if self._line(time.monotonic() + start_timeout) != "ready":
                self.kill()
                return SandboxResult(False, error="the sandbox worker did not start")
            self.ready = True
        index = self.jobs
        self.jobs += 1
        job = {"index": index, "code": code, "tables": tables or {}, "cpu_seconds": limits.cpu_seconds,
               "memory_mb": limits.memory_mb, "file_mb": limits.file_mb}
        started = time.monotonic()
        try:
            self.process.stdin.write(json.dumps(job) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            self.kill()
            return SandboxResult(False, error="the sandbox worker died before the program started")
        done = self._line(started + limits.timeout)
        elapsed = time.monotonic() - started
        result_file = Path(self.scratch) / f"result-{index}.json"
        if done != f"done {index}" or not result_file.exists():
            if elapsed < limits.timeout:  # the worker ended before the deadline: let it be reaped
                try:
                    self.process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
            alive = self.process.poll() is None
            self.kill()
            if alive:
                return SandboxResult(False, error=f"TimeoutError: the program ran past {limits.timeout:g} s", elapsed=elapsed)
            code = self.process.returncode
            reason = ("CPU time limit" if code in (-signal.SIGXCPU, -signal.SIGKILL) else
                      "file size limit" if code == -signal.SIGXFSZ else f"exit status {code}")
            return SandboxResult(False, error=f"the program was stopped: {reason}", elapsed=elapsed)
        data = json.loads(result_file.read_text())
        return SandboxResult(data["ok"], _truncate(data["stdout"], limits.max_output),
                             _truncate(data["error"], limits.max_output), data["elapsed"], data.get("figures", []))

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.scratch, ignore_errors=True)


class Sandbox:
    """A pool of warm workers; each runs one program, then is replaced.

    `run` is safe to call from several threads at once (up to `workers` programs run together).
    """

    def __init__(self, workers: int = 2, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.size = max(1, workers)
        self._idle: queue.Queue[Worker] = queue.Queue()
        self._closed = False
        self._lock = threading.Lock()
        for _ in range(self.size):
            self._idle.put(Worker())

    def run(self, code: str, tables: dict[str, str] | None = None, limits: Limits | None = None) -> SandboxResult:
        """Run `code`; `tables` maps variable names to CSV files loaded as DataFrames before it runs."""
        worker = self._idle.get()
        try:
            return worker.run(code, tables, limits or self.limits)
        finally:
            worker.kill()
            with self._lock:
                if not self._closed:
                    self._idle.put(Worker())  # a fresh one warms up while the next program waits

    def session(self, limits: Limits | None = None) -> "Session":
        return Session(limits or self.limits)

    def close(self) -> None:
        with self._lock:
            self._closed = True
        while not self._idle.empty():
            self._idle.get().kill()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


class Session:
    """One worker for several code cells that share their variables (ICoT); limits apply per cell
    (wall clock) and to the session (CPU time, memory). A cell that times out ends the session."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.worker = Worker()
        self.tables_loaded = False

    def run(self, code: str, tables: dict[str, str] | None = None) -> SandboxResult:
        if self.worker.process.poll() is not None:
            return SandboxResult(False, error="the session ended (an earlier cell was stopped)")
        load = tables if not self.tables_loaded else None
        self.tables_loaded = True
        return self.worker.run(code, load, self.limits)

    def close(self) -> None:
        self.worker.kill()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


def run_file(path: str, timeout: float = 10.0, memory_mb: int = 1024, table: str | None = None) -> SandboxResult:
    """`curate sandbox run`: one file, with `df` loaded from `table` (a CSV) when given."""
    code = Path(path).read_text()
    tables = {"df": str(Path(table).resolve())} if table else None
    with Sandbox(workers=1, limits=Limits(timeout=timeout, cpu_seconds=timeout, memory_mb=memory_mb)) as box:
        box._closed = True  # one program: no replacement worker
        return box.run(code, tables)

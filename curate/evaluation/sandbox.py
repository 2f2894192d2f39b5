"""Run model-written programs safely: each in a fresh child of a warm worker isolated by the operating system.

A worker (`sandbox_worker.py`) runs under bubblewrap (`isolation.py`), as an unprivileged user
under a seccomp filter: it sees the system and its Python read-only, a size-limited scratch
folder, its tables copied into a read-only `/input`, and nothing else (no home folder,
workspace, release or checkout; no network; no other process); memory and the number of
processes are bounded for all its processes together where a cgroup can be made. Per program:
a wall-clock timeout (the parent kills the worker), CPU-time, address-space and file-size limits.

Workers are started ahead of time and have pandas, numpy and matplotlib imported when a program
arrives. A worker forks each program into a fresh child, then kills every other process in its
PID namespace and empties its scratch, /tmp and /dev/shm before the next: a program never sees
another's leftovers (files, environment, patched modules, processes), and costs a fork, not a
new interpreter. A worker that cannot clean up, or that a program killed or stalled, is
replaced. A `Session` keeps one worker for several code cells (ICoT's interleaved turns share
their variables), run in the worker itself.

Results come back as one protocol line on the worker's stdout (the program's own stdout and
stderr are /dev/null; one that finds the descriptor can only forge its own result), read with a
bound, so whatever a program writes reaches the parent only as its truncated output. `isolation="none"` (the user's
explicit `--sandbox none`) runs the worker without namespaces, one per program.
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curate.evaluation.isolation import INPUT, SCRATCH, Cgroup, launch, program_environment, require
from curate.evaluation.isolation import WORKER as WORKER_INSIDE

WORKER = Path(__file__).with_name("sandbox_worker.py")
# Every worker is started from this one thread, which lives as long as the process: bwrap's
# --die-with-parent (PR_SET_PDEATHSIG) follows the *thread* that started it, so a worker started
# from a pool thread of `curate evaluate` was killed when that pool ended (its next program found
# it dead: "did not start", or a SIGKILL read as the CPU limit).
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-spawner")
MAX_LINE = 32 * 1024 * 1024  # bytes of one protocol line the parent will hold


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
    cpu_seconds: float = 10.0  # per process
    memory_mb: int = 1024  # beyond the imports: per process, and for all the program's processes together
    file_mb: int = 64  # one file
    disk_mb: int = 128  # everything the program writes (its scratch folder, /tmp)
    processes: int = 64  # processes and threads the program may add
    max_output: int = 4000  # characters of output kept (the start and the end)


def _reason(killed_by: int, code: int, memory: bool) -> str:
    """Why a program that did not answer ended: the signal (or status) it died of, read as the limit behind it."""
    return ("memory limit (the program and its processes together)" if memory else
            "CPU time limit" if killed_by in (signal.SIGXCPU, signal.SIGKILL) else
            "file size limit" if killed_by == signal.SIGXFSZ else
            f"signal {signal.Signals(killed_by).name}" if killed_by in signal.valid_signals() else
            f"exit status {code}")


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit} characters cut] ...\n{text[-half:]}"


class Worker:
    """One sandboxed process, started now, pre-importing while it waits for its first program."""

    def __init__(self, limits: Limits | None = None, isolation: str = "bwrap", forking: bool = False) -> None:
        limits = limits or Limits()
        support = require(isolation)
        self.isolation = isolation
        # a forking worker (bwrap only: it empties the namespace's /tmp) runs each program in a
        # fresh child and stays; else every program runs in the worker itself (a session's cells)
        self.forking = forking and isolation == "bwrap"
        self.folder = Path(tempfile.mkdtemp(prefix="curate-sandbox-"))  # the parent's side: input (and scratch)
        self.input = self.folder / "input"
        self.input.mkdir()
        self.cgroup: Cgroup | None = None
        self.recycle = ""  # why this worker must not run another program ('' while it may)
        log = open(self.folder / "worker.log", "wb")  # what the worker says before it is ready
        with log:
            if isolation == "bwrap":
                self.input_name = INPUT
                self.cgroup = Cgroup.create(support.cgroup) if support.cgroup else None
                program = [sys.executable, "-I", WORKER_INSIDE, SCRATCH, *(["--fork"] if self.forking else [])]
                self.process = _SPAWNER.submit(launch, self.folder, self.input, limits.disk_mb, program, self.cgroup,
                                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log).result()
            else:
                scratch = self.folder / "scratch"
                (scratch / "tmp").mkdir(parents=True)
                command = [sys.executable, "-I", str(WORKER), str(scratch)]
                self.input_name = str(self.input)
                environment = program_environment(str(scratch), str(scratch / "tmp"))
                self.process = _SPAWNER.submit(subprocess.Popen, command, stdin=subprocess.PIPE,
                                               stdout=subprocess.PIPE, stderr=log, cwd=str(scratch), env=environment,
                                               start_new_session=True).result()
        self.jobs = 0
        self.ready = False
        self._buffer = b""
        self._memory_events = 0

    def _line(self, deadline: float) -> str | None:
        """The worker's next protocol line before the deadline (None: too late or it died). Whatever
        else arrives is dropped, and no line is held beyond MAX_LINE bytes."""
        fd = self.process.stdout.fileno()
        skipping = False
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                if skipping:
                    skipping = False
                    continue
                if line.startswith((b"ready", b"done ")):
                    return line.decode("utf-8", "replace").strip()
            if len(self._buffer) > MAX_LINE:
                self._buffer, skipping = b"", True
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None  # the worker exited
            self._buffer += chunk

    def _stopped(self, elapsed: float, limits: Limits) -> SandboxResult:
        """What ended a program that did not answer: the deadline, or what the worker died of."""
        if elapsed < limits.timeout:  # the worker ended before the deadline: let it be reaped
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        alive = self.process.poll() is None
        memory = self._hit_memory_limit()
        self.kill()
        if alive:
            return SandboxResult(False, error=f"TimeoutError: the program ran past {limits.timeout:g} s", elapsed=elapsed)
        code = self.process.returncode
        killed_by = -code if code < 0 else code - 128 if self.isolation == "bwrap" and code > 128 else 0  # bwrap: 128+N
        return SandboxResult(False, error=f"the program was stopped: {_reason(killed_by, code, memory)}",
                             elapsed=elapsed)

    def _hit_memory_limit(self) -> bool:
        """Whether the group's memory bound was hit since the current program started."""
        return bool(self.cgroup) and self.cgroup.memory_events() > self._memory_events

    def run(self, code: str, tables: dict[str, str] | None, limits: Limits, start_timeout: float = 60.0
            ) -> SandboxResult:
        if not self.ready:
            started = time.monotonic()
            if self._line(started + start_timeout) != "ready":
                log = (self.folder / "worker.log").read_text(errors="replace")[-500:].strip()
                code = self.process.poll()
                self.kill()
                how = (f"it ended ({code})" if code is not None else
                       f"no answer in {time.monotonic() - started:.0f} s")
                return SandboxResult(False, error=f"the sandbox worker did not start: {how}" + (f": {log}" if log else ""))
            self.ready = True
        index = self.jobs
        self.jobs += 1
        copied = {}
        if self.forking:  # the last program's tables are not this one's
            for old in self.input.iterdir():
                old.unlink()
        for name, path in (tables or {}).items():  # copies: the program never sees where they came from
            shutil.copyfile(path, self.input / f"{name}.csv")
            (self.input / f"{name}.csv").chmod(0o644)
            copied[name] = f"{self.input_name}/{name}.csv"
        if self.cgroup and index == 0:
            try:
                self.cgroup.bound(limits.memory_mb * 1024 * 1024, limits.processes)
            except OSError:  # the group vanished or refuses: the per-process limits still hold
                pass
        if self.cgroup:
            try:
                self._memory_events = self.cgroup.memory_events()
            except OSError:
                pass
        job = {"index": index, "code": code, "tables": copied, "cpu_seconds": limits.cpu_seconds,
               "memory_mb": limits.memory_mb, "file_mb": limits.file_mb, "max_output": limits.max_output}
        started = time.monotonic()
        try:
            self.process.stdin.write((json.dumps(job) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            self.kill()
            return SandboxResult(False, error="the sandbox worker died before the program started")
        done = self._line(started + limits.timeout)
        elapsed = time.monotonic() - started
        prefix = f"done {index} "
        if done is None or not done.startswith(prefix):
            return self._stopped(elapsed, limits)
        try:
            data = json.loads(done[len(prefix):])
            self.recycle = str(data.get("recycle") or "")
            if "stopped_by" in data:  # the program's process died; the worker lives on
                reason = _reason(int(data["stopped_by"]), int(data["exit_status"]), self._hit_memory_limit())
                return SandboxResult(False, error=f"the program was stopped: {reason}", elapsed=elapsed)
            return SandboxResult(bool(data["ok"]), _truncate(str(data["stdout"]), limits.max_output),
                                 _truncate(str(data["error"]), limits.max_output), float(data["elapsed"]),
                                 list(data.get("figures") or []))
        except (ValueError, KeyError, TypeError):
            return SandboxResult(False, error="the program's result could not be read", elapsed=elapsed)

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if self.cgroup:  # the kernel ends every process of the namespace; its teardown takes ~1.7 s
            _reaper.hand_over(self.cgroup)  # so the group is removed in the background, not waited for here
            self.cgroup = None
        shutil.rmtree(self.folder, ignore_errors=True)


class _Reaper:
    """Removes the cgroups of killed workers once the kernel has ended their last process.

    A bubblewrap namespace takes the kernel about 1.7 s to tear down after its processes are
    killed (its mounts and namespaces), whatever the program did; waiting for that in `kill` would
    make every program cost it. `drain` waits for all of them (a sandbox's `close`)."""

    def __init__(self) -> None:
        self._pending: list[tuple[Cgroup, float]] = []
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None

    def hand_over(self, group: Cgroup) -> None:
        with self._lock:
            self._pending.append((group, time.monotonic() + 60))
            if self._thread is None or not self._thread.is_alive():
                if self._thread is None:
                    import atexit

                    atexit.register(self.drain, 10.0)  # no group left behind by a process that ends now
                self._thread = threading.Thread(target=self._run, name="sandbox-reaper", daemon=True)
                self._thread.start()
            self._lock.notify_all()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._lock.notify_all()
                    return
                pending = list(self._pending)
            finished = []
            for group, deadline in pending:
                try:
                    empty = group.processes() == 0
                except OSError:
                    empty = True
                if empty or time.monotonic() > deadline:
                    group.remove()
                    finished.append(group)
            with self._lock:
                self._pending = [(g, d) for g, d in self._pending if g not in finished]
                self._lock.notify_all()
            time.sleep(0.02)

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until every handed-over group is gone (its processes ended): True, or False at the deadline."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._pending and time.monotonic() < deadline:
                self._lock.wait(min(0.1, max(0.0, deadline - time.monotonic())))
            return not self._pending


_reaper = _Reaper()


class Sandbox:
    """A pool of warm workers; each runs one program, then is replaced.

    `run` is safe to call from several threads at once (up to `workers` programs run together).
    """

    def __init__(self, workers: int = 2, limits: Limits | None = None, isolation: str = "bwrap") -> None:
        require(isolation)  # fail closed, before any program is asked for
        self.limits = limits or Limits()
        self.isolation = isolation
        self.size = max(1, workers)
        self._idle: queue.Queue[Worker] = queue.Queue()
        self._closed = False
        self._lock = threading.Lock()
        for _ in range(self.size):
            self._idle.put(self._worker())

    def run(self, code: str, tables: dict[str, str] | None = None, limits: Limits | None = None) -> SandboxResult:
        """Run `code`; `tables` maps variable names to CSV files loaded as DataFrames before it runs."""
        worker = self._idle.get()
        reusable = False
        try:
            result = worker.run(code, tables, limits or self.limits)
            reusable = worker.forking and worker.ready and not worker.recycle and worker.process.poll() is None
            return result
        finally:
            with self._lock:
                closed = self._closed
            if reusable and not closed:
                self._idle.put(worker)  # it forks the next program from a clean namespace
            else:
                worker.kill()
                with self._lock:
                    if not self._closed:
                        self._idle.put(self._worker())  # warms up while the next program waits

    def _worker(self) -> "Worker":
        return Worker(self.limits, self.isolation, forking=True)

    def session(self, limits: Limits | None = None) -> "Session":
        return Session(limits or self.limits, self.isolation)

    def close(self) -> None:
        """Kill the idle workers; return once every process any worker started has ended."""
        with self._lock:
            self._closed = True
        while not self._idle.empty():
            self._idle.get().kill()
        _reaper.drain()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


class Session:
    """One worker for several code cells that share their variables (ICoT); limits apply per cell
    (wall clock) and to the session (CPU time, memory). A cell that times out ends the session."""

    def __init__(self, limits: Limits | None = None, isolation: str = "bwrap") -> None:
        self.limits = limits or Limits()
        self.worker = Worker(self.limits, isolation)
        self.tables_loaded = False

    def run(self, code: str, tables: dict[str, str] | None = None) -> SandboxResult:
        if self.worker.process.poll() is not None:
            return SandboxResult(False, error="the session ended (an earlier cell was stopped)")
        load = tables if not self.tables_loaded else None
        self.tables_loaded = True
        return self.worker.run(code, load, self.limits)

    def close(self) -> None:
        self.worker.kill()  # its processes are killed; the kernel's teardown goes on in the background

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


def run_file(path: str, timeout: float = 10.0, memory_mb: int = 1024, table: str | None = None,
             isolation: str = "bwrap") -> SandboxResult:
    """`curate sandbox run`: one file, with `df` loaded from `table` (a CSV) when given."""
    code = Path(path).read_text()
    tables = {"df": str(Path(table).resolve())} if table else None
    limits = Limits(timeout=timeout, cpu_seconds=timeout, memory_mb=memory_mb)
    with Sandbox(workers=1, limits=limits, isolation=isolation) as box:
        box._closed = True  # one program: no replacement worker
        return box.run(code, tables)

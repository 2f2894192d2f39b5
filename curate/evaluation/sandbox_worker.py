"""The sandbox's worker process: `python -I sandbox_worker.py SCRATCH [--fork]`. Imports pandas, numpy
and matplotlib once (that is why workers are started ahead of time), says "ready", then runs the
jobs it reads from stdin, one JSON object per line, and answers each with one line
"done N {result}" on its stdout (moved to a descriptor of its own: the program's stdout and
stderr are /dev/null).

With `--fork` (a pooled worker under bwrap) each program runs in a forked child, in its own
session with its own limits and no way to the job stream or the protocol descriptor; after it
the worker, the init (pid 1) and only legitimate process of its PID namespace, kills every other
process there and empties the scratch folder, /tmp and /dev/shm, so nothing carries to the next
program (when that cannot be done it says so and exits, and is replaced). It is not dumpable, so
no child reaches into it through /proc. Without `--fork` (a session, or `--sandbox none`) every
job runs in the worker itself, sharing one namespace.

Sockets refuse (on top of the network namespace the parent set up), and CPU time, memory and
file size are limited before a program runs. It runs with a minimal environment, in its scratch folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import select
import shutil
import signal
import socket
import sys
import time
import traceback


class _RefusedSocket(socket.socket):
    """Sockets refuse to exist (a class, so that libraries which subclass socket still import)."""

    def __init__(self, *_: object, **__: object) -> None:
        raise PermissionError("the sandbox has no network")


def _no_network(*_: object, **__: object) -> None:
    raise PermissionError("the sandbox has no network")


def _vm_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _limit(cpu_seconds: float, memory_mb: int, file_mb: int) -> None:
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + cpu_seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if memory_mb:
        limit = _vm_bytes() + memory_mb * 1024 * 1024  # what the program may allocate beyond the imports
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb * 1024 * 1024, file_mb * 1024 * 1024))


def _leave_the_network() -> bool:
    """A network namespace of our own, with no interfaces (needs privilege; else sockets refuse)."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).unshare(0x40000000) == 0  # CLONE_NEWNET
    except (OSError, AttributeError):
        return False


def _protocol_channel() -> "io.TextIOWrapper":
    """The parent's line, on a descriptor of its own: the program's stdout and stderr (and those of
    any process it starts) go to /dev/null, and its prints to a buffer, never into the protocol."""
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    sys.stdout = sys.stderr = open(os.devnull, "w")
    return channel


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit} characters cut] ...\n{text[-half:]}"


def _run(job: dict, namespace: dict, pd: object, plt: object) -> dict:
    """Run one program in `namespace`; its result as the protocol sends it."""
    for name, path in job.get("tables", {}).items():
        namespace[name] = pd.read_csv(path)  # type: ignore[attr-defined]
    out = io.StringIO()
    error = ""
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            exec(compile(job["code"], "<program>", "exec"), namespace)  # noqa: S102 - the sandbox's purpose
    except BaseException as e:  # noqa: BLE001 - every failure of the program is its result
        if isinstance(e, MemoryError):
            error = "MemoryError: the program exceeded its memory limit"
        else:
            tb = traceback.format_exception(type(e), e, e.__traceback__)
            # the program's own frames only: the worker's are noise to a model reading the error
            error = "".join(frame for frame in tb if f'File "{__file__}"' not in frame)[-2000:].strip()
    figures = [{"type": _chart_type(fig), "axes": _plotted(fig)} for fig in map(plt.figure, plt.get_fignums())]  # type: ignore[attr-defined]
    plt.close("all")  # type: ignore[attr-defined]
    limit = int(job.get("max_output", 4000))
    return {"ok": not error, "stdout": _cut(out.getvalue(), limit), "error": _cut(error, limit),
            "elapsed": time.perf_counter() - started, "figures": figures}


def _prctl(option: int, value: int) -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 4, 36
WIPED = ("/tmp", "/dev/shm")  # and the scratch folder: everything a program can write


def _in_child(job: dict, namespace: dict, pd: object, plt: object, scratch: str, result_fd: int,
              closed: list[int]) -> None:
    """The forked program: its own session, limits and empty scratch; no way back to the protocol."""
    result: dict
    try:
        os.setsid()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in closed:  # the protocol channel and the job stream belong to the worker alone
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        _limit(job["cpu_seconds"], job["memory_mb"], job.get("file_mb", 64))
        os.chdir(scratch)
        result = _run(job, dict(namespace), pd, plt)
    except BaseException as e:  # noqa: BLE001 - the worker's own failure, reported as the program's
        result = {"ok": False, "stdout": "", "error": f"the sandbox could not run the program: {e!r}", "elapsed": 0}
    try:
        data = json.dumps(result, default=str).encode() + b"\n"
        while data:
            data = data[os.write(result_fd, data):]
    finally:
        os._exit(0)


RESULT_BYTES = 64 << 20  # the most a child may send back: its output is cut to max_output before it is sent


def _collect(child: int, result_fd: int) -> tuple[bytes | None, int]:
    """What the child sent, and its wait status once it has ended (its descendants may hold the
    pipe open: they are not waited for, they are killed next). A program that writes to the result
    pipe itself, without end, is killed at RESULT_BYTES (None): the worker never holds more."""
    data = bytearray()
    status = None
    while status is None:
        if select.select([result_fd], [], [], 0.05)[0]:
            chunk = os.read(result_fd, 1 << 20)
            data += chunk
            if len(data) > RESULT_BYTES:
                os.kill(child, signal.SIGKILL)
                return None, os.waitpid(child, 0)[1]
            if not chunk or b"\n" in chunk:  # the whole result, or the end: the child is ending
                status = os.waitpid(child, 0)[1]  # (and if it is not, the parent's deadline ends the worker)
                break
            continue
        pid, code = os.waitpid(child, os.WNOHANG)
        if pid:
            status = code
    os.set_blocking(result_fd, False)
    try:
        while len(data) <= RESULT_BYTES and (chunk := os.read(result_fd, 1 << 20)):
            data += chunk
    except BlockingIOError:
        pass
    return bytes(data), status


def _others() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]  # we are 1


def _clean(scratch: str) -> str:
    """Kill every process but this one (and bwrap's init) in the PID namespace and empty every
    writable place; '' when nothing is left, else what is."""
    for _ in range(200):
        try:
            os.kill(-1, signal.SIGKILL)  # all but init (this process): the orphans are ours to reap
        except ProcessLookupError:
            pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        if not _others():
            break
        time.sleep(0.005)
    else:
        return f"processes left: {_others()}"
    left = []
    try:
        for folder in (scratch, *WIPED):
            os.chmod(folder, 0o1777 if folder in WIPED else 0o755)  # a program may have locked its own folder
            for entry in os.listdir(folder):
                path = os.path.join(folder, entry)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, onerror=_force)
                else:
                    os.unlink(path)
            left += [os.path.join(folder, e) for e in os.listdir(folder)]
    except OSError as e:
        return f"could not empty {e.filename}: {e.strerror}"
    return f"files left: {left}" if left else ""


def _force(function: object, path: str, _: object) -> None:
    """A folder a program made unreadable or unwritable: given back to its owner (us), then removed."""
    os.chmod(os.path.dirname(path), 0o700)
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o700)
        shutil.rmtree(path, onerror=_force)
    else:
        os.unlink(path)


def main(scratch: str, forking: bool) -> None:
    _leave_the_network()  # first, while this process has one thread
    os.chdir(scratch)
    os.makedirs(os.path.join(scratch, "tmp"), exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: F401 - imported ahead so programs start fast
    import numpy as np
    import pandas as pd

    socket.socket = _RefusedSocket  # type: ignore[misc]
    socket.create_connection = _no_network  # type: ignore[assignment]
    namespace: dict[str, object] = {"pd": pd, "np": np, "plt": plt, "__name__": "__main__"}
    limited = False
    channel = _protocol_channel()
    if forking:  # the programs' processes are ours to reap, and nothing of them may reach into this one
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as init (pid 1) only signals it handles arrive: none
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_DUMPABLE, 0)
        _chart_type(plt.figure())  # the lazy imports of figure reading, done once here
        plt.close("all")
        dirty = _clean(scratch)
        if dirty:
            raise SystemExit(dirty)
    channel.write("ready\n")
    for line in sys.stdin:
        job = json.loads(line)
        if not forking:  # a session: every cell in this process, sharing its variables
            if not limited:
                _limit(job["cpu_seconds"], job["memory_mb"], job.get("file_mb", 64))
                limited = True
            result = _run(job, namespace, pd, plt)
            channel.write(f"done {job['index']} {json.dumps(result, default=str)}\n")
            continue
        result_read, result_write = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(result_read)
            _in_child(job, namespace, pd, plt, scratch, result_write, [channel.fileno(), 0])
        os.close(result_write)
        data, status = _collect(child, result_read)
        os.close(result_read)
        dirty = _clean(scratch)
        try:
            if data is None:
                result = {"ok": False, "stdout": "", "error": f"the program wrote more than {RESULT_BYTES >> 20} MB "
                          "into the sandbox's result pipe", "elapsed": 0, "figures": []}
            else:
                result = json.loads(data.split(b"\n", 1)[0])
        except ValueError:
            signalled = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
            result = {"ok": False, "stopped_by": signalled, "exit_status": os.waitstatus_to_exitcode(status)}
        if dirty:
            result["recycle"] = dirty
        channel.write(f"done {job['index']} {json.dumps(result, default=str)}\n")
        if dirty:
            raise SystemExit(dirty)


def _chart_type(fig: object) -> str:
    from matplotlib.collections import PathCollection
    from matplotlib.patches import Rectangle, Wedge

    for ax in fig.axes:  # type: ignore[attr-defined]
        if any(isinstance(p, Wedge) for p in ax.patches):
            return "pie"
        if any(isinstance(p, Rectangle) for p in ax.patches):
            return "bar"
        if any(isinstance(c, PathCollection) for c in ax.collections):
            return "scatter"
        if ax.lines:
            return "line"
    return ""


def _plotted(fig: object) -> list[dict[str, object]]:
    """What each axes shows, for chart-generation scoring: bar values (as passed to bar/barh) with
    the tick label at each bar, line and scatter points, pie wedge sizes in degrees with their labels."""
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer
    from matplotlib.patches import Wedge

    try:
        fig.canvas.draw()  # type: ignore[attr-defined] # categorical tick labels exist only once drawn
    except Exception:  # noqa: BLE001 - an undrawable figure still has its artists
        pass
    axes = []
    for ax in fig.axes:  # type: ignore[attr-defined]
        bars: list[float] = []
        bar_labels: list[str] = []
        for container in ax.containers:
            if not isinstance(container, BarContainer):
                continue
            horizontal = getattr(container, "orientation", "vertical") == "horizontal"
            ticks = dict(zip((round(float(t), 6) for t in (ax.get_yticks() if horizontal else ax.get_xticks())),
                             (t.get_text() for t in (ax.get_yticklabels() if horizontal else ax.get_xticklabels()))))
            values = getattr(container, "datavalues", None)
            for n, patch in enumerate(container.patches):
                value = values[n] if values is not None else (patch.get_width() if horizontal else patch.get_height())
                bars.append(float(value))
                center = patch.get_y() + patch.get_height() / 2 if horizontal else patch.get_x() + patch.get_width() / 2
                bar_labels.append(ticks.get(round(float(center), 6), ""))
        wedges = [float(p.theta2 - p.theta1) for p in ax.patches if isinstance(p, Wedge)]
        pie_labels = [t.get_text() for t in ax.texts if t.get_text() and not t.get_text().rstrip().endswith("%")]
        lines = [{"x": [str(x) for x in line.get_xdata()], "y": [float(y) for y in line.get_ydata()]}
                 for line in ax.lines]
        points = [[[float(x), float(y)] for x, y in c.get_offsets()] for c in ax.collections
                  if isinstance(c, PathCollection)]
        axes.append({"x_labels": [t.get_text() for t in ax.get_xticklabels()], "bars": bars, "bar_labels": bar_labels,
                     "wedges": wedges, "pie_labels": pie_labels, "lines": lines, "points": points})
    return axes


if __name__ == "__main__":
    main(sys.argv[1], "--fork" in sys.argv[2:])

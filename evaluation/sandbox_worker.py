"""The sandbox's worker process: `python -I sandbox_worker.py SCRATCH`. Imports pandas, numpy and
matplotlib once (that is why workers are started ahead of time), says "ready", then runs the jobs
it reads from stdin, one JSON object per line, each in the same namespace (a session), and
answers each with one line "done N {result}" on its stdout (moved to a descriptor of its own:
the program's stdout and stderr are /dev/null).

Before the first job it drops what a program must not have: the network (sockets refuse, on top
of the network namespace the parent may have set up), and more than the allowed CPU time, memory
and file size. It runs with a minimal environment, in its scratch folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
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


def main(scratch: str) -> None:
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
    channel.write("ready\n")
    for line in sys.stdin:
        job = json.loads(line)
        if not limited:
            _limit(job["cpu_seconds"], job["memory_mb"], job.get("file_mb", 64))
            limited = True
        for name, path in job.get("tables", {}).items():
            namespace[name] = pd.read_csv(path)
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
        figures = [{"type": _chart_type(fig), "axes": _plotted(fig)} for fig in map(plt.figure, plt.get_fignums())]
        plt.close("all")
        limit = int(job.get("max_output", 4000))
        result = {"ok": not error, "stdout": _cut(out.getvalue(), limit), "error": _cut(error, limit),
                  "elapsed": time.perf_counter() - started, "figures": figures}
        channel.write(f"done {job['index']} {json.dumps(result, default=str)}\n")


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
    main(sys.argv[1])

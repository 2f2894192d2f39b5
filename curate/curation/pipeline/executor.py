"""Executors run a stage's parts. Stages never know which one runs them.

The local executor (the default) is a process pool on this machine. A Ray executor needs only
`map_unordered` over the same top-level function and picklable arguments, with the workspace
on storage that every node sees.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, Callable, Iterable, Iterator, Protocol


class Executor(Protocol):
    workers: int

    def map_unordered(self, fn: Callable[..., Any], argument_tuples: Iterable[tuple]) -> Iterator[Any]:
        """Call fn(*args) for each tuple; yield results as they finish. Errors propagate."""


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def exit_with(main_pid: int) -> None:
    """End this process as soon as `main_pid` ends (SIGKILL included), from a watching thread.

    A pool worker must not outlive the `curate` that started it: it would go on writing parts
    without the workspace's lock. Its parent is the forkserver, which itself waits for every
    worker (they hold its liveness pipe), so the worker watches the main process directly, through
    a pidfd (Linux 5.3+) or else by polling."""
    import select
    import threading

    try:
        handle = os.pidfd_open(main_pid)
    except ProcessLookupError:
        os._exit(1)
    except (OSError, AttributeError):
        handle = None

    def watch() -> None:
        if handle is not None:
            select.select([handle], [], [])  # readable once the process has ended
        else:
            while os.getppid() != 1 and pid_alive(main_pid):
                time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-main", daemon=True).start()


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LocalExecutor:
    """A process pool (forkserver: safe with the threads that Arrow and DuckDB start); its workers
    die with the process that started them.

    With one worker, or a single task, work runs in this process: no pool start-up cost.
    """

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or default_workers()

    def map_unordered(self, fn: Callable[..., Any], argument_tuples: Iterable[tuple]) -> Iterator[Any]:
        tasks = list(argument_tuples)
        if self.workers == 1 or len(tasks) <= 1:
            for args in tasks:
                yield fn(*args)
            return
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["curate.curation.pipeline.runner"])
        with ProcessPoolExecutor(max_workers=min(self.workers, len(tasks)), mp_context=context,
                                 initializer=exit_with, initargs=(os.getpid(),)) as pool:
            # keep at most 2 tasks per worker in flight so memory stays bounded and order stays stable
            pending: set = set()
            queue = iter(tasks)
            try:
                for args in queue:
                    pending.add(pool.submit(fn, *args))
                    if len(pending) >= 2 * self.workers:
                        done, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for f in done:
                            yield f.result()
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        yield f.result()
            except BaseException:
                for f in pending:
                    f.cancel()
                raise

"""The Ray executor: each part a Ray task on a cluster, the pipeline unchanged.

`curate build --executor ray --ray-address HOST:PORT` (and every command that runs stages). A part
is a task declaring its resources (CPUs, memory); the task writes its own part into the workspace,
so the workspace must be on storage every node sees, at the same path, and only the part's
marker travels back. What the executor adds to the local pool:

- **bounded retries of lost work**: a part whose worker process or node dies is run again by Ray
  (`retries` times, then the stage fails naming the part). A retried part rewrites the same bytes
  under temporary names, so it is written once. A part that fails for its own reasons (an
  exception) is not retried: the stage fails with that exception, as locally.
- **data shared by every part** (a stage's `shared`, verify's table index) is put into the object
  store once per stage instead of being sent with each part.
- **the same code everywhere**: on connecting, one task per node hashes its copy of curate's
  packages; a node that runs other code than the driver stops the run before any part is written
  (its results would differ silently).
- **the driver's death ends the work**: Ray ends a job's tasks when its driver dies, so nothing
  writes without the workspace's lock; a rerun goes on from the finished parts.

Ray is imported on first use only (`pip install 'curate[ray]'`), like datatrove's
RayPipelineExecutor, whose handling of worker crashes (retried) against application errors (not)
this follows.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

GIB = 1 << 30


class ClusterUnavailable(RuntimeError):
    """No Ray to run on: not installed, no cluster at the address, or nodes with other code."""


class PartLost(RuntimeError):
    """A part whose worker (or node) died more often than the retries allow."""


def code_hash() -> str:
    """The hash of every source and data file of curate's packages on this machine."""
    from curate.curation.pipeline.code import PACKAGES, ROOT

    digest = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*")):
            if path.suffix in (".py", ".toml", ".xml") and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _node_code() -> tuple[str, str]:
    import socket

    return socket.gethostname(), code_hash()


@dataclass
class MapStats:
    """What one `map_unordered` moved: its tasks, and bytes (with `measure`)."""

    label: str = ""  # the stage, for the runner's parts; else the function
    tasks: int = 0
    shared_objects: int = 0
    bytes_shared: int = 0  # put once into the object store
    bytes_sent: int = 0  # per task arguments
    bytes_returned: int = 0


@dataclass
class RayExecutor:
    """Parts as Ray tasks on the cluster at `address` ("auto": the one started on this machine).

    `workers`: parts in flight at most (default: twice what the cluster's CPUs hold at once).
    `measure`: count the bytes each map sends and receives (pickled sizes; for benchmarks)."""

    address: str = "auto"
    cpus_per_part: float = 1.0
    memory_per_part: int = 2 * GIB
    retries: int = 3
    workers: int | None = None
    measure: bool = False
    stats: list[MapStats] = field(default_factory=list)
    _checked: bool = False

    def connect(self) -> Any:
        """Join the cluster (once) and check that every node runs the driver's code."""
        try:
            import ray
        except ImportError as e:
            raise ClusterUnavailable(f"the ray executor needs Ray: pip install 'curate[ray]' ({e})") from None
        if not ray.is_initialized():
            _answers(self.address)
            try:
                ray.init(address=self.address, logging_level="WARNING", log_to_driver=False,
                         configure_logging=True)
            except (ConnectionError, RuntimeError, ValueError) as e:
                raise ClusterUnavailable(f"no Ray cluster at {self.address!r}: {e}") from None
            _cluster_messages_to_stderr()
        if not self._checked:
            self._check_nodes(ray)
            self._checked = True
        return ray

    def _check_nodes(self, ray: Any) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [n for n in ray.nodes() if n.get("Alive")]
        probe = ray.remote(num_cpus=0, max_retries=self.retries)(_node_code)
        found = ray.get([probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
                         .remote() for n in nodes])
        mine = code_hash()
        other = [f"{host} ({node['NodeManagerAddress']})" for node, (host, code) in zip(nodes, found) if code != mine]
        if other:
            raise ClusterUnavailable(f"Ray nodes {', '.join(other)} run other curate code than this driver "
                                     f"(code hash {mine}): install the same version on every node")

    def in_flight(self, ray: Any) -> int:
        if self.workers:
            return self.workers
        cpus = ray.cluster_resources().get("CPU", 1.0)
        return max(1, int(2 * cpus / max(self.cpus_per_part, 0.01)))

    def map_unordered(self, fn: Callable[..., Any], argument_tuples: Iterable[tuple]) -> Iterator[Any]:
        tasks = list(argument_tuples)
        if not tasks:
            return
        ray = self.connect()
        from ray.exceptions import RayTaskError, TaskCancelledError

        stats = MapStats(label=tasks[0][0] if getattr(fn, "__name__", "") == "_run_part" else fn.__name__,
                         tasks=len(tasks))
        self.stats.append(stats)
        remote = ray.remote(num_cpus=self.cpus_per_part, memory=int(self.memory_per_part), max_retries=self.retries,
                            retry_exceptions=False)(fn)
        arguments = self._shared_once(ray, tasks, stats)
        limit = self.in_flight(ray)
        pending: dict[Any, int] = {}
        queue = iter(range(len(tasks)))
        try:
            for i in queue:
                pending[remote.remote(*arguments[i])] = i
                if len(pending) >= limit:
                    yield from self._finished(ray, pending, fn, tasks, stats, RayTaskError, TaskCancelledError)
            while pending:
                yield from self._finished(ray, pending, fn, tasks, stats, RayTaskError, TaskCancelledError)
        finally:  # an error, or a caller that stopped early: nothing goes on running for it
            for ref in pending:
                ray.cancel(ref, force=True)

    def _finished(self, ray: Any, pending: dict[Any, int], fn: Callable[..., Any], tasks: list[tuple],
                  stats: MapStats, task_error: type, cancelled: type) -> Iterator[Any]:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            i = pending.pop(ref)
            try:
                result = ray.get(ref)
            except task_error as e:  # the part's own exception: the stage fails with it, as locally
                cause = getattr(e, "cause", None)
                if isinstance(cause, BaseException):
                    raise cause from None
                raise RuntimeError(str(e)) from None
            except cancelled:
                raise
            except Exception as e:  # noqa: BLE001 - a worker or node lost more often than the retries allow
                raise PartLost(f"{_describe(fn, tasks[i])}: its worker was lost {self.retries + 1} times "
                               f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
            if self.measure:
                stats.bytes_returned += len(pickle.dumps(result))
            yield result

    def _shared_once(self, ray: Any, tasks: list[tuple], stats: MapStats) -> list[tuple]:
        """Arguments that every task holds (the same object) go to the object store once."""
        counts: dict[int, int] = {}
        for args in tasks:
            for a in args:
                if isinstance(a, (dict, list)):
                    counts[id(a)] = counts.get(id(a), 0) + 1
        refs: dict[int, Any] = {}
        out = []
        for args in tasks:
            row = []
            for a in args:
                if isinstance(a, (dict, list)) and counts[id(a)] > 1:
                    if id(a) not in refs:
                        refs[id(a)] = ray.put(a)
                        stats.shared_objects += 1
                        if self.measure:
                            stats.bytes_shared += len(pickle.dumps(a))
                    row.append(refs[id(a)])
                else:
                    row.append(a)
                    if self.measure:
                        stats.bytes_sent += len(pickle.dumps(a))
            out.append(tuple(row))
        return out


def _answers(address: str, timeout: float = 10.0) -> None:
    """Fail at once when nothing listens at HOST:PORT (Ray itself would wait minutes for its GCS)."""
    import socket

    if address in ("auto", "local") or address.startswith("ray://") or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except (OSError, ValueError) as e:
        raise ClusterUnavailable(f"no Ray cluster at {address!r}: {e}") from None


def _cluster_messages_to_stderr() -> None:
    """Ray prints the cluster's messages to the driver ("(raylet) A worker died ...") on stdout,
    where `curate ... --json` writes its result: send them to stderr. (A private hook of Ray's; if
    it moves, the messages stay where Ray puts them.)"""
    try:
        from ray._private import worker
    except ImportError:  # pragma: no cover
        return
    original = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "_to_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    to_stderr._to_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


def _describe(fn: Callable[..., Any], args: tuple) -> str:
    """'stage rules, part 3' for the runner's parts; the function and its first arguments otherwise."""
    if getattr(fn, "__name__", "") == "_run_part" and len(args) >= 2:
        return f"stage {args[0]}, part {args[1]}"
    shown = ", ".join(repr(a) for a in args[:2] if isinstance(a, (str, int, float)))
    return f"{getattr(fn, '__name__', 'task')}({shown})"

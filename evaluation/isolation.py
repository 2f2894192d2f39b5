"""Isolation by the operating system for model-written programs: bubblewrap namespaces and cgroups.

A sandbox worker runs under `bwrap` (the tool Flatpak is built on) with:
- a mount namespace in which the system (`/usr`, the libraries, the Python installation) is
  read-only, the root and `/dev` are read-only, and the only writable places are a size-limited
  scratch folder (`/scratch`, also `HOME`), a size-limited private `/tmp` and a small `/dev/shm`
  (all memory, charged to the worker's cgroup); the home folder,
  the workspace, the releases and the project checkout are not there at all, and the tables a
  program reads are copied into a read-only `/input`;
- new PID, network, IPC, UTS, cgroup and user namespaces, no capabilities and no further user
  namespaces: when the worker ends, every process it started ends with it (setsid and double forks
  included), nothing outside can be seen, signalled or traced, and there is no network at all;
- `--die-with-parent` and `--new-session`, and a cleared environment (bwrap itself is started
  with the same minimal one, so `/proc/1/environ` holds no secret either).
Where the cgroup hierarchy is writable, each worker also gets a cgroup of its own: memory and the
number of processes are bounded for the program and all its descendants together. Else the
per-process limits (address space, CPU time, file size) still hold, and `curate sandbox check`
says which bounds this machine gives.

Fail closed: `require("bwrap")` raises `SandboxUnavailable` (with how to install bubblewrap) where
the namespaces cannot be set up; only an explicit `--sandbox none` runs programs without them.
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from curation.pipeline.executor import pid_alive

MODES = ("bwrap", "none")
INSTALL = ("install bubblewrap (Debian and Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install "
           "bubblewrap`; Arch: `pacman -S bubblewrap`), and allow user namespaces, or pass `--sandbox none` to "
           "run model-written code without isolation")
SCRATCH = "/scratch"
INPUT = "/input"
WORKER = "/sandbox/worker.py"
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# what Python, NumPy and matplotlib read from /etc; nothing else of it (no shadow, no ssh keys)
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf", "passwd", "group", "fonts",
        "mime.types", "alternatives")


class SandboxUnavailable(RuntimeError):
    """Model-written code cannot be isolated on this machine; the message says how to fix it."""


@dataclass(frozen=True)
class Support:
    """What this machine gives a sandboxed program."""

    bwrap: str | None
    namespaces: bool
    cgroup: str  # "v1", "v2" or "" (no group of our own: per-process limits only)
    problem: str = ""

    @property
    def isolated(self) -> bool:
        return self.namespaces

    def as_dict(self) -> dict:
        return {"bwrap": self.bwrap, "namespaces": self.namespaces, "cgroup": self.cgroup or None,
                "isolation": "bwrap" if self.isolated else None, "problem": self.problem or None,
                "bounds": {"memory_and_processes": "all processes together (cgroup)" if self.cgroup
                           else "per process only (no writable cgroup)",
                           "disk": "size-limited scratch and /tmp (tmpfs)" if self.isolated else "per file only",
                           "processes_die_with_the_worker": self.isolated}}


def _bwrap_path() -> str | None:
    """`CURATE_BWRAP` where set (a bwrap elsewhere, or none at all), else bwrap on PATH."""
    chosen = os.environ.get("CURATE_BWRAP")
    if chosen is not None:
        return chosen if os.access(chosen, os.X_OK) else None
    return shutil.which("bwrap") or next((p for p in ("/usr/bin/bwrap", "/usr/local/bin/bwrap") if os.path.exists(p)),
                                         None)


@functools.cache
def support() -> Support:
    """Probed once per process: bwrap present, its namespaces usable, a cgroup creatable."""
    cgroup = "v2" if Cgroup.probe("v2") else "v1" if Cgroup.probe("v1") else ""
    bwrap = _bwrap_path()
    if bwrap is None:
        return Support(None, False, cgroup, "bubblewrap (bwrap) is not installed")
    try:
        # the options a worker needs, --size (bubblewrap 0.5+) among them
        done = subprocess.run([bwrap, *_namespace_args(), "--ro-bind", "/", "/", "--size", "1048576", "--tmpfs", "/tmp",
                               "--remount-ro", "/", "true"], capture_output=True, text=True, timeout=30,
                              env=_base_environment())
    except (OSError, subprocess.TimeoutExpired) as e:
        return Support(bwrap, False, cgroup, f"bwrap could not run: {e}")
    if done.returncode != 0:
        return Support(bwrap, False, cgroup, f"bwrap cannot create namespaces here: {done.stderr.strip()[-300:]}")
    return Support(bwrap, True, cgroup)


def require(mode: str) -> Support:
    """The support for `mode`, or SandboxUnavailable (fail closed): `none` is only ever chosen by the user."""
    if mode not in MODES:
        raise SandboxUnavailable(f"unknown sandbox {mode!r}: choose one of {', '.join(MODES)}")
    found = support()
    if mode == "bwrap" and not found.isolated:
        raise SandboxUnavailable(f"model-written code cannot be isolated on this machine ({found.problem}); "
                                 f"{INSTALL}")
    return found


def _namespace_args() -> list[str]:
    return ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL", "--hostname", "sandbox"]


def _base_environment() -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def program_environment(home: str, tmp: str) -> dict[str, str]:
    """All a program's process sees of an environment: nothing of the parent's (API keys stay out)."""
    return {**_base_environment(), "HOME": home, "TMPDIR": tmp, "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": f"{home}/.matplotlib", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


def _python_dirs() -> list[str]:
    """The Python installation (and virtual environment) the worker imports pandas from, read-only."""
    dirs = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    dirs |= {p for p in (sys.prefix, sys.base_prefix)}  # the paths as sys.executable names them, too
    dirs.add(os.path.dirname(os.path.realpath(sys.executable)))
    kept: list[str] = []
    for d in sorted(dirs, key=len):
        if not any(d == k or d.startswith(k.rstrip("/") + "/") for k in kept) and not d.startswith("/usr/"):
            kept.append(d)
    return kept


def bwrap_command(worker_script: Path, input_dir: Path, disk_mb: int) -> list[str]:
    """`bwrap ... python -I /sandbox/worker.py /scratch`: the worker in its own namespaces."""
    bwrap = support().bwrap or "bwrap"
    size = str(max(1, disk_mb) * 1024 * 1024)
    # /tmp first: a Python installed under /tmp (a checkout there) is bound inside it below
    args = [bwrap, *_namespace_args(), "--size", size, "--tmpfs", "/tmp"]
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for name in _ETC:
        if os.path.exists(f"/etc/{name}"):
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    for d in _python_dirs():
        args += ["--ro-bind", d, d]
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(16 * 1024 * 1024), "--tmpfs", "/dev/shm",
             "--size", size, "--tmpfs", SCRATCH, "--ro-bind", str(input_dir), INPUT,
             "--ro-bind", str(worker_script), WORKER, "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", SCRATCH,
             "--clearenv"]
    for key, value in program_environment(SCRATCH, "/tmp").items():
        args += ["--setenv", key, value]
    return [*args, "--", sys.executable, "-I", WORKER, SCRATCH]


# ---------------------------------------------------------------------------------------------- cgroups


def _own_group(controller: str) -> str | None:
    """This process's cgroup path in a v1 controller's hierarchy ('' for v2's unified one)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if (controller == "" and controllers == "") or controller in controllers.split(","):
            return path
    return None


_counter = itertools.count()


def _remove_orphaned(base: Path) -> None:
    """Empty groups left by an evaluator that was killed (its pid is in their name)."""
    for folder in base.glob("curate-sandbox-*-*"):
        try:
            if not pid_alive(int(folder.name.split("-")[2])):
                folder.rmdir()
        except (OSError, ValueError, IndexError):
            pass


@dataclass
class Cgroup:
    """A cgroup of one worker: memory and process count of all its processes together."""

    version: str
    dirs: dict[str, Path] = field(default_factory=dict)  # controller -> folder

    @classmethod
    def create(cls, version: str) -> "Cgroup | None":
        name = f"curate-sandbox-{os.getpid()}-{next(_counter)}"
        group = cls(version)
        try:
            if version == "v2":
                base = Path("/sys/fs/cgroup") / (_own_group("") or "/").lstrip("/")
                wanted = set((base / "cgroup.subtree_control").read_text().split())
                if not {"memory", "pids"} <= wanted:
                    return None
                _remove_orphaned(base)
                (base / name).mkdir()
                group.dirs = {"memory": base / name, "pids": base / name}
            else:
                for controller in ("memory", "pids"):
                    own = _own_group(controller)
                    if own is None:
                        group.remove()
                        return None
                    base = Path("/sys/fs/cgroup") / controller / own.lstrip("/")
                    _remove_orphaned(base)
                    (base / name).mkdir()
                    group.dirs[controller] = base / name
        except OSError:
            group.remove()
            return None
        return group

    @classmethod
    def probe(cls, version: str) -> bool:
        if version == "v2" and not Path("/sys/fs/cgroup/cgroup.controllers").exists():
            return False
        if version == "v1" and not Path("/sys/fs/cgroup/memory/cgroup.procs").exists():
            return False
        group = cls.create(version)
        if group is None:
            return False
        group.remove()
        return True

    def procs_files(self) -> list[str]:
        return sorted({str(d / "cgroup.procs") for d in self.dirs.values()})

    def _file(self, controller: str, v1: str, v2: str) -> Path:
        return self.dirs[controller] / (v2 if self.version == "v2" else v1)

    def memory_used(self) -> int:
        return int(self._file("memory", "memory.usage_in_bytes", "memory.current").read_text())

    def processes(self) -> int:
        return int(self._file("pids", "pids.current", "pids.current").read_text())

    def bound(self, memory_bytes: int, processes: int) -> None:
        """Bound the group from now on: `memory_bytes` and `processes` beyond what it holds now."""
        self._file("memory", "memory.limit_in_bytes", "memory.max").write_text(str(self.memory_used() + memory_bytes))
        self._file("pids", "pids.max", "pids.max").write_text(str(self.processes() + processes))

    def hit_memory_limit(self) -> bool:
        try:
            if self.version == "v2":
                events = dict(line.split() for line in self._file("memory", "", "memory.events").read_text().splitlines())
                return int(events.get("oom_kill", 0)) > 0 or int(events.get("max", 0)) > 0
            return int(self._file("memory", "memory.failcnt", "").read_text()) > 0
        except (OSError, ValueError):
            return False

    def remove(self) -> None:
        for folder in set(self.dirs.values()):
            try:
                folder.rmdir()
            except OSError:
                pass

"""Isolation by the operating system for model-written programs: bubblewrap, unprivileged, with seccomp and cgroups.

A sandbox worker runs under `bwrap` (the tool Flatpak is built on), started by `sandbox_launch.py`
as an unprivileged user (uid/gid 65534 where the evaluator is root; the evaluator's own user
otherwise), so that nothing in the sandbox is ever uid 0 on the host, with:
- a mount namespace in which the system (`/usr`, the libraries, the Python installation) is
  read-only, the root, `/dev` and `/proc/sys` are read-only, `/sys` is absent, and the only
  writable places are a size-limited scratch folder (`/scratch`, also `HOME`), a private `/tmp`
  and a small `/dev/shm` (all memory, charged to the worker's cgroup); the home folder, the
  workspace, the releases and the project checkout are not there at all, and the tables a program
  reads are copied into a read-only `/input`;
- new PID, network, IPC, UTS, cgroup and user namespaces, no capabilities and no further user
  namespaces: when the worker ends, every process it started ends with it, nothing outside can be
  seen, signalled or traced, and there is no network at all;
- the seccomp filter of `seccomp.py` (mount, ptrace, bpf, keyrings, new namespaces, ... refused);
- `--die-with-parent` and `--new-session`, and a cleared environment (bwrap itself is started
  with the same minimal one, so `/proc/1/environ` holds no secret either).
Where the cgroup hierarchy is writable, each worker also gets a cgroup of its own: memory and the
number of processes are bounded for its programs and all their descendants together. Else the
per-process limits (address space, CPU time, file size) still hold, and `curate sandbox check`
says which bounds this machine gives.

Fail closed: `support()` starts a probe the way a worker starts and `require("bwrap")` raises
`SandboxUnavailable` saying why where the namespaces cannot be set up, the host sees a sandboxed
process as root, the filter is not in force or `/proc/sys` is writable; only an explicit
`--sandbox none` runs programs without isolation.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from curate.curation.pipeline.executor import pid_alive
from curate.evaluation import seccomp

MODES = ("bwrap", "none")
INSTALL = ("install bubblewrap (Debian and Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install "
           "bubblewrap`; Arch: `pacman -S bubblewrap`), and allow user namespaces, or pass `--sandbox none` to "
           "run model-written code without isolation")
SCRATCH = "/scratch"
INPUT = "/input"
WORKER = "/sandbox/worker.py"
WORKER_SCRIPT = Path(__file__).with_name("sandbox_worker.py")
LAUNCHER = Path(__file__).with_name("sandbox_launch.py")
# who model-written code runs as on the host (where the evaluator is root): nobody, owning nothing
SANDBOX_UID = SANDBOX_GID = 65534
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
    checks: dict = field(default_factory=dict)  # what a probe inside saw: host uid, seccomp, /proc/sys

    @property
    def isolated(self) -> bool:
        return self.namespaces

    def as_dict(self) -> dict:
        return {"bwrap": self.bwrap, "namespaces": self.namespaces, "cgroup": self.cgroup or None,
                "isolation": "bwrap" if self.isolated else None, "problem": self.problem or None,
                "inside": self.checks or None,
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


PROBE = """
import json, os, sys
seccomp = next(line.split()[1] for line in open('/proc/self/status') if line.startswith('Seccomp:'))
writable = []
for knob in ('kernel/core_pattern', 'vm/drop_caches', 'kernel/pid_max'):
    try:
        os.close(os.open('/proc/sys/' + knob, os.O_WRONLY))  # opened and closed: never written
        writable.append(knob)
    except OSError:
        pass
print(json.dumps({'seccomp': seccomp == '2', 'proc_sys_writable': writable}), flush=True)
sys.stdin.read()  # held while the host looks at who its processes are
"""


def host_uids(root: int) -> set[int]:
    """The real, effective, saved and filesystem uids on the host of `root` and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    uids: set[int] = set()
    pending = [root]
    while pending:
        pid = pending.pop()
        pending += children.get(pid, [])
        try:
            line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        uids |= {int(u) for u in line.split()[1:]}
    return uids


@functools.cache
def support() -> Support:
    """Probed once per process: bwrap present and started unprivileged, with its namespaces, its
    seccomp filter and a read-only /proc/sys; a cgroup creatable."""
    cgroup = "v2" if Cgroup.probe("v2") else "v1" if Cgroup.probe("v1") else ""
    bwrap = _bwrap_path()
    if bwrap is None:
        return Support(None, False, cgroup, "bubblewrap (bwrap) is not installed")
    folder = Path(tempfile.mkdtemp(prefix="curate-sandbox-probe-"))
    try:
        (folder / "input").mkdir()
        process = launch(folder, folder / "input", 1, [sys.executable, "-I", "-S", "-c", PROBE],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            seen = process.stdout.readline() if select.select([process.stdout], [], [], 30)[0] else b""
            uids = host_uids(process.pid)
        finally:
            out, err = process.communicate(timeout=30)
    except (OSError, subprocess.TimeoutExpired, seccomp.UnsupportedArchitecture) as e:
        return Support(bwrap, False, cgroup, f"bwrap could not run: {e}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if process.returncode != 0 or not seen:
        return Support(bwrap, False, cgroup, f"bwrap cannot create namespaces here: {err.decode(errors='replace').strip()[-300:]}")
    found = json.loads(seen)
    checks = {"host_uids": sorted(uids), "seccomp": found["seccomp"],
              "proc_sys": "writable: " + ", ".join(found["proc_sys_writable"]) if found["proc_sys_writable"] else "read-only"}
    problem = (f"the sandbox would run as root on the host (uids {sorted(uids)})" if 0 in uids or not uids else
               "the seccomp filter is not in force" if not found["seccomp"] else
               f"/proc/sys is {checks['proc_sys']}" if found["proc_sys_writable"] else "")
    return Support(bwrap, not problem, cgroup, problem, checks)


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
    # --as-pid-1: the worker is its namespace's init, which no process inside can kill or stop
    return ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session", "--as-pid-1",
            "--cap-drop", "ALL", "--hostname", "sandbox"]


def _base_environment() -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def program_environment(home: str, tmp: str) -> dict[str, str]:
    """All a program's process sees of an environment: nothing of the parent's (API keys stay out)."""
    return {**_base_environment(), "HOME": home, "TMPDIR": tmp, "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": f"{home}/.matplotlib", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
            # Arrow's own allocator reserves address space in large arenas, which a forked program's
            # address-space limit refuses at random ("malloc of size 64 failed"): the C library's instead
            "ARROW_DEFAULT_MEMORY_POOL": "system"}


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


def bwrap_command(folder: Path, input_dir: Path, disk_mb: int, program: list[str], seccomp_fd: int
                  ) -> tuple[list[str], list[list[str]]]:
    """`bwrap ... PROGRAM` in its own namespaces, and the folders the launcher must stage for it.

    As root, the Python folders are bound from mount points in `folder` that the launcher fills
    in a private mount namespace (the sandbox's user may not be able to reach them where they
    are, under a private /root); otherwise bwrap binds them directly."""
    bwrap = _bwrap_path() or "bwrap"
    size = str(max(1, disk_mb) * 1024 * 1024)
    # /tmp first: a Python installed under /tmp (a checkout there) is bound inside it below
    args = [bwrap, *_namespace_args(), "--seccomp", str(seccomp_fd), "--size", size, "--tmpfs", "/tmp"]
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for name in _ETC:
        if os.path.exists(f"/etc/{name}"):
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    stage = []
    for n, d in enumerate(_python_dirs()):
        if os.geteuid() == 0:
            point = folder / f"python-{n}"
            point.mkdir(mode=0o755, exist_ok=True)
            stage.append([d, str(point)])
            args += ["--ro-bind", str(point), d]
        else:
            args += ["--ro-bind", d, d]
    worker = folder / "worker.py"
    if not worker.exists():
        shutil.copyfile(WORKER_SCRIPT, worker)
        worker.chmod(0o644)
    # the sysctls are owned by host root, so read-only to the sandbox's user already; bound read-only besides
    args += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev",
             "--size", str(16 * 1024 * 1024), "--tmpfs", "/dev/shm",
             "--size", size, "--tmpfs", SCRATCH, "--ro-bind", str(input_dir), INPUT,
             "--ro-bind", str(worker), WORKER, "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", SCRATCH,
             "--clearenv"]
    for key, value in program_environment(SCRATCH, "/tmp").items():
        args += ["--setenv", key, value]
    return [*args, "--", *program], stage


def launch(folder: Path, input_dir: Path, disk_mb: int, program: list[str], cgroup: "Cgroup | None" = None,
           **popen: object) -> subprocess.Popen:
    """Start PROGRAM in the sandbox, through `sandbox_launch.py`: in `cgroup`, as the sandbox's
    unprivileged user, under bwrap with the seccomp filter. `folder` is the worker's own (its
    input, its copy of the worker script, the launcher's mount points), readable to that user."""
    folder.chmod(0o711)
    input_dir.chmod(0o755)
    filter_read, filter_write = os.pipe()
    try:
        os.write(filter_write, seccomp.program())  # ~1 KB: within a pipe's buffer
        os.close(filter_write)
        command, stage = bwrap_command(folder, input_dir, disk_mb, program, filter_read)
        spec = {"cgroup_procs": cgroup.procs_files() if cgroup else [], "stage": stage, "uid": SANDBOX_UID,
                "gid": SANDBOX_GID}
        return subprocess.Popen([sys.executable, "-I", "-S", str(LAUNCHER), json.dumps(spec), "--", *command],
                                pass_fds=[filter_read], cwd=str(folder), env=_base_environment(),
                                start_new_session=True, **popen)
    finally:
        os.close(filter_read)


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

    def memory_events(self) -> int:
        """How often the group has hit its memory bound so far (0 where that cannot be read)."""
        try:
            if self.version == "v2":
                events = dict(line.split() for line in self._file("memory", "", "memory.events").read_text().splitlines())
                return int(events.get("oom_kill", 0)) + int(events.get("max", 0))
            return int(self._file("memory", "memory.failcnt", "").read_text())
        except (OSError, ValueError):
            return 0

    def remove(self) -> None:
        for folder in set(self.dirs.values()):
            try:
                folder.rmdir()
            except OSError:
                pass

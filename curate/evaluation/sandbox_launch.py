"""Starts bubblewrap for a sandbox worker as an unprivileged user: `python -I -S sandbox_launch.py SPEC -- bwrap ...`.

Run by the evaluator (possibly as root), it: joins the worker's cgroup (so every process of the
worker is in it); where it runs as root, stages in a private mount namespace of its own the
folders bwrap must bind but the sandbox's user cannot reach (a Python installed under a private
`/root`), then leaves root for good (no groups, the sandbox uid and gid) and only then execs
bwrap. bwrap started by an unprivileged user maps that user, not uid 0, into its user namespace:
nothing in the sandbox is ever root on the host, and root-owned files (`/proc/sys`) are
read-only to it whatever their mode.

Standard library only, and no site imports (-S): it runs before anything else in the worker.
SPEC is JSON: {"cgroup_procs": [...], "stage": [[source, mount point], ...], "uid": N, "gid": N}.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

CLONE_NEWNS, MS_BIND, MS_REC, MS_PRIVATE = 0x00020000, 0x1000, 0x4000, 0x40000


def _libc_call(name: str, *args: object) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(*args) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{name}: {os.strerror(error)}")


def main(spec: dict, command: list[str]) -> None:
    for procs in spec.get("cgroup_procs", []):
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    if os.geteuid() == 0:
        if spec.get("stage"):
            _libc_call("unshare", CLONE_NEWNS)  # the staged binds are seen by this process (and bwrap) only
            _libc_call("mount", None, b"/", None, MS_REC | MS_PRIVATE, None)
            for source, target in spec["stage"]:
                _libc_call("mount", source.encode(), target.encode(), None, MS_BIND | MS_REC, None)
        os.setgroups([])
        os.setresgid(spec["gid"], spec["gid"], spec["gid"])
        os.setresuid(spec["uid"], spec["uid"], spec["uid"])  # clears every capability too
        if 0 in os.getresuid() or 0 in os.getresgid():
            raise SystemExit("could not leave root")
    os.execv(command[0], command)


if __name__ == "__main__":
    split = sys.argv.index("--")
    try:
        main(json.loads(sys.argv[1]), sys.argv[split + 1:])
    except OSError as e:
        raise SystemExit(f"the sandbox could not be started unprivileged: {e}") from None

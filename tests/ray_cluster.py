"""A real Ray cluster on this machine for the tests: a head and worker nodes started with `ray start`,
each with CPUs of its own, in a temporary folder of its own; torn down by process id (never with
`ray stop`, which would end every Ray on the machine)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

from tests.ray_env import ensure_env, ray_command, run_env
from tests.llm_server import free_port


class RayCluster:
    def __init__(self, nodes: int = 2, cpus: int = 1, memory_gb: float = 3.0) -> None:
        self.nodes, self.cpus, self.memory = nodes, cpus, int(memory_gb * (1 << 30))
        # short: Ray's unix sockets live under it, and a socket path has at most 107 characters
        self.temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
        self.port = free_port()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _start(self, *args: str) -> None:
        common = ["--num-cpus", str(self.cpus), "--memory", str(self.memory), "--object-store-memory", str(100 << 20),
                  "--disable-usage-stats"]
        done = subprocess.run([str(ray_command()), "start", *args, *common], env=run_env(), capture_output=True,
                              text=True, timeout=180)
        if done.returncode != 0:
            raise RuntimeError(f"ray start {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")

    def start(self) -> "RayCluster":
        try:
            ensure_env()
            self._start("--head", "--port", str(self.port), "--include-dashboard=false", "--temp-dir", str(self.temp))
            for _ in range(self.nodes - 1):
                self._start("--address", self.address)
        except BaseException:
            self.stop()
            raise
        return self

    def processes(self) -> list[psutil.Process]:
        """This cluster's processes: those started with its folder on their command line, and theirs."""
        mine: dict[int, psutil.Process] = {}
        inside = f"{self.temp}{os.sep}session_"  # Ray's own processes name their session folder
        for p in psutil.process_iter(["cmdline"]):
            try:
                if p.pid != os.getpid() and any(inside in a for a in (p.info["cmdline"] or [])):
                    mine[p.pid] = p
                    for child in p.children(recursive=True):
                        mine[child.pid] = child
            except psutil.Error:
                continue
        return list(mine.values())

    def part_workers(self) -> list[psutil.Process]:
        """Worker processes running a stage's part now (Ray titles a busy worker `ray::<function>`)."""
        out = []
        for p in self.processes():
            try:
                if (p.cmdline() or [""])[0].startswith("ray::_run_part"):
                    out.append(p)
            except psutil.Error:
                continue
        return out

    def stop(self) -> None:
        for _ in range(3):
            found = self.processes()
            if not found:
                break
            for p in found:
                try:
                    p.send_signal(signal.SIGKILL)
                except psutil.Error:
                    pass
            psutil.wait_procs(found, timeout=10)
            time.sleep(0.2)
        shutil.rmtree(self.temp, ignore_errors=True)

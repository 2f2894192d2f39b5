"""A local Label Studio for `curate review serve` and the tests: its own virtual environment, a
data folder of its own, bound to 127.0.0.1 only.

label-studio pins `openai<2`, which this project's LLM layer cannot live with, so the server runs
from a separate environment (`.envs/labelstudio`, built on first use: about 2.5 minutes, ~1 GB);
curate talks to it over HTTP with label-studio-sdk. The data folder holds the database, the
account and the token (`credentials.json`, mode 0600); nothing is written to the home folder.
A fresh data folder migrates on first start (~40 s); starting over a migrated one takes seconds.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

LABEL_STUDIO = "label-studio==1.23.2"


class ServerError(RuntimeError):
    """Label Studio could not be installed or started; the message says where its log is."""


def ensure_env(env: Path, install_timeout: float = 1800) -> Path:
    """The environment's `label-studio` executable, installing it first if needed (within `install_timeout` s)."""
    executable = env / "bin" / "label-studio"
    ready = env / ".ready"
    if ready.exists() and executable.exists():
        return executable
    env.parent.mkdir(parents=True, exist_ok=True)
    if not (env / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, timeout=300)
    python = str(env / "bin" / "python")
    try:
        done = subprocess.run([python, "-m", "pip", "install", "-q", LABEL_STUDIO], capture_output=True, text=True,
                              timeout=install_timeout)
    except subprocess.TimeoutExpired as e:
        raise ServerError(f"pip install {LABEL_STUDIO} into {env} took over {install_timeout:.0f}s") from e
    if done.returncode != 0:
        raise ServerError(f"pip install {LABEL_STUDIO} into {env} failed:\n{done.stderr[-3000:]}")
    ready.write_text(json.dumps({"package": LABEL_STUDIO}) + "\n")
    return executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def credentials(data_dir: Path) -> dict[str, str]:
    """The account of this data folder, created once (the token is what the API takes)."""
    path = data_dir / "credentials.json"
    if path.exists():
        return json.loads(path.read_text())
    data_dir.mkdir(parents=True, exist_ok=True)
    account = {"username": "curate@localhost", "password": secrets.token_urlsafe(16),
               "token": secrets.token_hex(20)}
    path.write_text(json.dumps(account, indent=2) + "\n")
    path.chmod(0o600)
    return account


@dataclass
class LocalLabelStudio:
    """`start()` a server over `data_dir` on 127.0.0.1; `stop()` it (SIGTERM, then SIGKILL)."""

    data_dir: Path
    env: Path
    port: int = 0
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.data_dir / "server.log"

    @property
    def token(self) -> str:
        return credentials(self.data_dir)["token"]

    def start(self, timeout: float = 300) -> "LocalLabelStudio":
        self.data_dir, self.env = self.data_dir.resolve(), self.env.resolve()
        executable = ensure_env(self.env)
        account = credentials(self.data_dir)
        self.port = self.port or free_port()
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.data_dir),
            "LABEL_STUDIO_BASE_DATA_DIR": str(self.data_dir), "LABEL_STUDIO_USERNAME": account["username"],
            "LABEL_STUDIO_PASSWORD": account["password"], "LABEL_STUDIO_USER_TOKEN": account["token"],
            # without it every token call answers 401; it counts only when the data folder is created
            "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true", "LABEL_STUDIO_LATEST_VERSION_CHECK": "false",
            "SENTRY_DSN": "", "FRONTEND_SENTRY_DSN": "", "LABEL_STUDIO_COLLECT_ANALYTICS": "false",
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        log = open(self.log, "ab")
        # --internal-host is the bind address (its default is 0.0.0.0); --host only names the public URL
        self.process = subprocess.Popen(
            [str(executable), "start", "--internal-host", "127.0.0.1", "--port", str(self.port), "--no-browser"],
            stdout=log, stderr=subprocess.STDOUT, env=environment, cwd=self.data_dir, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(f"Label Studio exited ({self.process.returncode}); see {self.log}")
            if self.healthy():
                return self
            time.sleep(0.5)
        self.stop()
        raise ServerError(f"Label Studio did not answer on {self.url} within {timeout:.0f}s; see {self.log}")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def stop(self, kill: bool = False) -> None:
        """SIGTERM (it stops in 1-3 s), or SIGKILL at once with `kill` (a crash, for the tests)."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL if kill else signal.SIGTERM)
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        except ProcessLookupError:
            pass

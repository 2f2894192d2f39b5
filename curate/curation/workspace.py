"""The workspace: one folder holding every stage's output and which outputs are current.

DuckDB and the stages read the Parquet parts in place: there is no second copy of the state.
"""

from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from curate.curation.pipeline.store import Dataset, atomic_write_json

DEFAULT_WORKSPACE = "curate-work"


class WorkspaceBusy(RuntimeError):
    pass


class Workspace:
    def __init__(self, root: str | os.PathLike[str] = DEFAULT_WORKSPACE) -> None:
        self.root = Path(root)

    @property
    def stages_dir(self) -> Path:
        return self.root / "stages"

    @property
    def state_path(self) -> Path:
        return self.root / "state.json"

    def exists(self) -> bool:
        return self.state_path.exists()

    def state(self) -> dict[str, Any]:
        return json.loads(self.state_path.read_text()) if self.state_path.exists() else {"current": {}}

    def current(self, stage: str) -> list[Dataset]:
        """The datasets that stand for `stage` now (ingest has one per source)."""
        names = self.state()["current"].get(stage, [])
        return [Dataset(self.stages_dir / n) for n in names if (self.stages_dir / n / "_COMPLETE.json").exists()]

    def set_current(self, stage: str, datasets: list[Dataset], **extra: Any) -> None:
        """Make `datasets` stand for `stage`. If that changes what stands for it, the stages
        downstream stop being current: their outputs were computed from the old one."""
        from curate.curation.pipeline import downstream

        state = self.state()
        names = [d.name for d in datasets]
        if state["current"].get(stage) != names:
            for later in downstream(stage):
                state["current"].pop(later, None)
        state["current"][stage] = names
        for key, value in extra.items():
            state[key] = value
        atomic_write_json(self.state_path, state)

    def drop_current(self, stage: str) -> None:
        """Nothing stands for `stage` any more (a build that no longer runs it), nor for what it fed."""
        from curate.curation.pipeline import downstream

        state = self.state()
        if stage in state["current"]:
            for name in (stage, *downstream(stage)):
                state["current"].pop(name, None)
            atomic_write_json(self.state_path, state)

    @contextmanager
    def lock(self) -> Iterator[None]:
        """One writer at a time: a second `curate` on the same workspace fails fast and says why."""
        self.stages_dir.mkdir(parents=True, exist_ok=True)
        handle = open(self.root / ".lock", "a+")
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip()
                raise WorkspaceBusy(f"workspace {self.root} is in use by another curate process"
                                    f"{f' (pid {holder})' if holder.isdigit() else ''}: wait for it to finish, or "
                                    "use another --workspace") from None
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
            yield
        finally:
            handle.close()

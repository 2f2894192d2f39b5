"""Run a stage: compute its signature, skip what is done, run the rest on an executor."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from curate.curation.pipeline import STAGES
from curate.curation.pipeline.executor import Executor, LocalExecutor
from curate.curation.pipeline.code import code_fingerprint
from curate.curation.pipeline.signature import stage_signature
from curate.curation.pipeline.stage import Stage
from curate.curation.pipeline.store import COMPLETE, REPORT, Dataset, atomic_write_json, write_part


@dataclass
class StageRun:
    """What happened: the dataset, whether it was already complete, how many parts ran now."""

    dataset: Dataset
    cached: bool
    parts_total: int
    parts_run: int
    seconds: float
    report: dict[str, Any] = field(default_factory=dict)


ProgressFactory = Callable[[str, float], Callable[[float], None]]


def _run_part(stage_name: str, index: int, task: Any, shared: dict[str, Any], config: dict[str, Any],
              directory: str) -> dict[str, Any]:
    """Worker entry point (top level so that any executor can pickle it)."""
    if not Path(directory).is_dir():  # a node of a cluster that does not see the driver's workspace
        import socket

        raise FileNotFoundError(f"stage {stage_name}: {directory} does not exist on {socket.gethostname()}: the "
                                "workspace must be on storage that every node sees, at the same path")
    from curate.curation.llm.types import BatchPending

    stage: Stage = STAGES.get(stage_name)()
    try:
        outputs, summary = stage.run_part(task, shared, config)
    except BatchPending as e:  # its requests are written: the other parts write theirs before the stage stops
        return {"index": index, "pending": str(e)}
    return write_part(Path(directory), index, outputs, summary)


def run_stage(stage_name: str, config: dict[str, Any], inputs: list[Dataset], stages_dir: Path,
              executor: Executor | None = None, progress: ProgressFactory | None = None) -> StageRun:
    """Run `stage_name` over `inputs`; a finished run with the same signature is reused as is."""
    started = time.perf_counter()
    stage: Stage = STAGES.get(stage_name)()
    code = code_fingerprint(type(stage).__module__)  # the stage's module and all it imports from this repository
    signature = stage_signature(stage.name, stage.version,
                                {"config": config, "extra": stage.fingerprint(config), "code": code},
                                [d.signature for d in inputs])
    dataset = Dataset(stages_dir / f"{stage.name}-{signature}")
    if dataset.complete:
        info = dataset.info()
        return StageRun(dataset, True, info.get("parts", 0), 0, time.perf_counter() - started, dataset.report())

    dataset.path.mkdir(parents=True, exist_ok=True)
    plan = stage.plan(config, inputs)
    weights = plan.weights or [1.0] * len(plan.tasks)
    done = set(dataset.done_indices())
    todo = [i for i in range(len(plan.tasks)) if i not in done]
    advance = progress(stage.name, sum(weights)) if progress else (lambda n: None)
    advance(sum(weights[i] for i in done))

    executor = LocalExecutor(1) if stage.in_process(config) else (executor or LocalExecutor())
    calls = ((stage.name, i, plan.tasks[i], plan.shared, config, str(dataset.path)) for i in todo)
    pending: list[str] = []
    for marker in executor.map_unordered(_run_part, calls):
        if "pending" in marker:
            pending.append(marker["pending"])
            continue
        advance(weights[marker["index"]])
    if pending:  # one stop for the round of every part; the finished parts are kept
        from curate.curation.llm.types import BatchPending

        raise BatchPending(pending[0] if len(pending) == 1 else
                           f"{len(pending)} parts wait for batch replies; the first: {pending[0]}")

    markers = dataset.markers()
    missing = sorted(set(range(len(plan.tasks))) - {m["index"] for m in markers})
    if missing:  # pragma: no cover - an executor that loses work is a bug, not bad input
        raise RuntimeError(f"stage {stage.name}: parts {missing[:5]} did not finish")
    report = stage.report([m["summary"] for m in markers], config)
    atomic_write_json(dataset.path / REPORT, report)
    rows: dict[str, int] = {}
    for m in markers:
        for kind, n in m["rows"].items():
            rows[kind] = rows.get(kind, 0) + n
    atomic_write_json(dataset.path / COMPLETE, {
        "stage": stage.name, "version": stage.version, "signature": signature, "config": config,
        "inputs": [d.name for d in inputs], "parts": len(plan.tasks), "rows": rows,
    })
    # a stale temporary file can only come from a killed writer
    for stale in dataset.path.glob(".*.tmp-*"):
        stale.unlink(missing_ok=True)
    return StageRun(dataset, False, len(plan.tasks), len(todo), time.perf_counter() - started, report)


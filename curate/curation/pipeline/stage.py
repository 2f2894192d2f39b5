"""What a stage is: a pure function from input datasets and a config to output records, in parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa

from curate.curation.pipeline.reports import Report
from curate.curation.pipeline.store import Dataset


@dataclass(frozen=True)
class Plan:
    """The parts a stage will write, in a fixed order, and data every part may read.

    `tasks[i]` becomes part i. `shared` is computed once (e.g. the set of duplicate tables)
    and handed to every part; it must be deterministic too.
    """

    tasks: list[Any]
    shared: dict[str, Any] = field(default_factory=dict)
    weights: list[float] | None = None  # progress units per task (default 1 each)


class Stage:
    """Subclass, set `version` and `report_type`, implement `plan` and `run_part`, and declare it with
    `@stage("name", outputs=..., inputs=..., ...)` (`curate.curation.pipeline.graph`: its named inputs, config
    section, when it runs), which also sets its `name` and `outputs`.

    `run_part` runs in a worker process: it must depend only on its arguments.
    Bump `version` whenever a change alters what the stage writes.
    """

    name: ClassVar[str]
    version: ClassVar[str]
    outputs: ClassVar[tuple[str, ...]]
    report_type: ClassVar[type[Report] | None] = None  # the typed report, which reads report.json back

    def fingerprint(self, config: dict[str, Any]) -> Any:
        """Extra signature content beyond config and inputs (e.g. hashes of source files)."""
        return None

    def in_process(self, config: dict[str, Any]) -> bool:
        """True when parts must run one after another in this process: e.g. a model loaded in-process
        (vLLM), which every worker would otherwise load again."""
        return False

    def plan(self, config: dict[str, Any], inputs: list[Dataset]) -> Plan:
        raise NotImplementedError

    def run_part(self, task: Any, shared: dict[str, Any], config: dict[str, Any]) -> tuple[dict[str, pa.Table], dict[str, Any]]:
        """Return ({record kind: Arrow table}, summary). The summary must be JSON-serialisable."""
        raise NotImplementedError

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        """The stage's report, from every part's summary in part order."""
        return merge_counts(summaries)

    @classmethod
    def summary(cls, report: dict[str, Any]) -> str:
        """The report in one line (`curate build` prints it after the stage's name): its type's
        `summary()`, or for a stage without one, its counts."""
        if cls.report_type is not None:
            return cls.report_type.from_json(report).summary()
        return ", ".join(f"{key} {value:,}" for key, value in report.items()
                         if isinstance(value, int) and not isinstance(value, bool))


def merge_counts(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """Add up numbers and dicts of numbers; concatenate lists (in part order)."""
    out: dict[str, Any] = {}
    for s in summaries:
        for key, value in s.items():
            if isinstance(value, bool):
                out[key] = value
            elif isinstance(value, (int, float)):
                out[key] = out.get(key, 0) + value
            elif isinstance(value, dict):
                out[key] = merge_counts([out.get(key, {}), value])
            elif isinstance(value, list):
                out[key] = out.get(key, []) + value
            else:
                out[key] = value
    return out


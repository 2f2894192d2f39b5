"""The task taxonomy, read from `taxonomy.toml`: every Sample's task is one of its keys."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from pathlib import Path

TAXONOMY_FILE = Path(__file__).with_name("taxonomy.toml")
# imported benchmarks' tasks (`curate import`), kept apart: the generating stages hash TAXONOMY_FILE
IMPORTED_TAXONOMY_FILE = Path(__file__).with_name("taxonomy_imported.toml")


@dataclass(frozen=True, slots=True)
class Task:
    key: str
    benchmark: str
    skill: str
    answer_type: str
    metric: str
    format: str  # the answer normalisation rule, see curation.answers
    origin: str
    description: str = ""
    answer_types: tuple[str, ...] = ()  # every type a gold answer may have (default: answer_type alone)
    metric_settings: tuple[tuple[str, Any], ...] = ()  # the metric's context: retrieval's k, a tolerance
    imported: bool = False  # a task of a benchmark imported as published (taxonomy_imported.toml): never generated

    def allows(self, answer_type: str) -> bool:
        return answer_type in (self.answer_types or (self.answer_type,))


@lru_cache(maxsize=1)
def tasks() -> dict[str, Task]:
    entries = dict(tomllib.loads(TAXONOMY_FILE.read_text())["tasks"])
    imported = tomllib.loads(IMPORTED_TAXONOMY_FILE.read_text())["tasks"]
    clash = sorted(set(entries) & set(imported))
    if clash:
        raise ValueError(f"{IMPORTED_TAXONOMY_FILE.name} repeats tasks of {TAXONOMY_FILE.name}: {', '.join(clash)}")
    entries.update({key: {**entry, "imported": True} for key, entry in imported.items()})
    return {key: Task(key=key, **{**entry, "answer_types": tuple(entry.get("answer_types", ())),
                                  "metric_settings": tuple(sorted(entry.get("metric_settings", {}).items()))})
            for key, entry in entries.items()}


def task(key: str) -> Task:
    try:
        return tasks()[key]
    except KeyError:
        raise KeyError(f"unknown task {key!r}: tasks are the keys of {TAXONOMY_FILE.name}") from None

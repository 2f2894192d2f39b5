"""The task taxonomy, read from `taxonomy.toml`: every Sample's task is one of its keys."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from pathlib import Path

TAXONOMY_FILE = Path(__file__).with_name("taxonomy.toml")


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

    def allows(self, answer_type: str) -> bool:
        return answer_type in (self.answer_types or (self.answer_type,))


@lru_cache(maxsize=1)
def tasks() -> dict[str, Task]:
    data = tomllib.loads(TAXONOMY_FILE.read_text())
    return {key: Task(key=key, **{**entry, "answer_types": tuple(entry.get("answer_types", ())),
                                  "metric_settings": tuple(sorted(entry.get("metric_settings", {}).items()))})
            for key, entry in data["tasks"].items()}


def task(key: str) -> Task:
    try:
        return tasks()[key]
    except KeyError:
        raise KeyError(f"unknown task {key!r}: tasks are the keys of {TAXONOMY_FILE.name}") from None

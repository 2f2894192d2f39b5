"""Each benchmark's official scoring, reproduced: metric profiles `curate evaluate` applies by
default to a release imported from that benchmark (`curate import`), and that a user can name.

A profile scores a run's stored predictions the way the benchmark's authors' evaluation code does
(their parsing of the reply, their normalisation, their aggregation into the numbers they print),
and puts curate's own number beside each official one: where the official code has a known defect
both are reported, never one silently for the other. A profile's result is plain JSON, written to
`official.json` in the results folder, recorded in `run.json` and shown in the report.
"""

from __future__ import annotations

from typing import Any

from curate.curation.registry import Registry

# one module per benchmark (or family), each scoring function marked `@profile("name")`
PROFILES = Registry("metric profile", plugins="curate.evaluation.official.*", marker="profile")
profile = PROFILES.decorator


def apply(name: str, data: Any, samples: list[Any], predictions: list[dict[str, Any]],
          results: list[dict[str, Any]], seed: int = 0, rerun: Any = None) -> dict[str, Any]:
    """The named profile over one run: `predictions` as stored (raw replies), `results` as curate
    scored them (the corrected side); `rerun([(sample, config, code), ...])` runs programs in the
    evaluator's sandbox, for profiles whose harness runs model-written code its own way."""
    return {"profile": name, **PROFILES.get(name)(data, samples, predictions, results, seed, rerun)}

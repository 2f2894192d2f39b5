"""The build config: a TOML file whose tables configure the stages ([clean], ...).

    [build]            sources, seed, stages (the generators to run)
    [ingest]           limits per source file (size, unpacked size, cells, rows, columns, merged area,
                       a database's value and table size, memory, seconds)
    [clean]            cleaning thresholds
    [generate.rules]   rule-based QA;  [generate.sql]  multi-table SQL synthesis
    [generate.adversarial]  template questions reworded as a person would ask them (needs [models.generator] and
                       [models.discriminator]); a rewrite is kept where a discriminator answers it with the gold
    [generate.phrase]  SQL samples phrased as natural questions (needs [models.generator])
    [generate.questions]  questions written from RealHiTBench's per-type prompts (needs [models.generator])
    [models.<role>]    a model per role: backend, model, base_url, ... and request parameters
    [select]           which samples a release holds, and the splits
    [classify]         the task of each LLM-written or imported question, checked (needs [models.classifier])
    [vote]             three-model voting (needs [models.candidate_1..3]) on samples no rule computed
    [review]           human review: `required = true` holds back samples still waiting for a decision
    [contracts]        split size bounds for the data contracts
    [release]          name, version, serializations

`examples/build.toml` spells out the default build.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from curate.curation.pipeline.graph import DECLARED

# the build's own tables, and each declared stage's (curate/curation/pipeline/graph.py)
KNOWN_SECTIONS = {"build", "ingest", "release", "models"} | {d.section[0] for d in DECLARED if d.section}


def load_config(path: str | None) -> dict[str, Any]:
    if not path:
        return {}
    try:
        config = tomllib.loads(Path(path).read_text())
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML ({e})") from None
    unknown = sorted(set(config) - KNOWN_SECTIONS)
    if unknown:
        raise ValueError(f"{path}: unknown section(s) {', '.join(unknown)}; known: {', '.join(sorted(KNOWN_SECTIONS))}")
    return config


def with_defaults(section: str, config: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """A section's settings over its defaults; an unknown key (a typo) is an error naming the known ones."""
    unknown = sorted(set(config) - set(defaults))
    if unknown:
        raise ValueError(f"[{section}]: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(defaults))}")
    return {**defaults, **config}

"""Stage signatures: hash(stage name, stage version, its config, signatures of its inputs)."""

from __future__ import annotations

from typing import Any, Iterable

from curate.curation.hashing import content_hash


def stage_signature(name: str, version: str, config: Any, input_signatures: Iterable[str]) -> str:
    """Change any of these and the stage, and every stage after it, reruns; nothing before it does."""
    return content_hash("stage", name, version, config, list(input_signatures))[:16]

"""The pipeline runner: stages with signatures, Parquet parts with completion markers, resume,
executors, per-record seeded randomness. See docs/architecture.md."""

from typing import Any

from curate.curation.pipeline.graph import STAGES, downstream

# STAGES: every stage by name, found by its `@stage(...)` mark (its declaration: curate/curation/pipeline/graph.py)
__all__ = ["PIPELINE_ORDER", "STAGES", "STAGE_INPUTS", "downstream"]


def __getattr__(name: str) -> Any:
    """`PIPELINE_ORDER` and `STAGE_INPUTS`, built when first asked for (see `curate.curation.pipeline.graph`)."""
    if name in ("PIPELINE_ORDER", "STAGE_INPUTS"):
        from curate.curation.pipeline import graph

        return getattr(graph, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

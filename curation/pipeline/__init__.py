"""The pipeline runner: stages with signatures, Parquet parts with completion markers, resume,
executors, per-record seeded randomness. See docs/architecture.md."""

from curation.pipeline.graph import DECLARED, PIPELINE_ORDER, STAGE_INPUTS, downstream
from curation.registry import Registry

# every declared stage by name (the declaration, its inputs and when it runs: curation/pipeline/graph.py)
STAGES = Registry("stage", {d.name: d.target for d in DECLARED})

__all__ = ["EXECUTORS", "PIPELINE_ORDER", "STAGES", "STAGE_INPUTS", "downstream"]

EXECUTORS = Registry("executor", {
    "local": "curation.pipeline.executor:LocalExecutor",
    "ray": "curation.pipeline.ray_executor:RayExecutor",  # imports ray only when it runs something
})

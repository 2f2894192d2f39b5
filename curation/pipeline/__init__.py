"""The pipeline runner: stages with signatures, Parquet parts with completion markers, resume,
executors, per-record seeded randomness. See docs/architecture.md."""

from curation.registry import Registry

STAGES = Registry("stage", {
    "ingest": "curation.sources.ingest:IngestStage",
    "clean": "curation.cleaning.stage:CleanStage",
    "rules": "generators.rules.stage:RulesStage",
})

EXECUTORS = Registry("executor", {
    "local": "curation.pipeline.executor:LocalExecutor",
})

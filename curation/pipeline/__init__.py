"""The pipeline runner: stages with signatures, Parquet parts with completion markers, resume,
executors, per-record seeded randomness. See docs/architecture.md."""

from curation.registry import Registry

STAGES = Registry("stage", {
    "ingest": "curation.sources.ingest:IngestStage",
    "clean": "curation.cleaning.stage:CleanStage",
    "rules": "generators.rules.stage:RulesStage",
    "sql": "generators.sql.stage:SqlStage",
})

# the order data flows in: where two stages hold a copy of the same record, the later one wins
PIPELINE_ORDER = ("ingest", "clean", "rules", "sql")

EXECUTORS = Registry("executor", {
    "local": "curation.pipeline.executor:LocalExecutor",
})

"""The pipeline runner: stages with signatures, Parquet parts with completion markers, resume,
executors, per-record seeded randomness. See docs/architecture.md."""

from curation.registry import Registry

STAGES = Registry("stage", {
    "ingest": "curation.sources.ingest:IngestStage",
    "imported": "importers.stage:ImportedStage",  # a release read back, for `curate build RELEASE`
    "clean": "curation.cleaning.stage:CleanStage",
    "rules": "generators.rules.stage:RulesStage",
    "sql": "generators.sql.stage:SqlStage",
    "adversarial": "generators.adversarial:AdversarialStage",
    "phrase": "generators.llm_writing:PhraseStage",
    "questions": "generators.llm_writing:QuestionsStage",
    "classify": "validators.classify:ClassifyStage",
    "select": "exports.select:SelectStage",
    "vote": "validators.voting:VoteStage",
    "review": "annotation.apply:ReviewStage",
    "verify": "validators.execution:VerifyStage",
    "contracts": "validators.contracts:ContractsStage",
})

# the order data flows in: where two stages hold a copy of the same record, the later one wins
PIPELINE_ORDER = ("imported", "ingest", "clean", "rules", "sql", "adversarial", "phrase", "questions", "select",
                  "classify", "vote", "review", "verify", "contracts")

# the stages each stage reads: when a stage's current output changes, every stage downstream of it
# stops being current (it was computed from the old output)
STAGE_INPUTS: dict[str, tuple[str, ...]] = {
    "imported": (), "ingest": (), "clean": ("ingest",), "rules": ("clean",), "sql": ("clean",),
    "adversarial": ("rules", "clean"),
    "phrase": ("sql", "clean"), "questions": ("clean",),
    "select": ("rules", "sql", "adversarial", "phrase", "questions"), "classify": ("select",),
    "vote": ("select", "classify", "clean", "rules"), "review": ("imported", "select", "classify", "vote"),
    "verify": ("imported", "select", "classify", "vote", "review", "clean", "rules"),
    "contracts": ("imported", "select", "classify", "vote", "review", "verify", "clean", "rules"),
}


def downstream(stage: str) -> set[str]:
    """Every stage that reads `stage`'s output, directly or not."""
    out: set[str] = set()
    frontier = [stage]
    while frontier:
        current = frontier.pop()
        for name, reads in STAGE_INPUTS.items():
            if current in reads and name not in out:
                out.add(name)
                frontier.append(name)
    return out

EXECUTORS = Registry("executor", {
    "local": "curation.pipeline.executor:LocalExecutor",
    "ray": "curation.pipeline.ray_executor:RayExecutor",  # imports ray only when it runs something
})

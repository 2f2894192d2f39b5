"""The pipeline, declared once: every stage with its named inputs, outputs, config section and when it runs.

`curate build` runs this graph in the order written (each stage after the stages it reads);
`--until`, the workspace's staleness rule (`downstream`), the review queue, `curate show`,
`curate verify`, the release's stage listing and docs/architecture.md's drawing all read it. Nothing
here imports a stage: a declaration names its class and its settings check as `"module:attribute"`
strings, resolved when the build needs them, so listing the graph (for `--help`) costs nothing.

Adding a stage is its module (a `Stage` subclass with `name`, `version`, `outputs`, `plan`,
`run_part` and `summary`) plus one `Declared(...)` entry below, placed after the stages it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

CORE, GENERATOR, CHECK, REVIEW, CORRECTION = "core", "generator", "check", "review", "correction"


@dataclass(frozen=True)
class Input:
    """One named input of a stage: the output of `stages`.

    `latest`: the output of the last of `stages` that ran (the samples as the latest check left
    them); otherwise the output of every one of them that ran, in declared order.
    """

    name: str
    stages: tuple[str, ...]
    latest: bool = False


@dataclass(frozen=True)
class Declared:
    """A stage as the pipeline knows it.

    `kind`: core stages always run; generators and checks run when `[build] stages` names them;
    the review stage runs when the workspace holds review state or `[review] required = true`;
    a correction stage runs only in `curate build RELEASE` (a published release read back, corrected).
    `section`: the build config's table for it (`("generate", "rules")` is `[generate.rules]`).
    `settings`: `"module:function"` that checks that table (unknown keys refused, naming the known
    ones) and fills its defaults; the build calls it when the config is read, before any stage runs.
    `needs`: stages that must be chosen with it (whose samples it rewrites); `models`: the
    `[models.<role>]` tables it is handed.
    """

    name: str
    target: str
    outputs: tuple[str, ...]
    inputs: tuple[Input, ...] = ()
    kind: str = CORE
    section: tuple[str, ...] = ()
    settings: str | None = None
    needs: tuple[str, ...] = ()
    models: tuple[str, ...] = ()

    @property
    def reads(self) -> tuple[str, ...]:
        """Every stage whose output this one reads, in the order its inputs name them."""
        out: list[str] = []
        for i in self.inputs:
            out += [s for s in i.stages if s not in out]
        return tuple(out)

    @property
    def writes_samples(self) -> bool:
        return "samples" in self.outputs


# each rewrites the samples of the one before it (`imported`: a release read back, in a corrected build)
_SAMPLES_AFTER_SELECT = ("imported", "select", "classify", "vote", "review")
_TABLES = Input("tables", ("clean", "rules"))  # the cleaned tables and the rules stage's derived ones
_ANY_TABLES = Input("tables", ("imported", "clean", "rules"))  # ... or a corrected release's own

DECLARED: tuple[Declared, ...] = (
    Declared("imported", "importers.stage:ImportedStage", ("samples", "tables"), kind=CORRECTION),
    Declared("ingest", "curation.sources.ingest:IngestStage", ("tables", "databases")),
    Declared("clean", "curation.cleaning.stage:CleanStage", ("tables", "databases"),
             (Input("tables", ("ingest",)),), section=("clean",),
             settings="curation.cleaning.rules:CleaningConfig.from_dict"),
    Declared("rules", "generators.rules.stage:RulesStage", ("samples", "tables"),
             (Input("tables", ("clean",)),), GENERATOR, ("generate", "rules"), "generators.rules.stage:settings"),
    Declared("sql", "generators.sql.stage:SqlStage", ("samples",),
             (Input("tables", ("clean",)),), GENERATOR, ("generate", "sql"), "generators.sql.synth:settings"),
    Declared("adversarial", "generators.adversarial:AdversarialStage", ("samples", "llm_records"),
             (Input("samples", ("rules",)), Input("tables", ("clean",))), GENERATOR, ("generate", "adversarial"),
             "generators.adversarial:stage_settings", needs=("rules",), models=("generator", "discriminator")),
    Declared("phrase", "generators.llm_writing:PhraseStage", ("samples", "llm_records"),
             (Input("samples", ("sql",)), Input("tables", ("clean",))), GENERATOR, ("generate", "phrase"),
             "generators.llm_writing:phrase_settings", needs=("sql",), models=("generator",)),
    Declared("questions", "generators.llm_writing:QuestionsStage", ("samples", "llm_records"),
             (Input("tables", ("clean",)),), GENERATOR, ("generate", "questions"),
             "generators.llm_writing:questions_settings", models=("generator",)),
    Declared("select", "exports.select:SelectStage", ("samples",),
             (Input("samples", ("rules", "sql", "adversarial", "phrase", "questions")),), section=("select",),
             settings="exports.select:settings"),
    Declared("classify", "validators.classify:ClassifyStage", ("samples",),
             (Input("samples", ("select",), latest=True),), CHECK, ("classify",),
             "validators.classify:settings", models=("classifier",)),
    Declared("vote", "validators.voting:VoteStage", ("samples",),
             (Input("samples", ("select", "classify"), latest=True), _TABLES), CHECK, ("vote",),
             "validators.voting:vote_settings", models=("candidate_1", "candidate_2", "candidate_3")),
    Declared("review", "annotation.apply:ReviewStage", ("samples",),
             (Input("samples", _SAMPLES_AFTER_SELECT[:4], latest=True),), REVIEW, ("review",),
             "annotation.apply:settings"),
    Declared("verify", "validators.execution:VerifyStage", ("verdicts",),
             (Input("samples", _SAMPLES_AFTER_SELECT, latest=True), _ANY_TABLES)),
    Declared("contracts", "validators.contracts:ContractsStage", (),
             (Input("samples", _SAMPLES_AFTER_SELECT, latest=True), Input("verdicts", ("verify",)), _ANY_TABLES),
             section=("contracts",), settings="validators.contracts:settings"),
)

BY_NAME: dict[str, Declared] = {d.name: d for d in DECLARED}
PIPELINE_ORDER: tuple[str, ...] = tuple(d.name for d in DECLARED)
STAGE_INPUTS: dict[str, tuple[str, ...]] = {d.name: d.reads for d in DECLARED}
GENERATORS: tuple[str, ...] = tuple(d.name for d in DECLARED if d.kind == GENERATOR)
CHECKS: tuple[str, ...] = tuple(d.name for d in DECLARED if d.kind == CHECK)
STEPS: tuple[str, ...] = (*(d.name for d in DECLARED if d.kind != CORRECTION), "release")  # `--until` choices
# the stages whose current output is the workspace's samples as the checks left them, latest first
SAMPLES_LATEST_FIRST: tuple[str, ...] = tuple(reversed(_SAMPLES_AFTER_SELECT))


def declared(name: str) -> Declared:
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown stage {name!r}; known: {', '.join(PIPELINE_ORDER)}") from None


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


def inputs_of(name: str, ran: dict[str, Any]) -> dict[str, list[Any]]:
    """The named inputs of stage `name`, given the datasets (or lists of them) of the stages that ran."""
    out: dict[str, list[Any]] = {}
    for i in declared(name).inputs:
        found = [ran[s] for s in i.stages if s in ran]
        if i.latest:
            found = found[-1:]
        out[i.name] = [d for item in found for d in (item if isinstance(item, list) else [item])]
    return out


def flat(named: dict[str, list[Any]]) -> list[Any]:
    """Named inputs as the positional list a stage's `plan` receives (inputs in declared order)."""
    return [d for datasets in named.values() for d in datasets]


def check_order(declarations: Iterable[Declared] = DECLARED) -> None:
    """Every stage is declared after every stage it reads (the build runs them in the order written)."""
    seen: set[str] = set()
    for d in declarations:
        late = [s for s in d.reads if s not in seen]
        if late:
            raise ValueError(f"stage {d.name} reads {', '.join(late)}, declared after it (or not at all)")
        missing = [s for s in d.needs if s not in seen]
        if missing:
            raise ValueError(f"stage {d.name} needs {', '.join(missing)}, declared after it (or not at all)")
        seen.add(d.name)


def mermaid() -> str:
    """The graph as a Mermaid flowchart (docs/architecture.md shows it; a test keeps the two equal).

    Rounded boxes run when chosen (generators, checks) or when there is review state; a dotted
    arrow is a `latest` input: the samples as the last stage that ran left them."""
    lines = ["flowchart LR"]
    for d in DECLARED:
        shape = f"{d.name}[{d.name}]" if d.kind == CORE else f"{d.name}([{d.name}: {d.kind}])"
        lines.append(f"    {shape}")
    for d in DECLARED:
        for i in d.inputs:
            if i.latest:  # drawn from the last stage it may read: the ones before it pass their samples on
                before = ", ".join(i.stages[:-1])
                label = f"{i.name}, else of {before}" if before else i.name
                lines.append(f"    {i.stages[-1]} -.->|{label}| {d.name}")
                continue
            for s in i.stages:
                lines.append(f"    {s} -->|{i.name}| {d.name}")
    lines.append("    contracts --> release[(release)]")
    return "\n".join(lines)

"""The pipeline: every stage declares itself on its class, and the graph is built from what they declare.

A stage is a `Stage` subclass marked `@stage("name", outputs=..., inputs=..., ...)` in a module of one
of `STAGE_PACKAGES`. The mark is read from the source (`curate.curation.registry`), so listing the graph (for
`--help`, `--until`) imports no stage; a stage is imported when the build runs it. `curate build` runs
the graph in `PIPELINE_ORDER`; `--until`, the workspace's staleness rule (`downstream`), the review
queue, `curate show`, `curate verify`, the release's stage listing and docs/architecture.md's drawing
all read it. Adding a stage is one new file in one of those packages.

**Inputs name stages, or roles** (`inputs={"samples": ("<samples",), "tables": ("clean", "rules")}`,
in the order a stage's `plan` receives them):

- `"clean"`: that stage's output;
- `"*generator"` (any kind after the star): every stage of that kind, in pipeline order (`select`
  reads the samples of every generator);
- `"<samples"`: every stage placed before this one that passes the samples on (writes samples and is
  a core, check or review stage: `select`, then the checks, then `review`), so that a check reads
  the samples as the latest stage before it left them.

An input named in `latest=` is the output of the last of its stages that ran; any other, the output of
every one of them that ran, in pipeline order.

**The order** (`ordered`): each stage after every stage its inputs, `needs` and `after` name (`after`
takes the same selectors: `review` comes `after=("*check",)`). A stage reading `"<samples"` that
passes them on itself (a check) comes after those that pass them on without reading them (`select`);
one that passes nothing on (`verify`) after every stage that passes them on. Among the stages free to
go next, the first in the source: `STAGE_PACKAGES` as listed, modules by name, marks top to bottom.
A cycle, a name no stage declares, or two stages of one name is an error naming the files.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Sequence

from curate.curation.registry import Mark, Registry

CORE, GENERATOR, CHECK, REVIEW, CORRECTION = "core", "generator", "check", "review", "correction"
KINDS = (CORE, GENERATOR, CHECK, REVIEW, CORRECTION)
PASSES_SAMPLES = "<samples"  # the selector of the stages before this one that pass the samples on

# Where stages live: the one list discovery reads. Its order is the tie-break of `ordered` (the source
# of a corrected build first, then ingest, cleaning, the generators, selection, the checks, review).
# This module is not followed by the code fingerprint (`curate.curation.pipeline.code.NOT_FOLLOWED`): a stage
# runs its own code, not the other stages', so adding a stage file reruns no other stage.
STAGE_PACKAGES = ("curate.importers.*", "curate.curation.sources.*", "curate.curation.cleaning.*", "curate.generators.rules.*",
                  "curate.generators.sql.*", "curate.generators.*", "curate.exports.*", "curate.validators.*", "curate.annotation.*")

STAGES = Registry("stage", plugins=STAGE_PACKAGES)

KEYS = {"outputs", "inputs", "latest", "kind", "section", "settings", "needs", "models", "after"}


def stage(name: str, **declaration: Any) -> Callable[[type], type]:
    """`@stage("clean", outputs=("tables", "databases"), inputs={"tables": ("ingest",)}, ...)`: declares
    a `Stage` subclass (literal arguments, read from the source). The class takes its `name` and
    `outputs` from here, so they are written once.

    `outputs`: the record kinds it writes. `inputs`: {name: selectors} (see the module's docstring);
    `latest`: the inputs read as the last of their stages that ran left them. `kind`: core stages
    always run; generators and checks run when `[build] stages` names them; the review stage when the
    workspace holds review state or `[review] required = true`; a correction stage only in `curate build
    RELEASE`. `section`: its table of the build config (`("generate", "rules")` is `[generate.rules]`).
    `settings`: `"module:function"` that checks that table (unknown keys refused, naming the known ones)
    and fills its defaults, called when the config is read. `needs`: stages that must be chosen with it
    (whose samples it rewrites); `models`: the `[models.<role>]` tables it is handed, in its config table
    under the role's name (`"judge?"`: only when the build config has one); `after`: selectors
    of stages it must follow although it reads nothing of theirs."""
    mark = STAGES.decorator(name, **declaration)

    def declare(cls: type) -> type:
        mark(cls)
        cls.name = name  # type: ignore[attr-defined]
        cls.outputs = tuple(declaration.get("outputs", ()))  # type: ignore[attr-defined]
        return cls
    return declare


@dataclass(frozen=True)
class Input:
    """One named input of a stage: the output of `stages`.

    `latest`: the output of the last of `stages` that ran (the samples as the latest check left
    them); otherwise the output of every one of them that ran, in pipeline order.
    """

    name: str
    stages: tuple[str, ...]
    latest: bool = False


@dataclass(frozen=True)
class Declared:
    """A stage as the pipeline knows it (see `stage` for the fields); `where` is its mark's file and line.
    As read from the mark, `inputs` and `after` hold selectors; `ordered` resolves them to stage names."""

    name: str
    target: str
    outputs: tuple[str, ...]
    inputs: tuple[Input, ...] = ()
    kind: str = CORE
    section: tuple[str, ...] = ()
    settings: str | None = None
    needs: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    where: str = ""

    @property
    def model_roles(self) -> tuple[tuple[str, bool], ...]:
        """(role, required) for each `[models.<role>]` table it is handed; `"judge?"` marks one optional."""
        return tuple((role.rstrip("?"), not role.endswith("?")) for role in self.models)

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

    @property
    def passes_samples(self) -> bool:
        """Writes the samples that the stages after it read (`"<samples"`): select, a check, review."""
        return self.writes_samples and self.kind in (CORE, CHECK, REVIEW)


def from_mark(mark: Mark) -> Declared:
    """A declaration as its mark writes it (selectors unresolved); a malformed one names its file."""
    meta = mark.meta
    unknown = sorted(set(meta) - KEYS)
    if unknown:
        raise ValueError(f"{mark.where}: @stage({mark.name!r}) takes no {', '.join(unknown)}; "
                         f"known: {', '.join(sorted(KEYS))}")

    def names(key: str) -> tuple[str, ...]:
        value = meta.get(key, ())
        if not isinstance(value, (tuple, list)) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{mark.where}: @stage({mark.name!r}): {key} is a tuple of names, got {value!r}")
        return tuple(value)

    inputs = meta.get("inputs", {})
    if not isinstance(inputs, dict):
        raise ValueError(f"{mark.where}: @stage({mark.name!r}): inputs is {{name: (selector, ...)}}, got {inputs!r}")
    latest = names("latest")
    stray = [n for n in latest if n not in inputs]
    if stray:
        raise ValueError(f"{mark.where}: @stage({mark.name!r}): latest names {', '.join(stray)}, which are no input")
    kind = meta.get("kind", CORE)
    if kind not in KINDS:
        raise ValueError(f"{mark.where}: @stage({mark.name!r}): kind {kind!r}; choose one of {', '.join(KINDS)}")
    parsed = []
    for input_name, selectors in inputs.items():
        if not isinstance(selectors, (tuple, list)) or not all(isinstance(s, str) for s in selectors):
            raise ValueError(f"{mark.where}: @stage({mark.name!r}): input {input_name!r} is a tuple of selectors, "
                             f"got {selectors!r}")
        parsed.append(Input(input_name, tuple(selectors), input_name in latest))
    settings = meta.get("settings")
    if settings is not None and not isinstance(settings, str):
        raise ValueError(f"{mark.where}: @stage({mark.name!r}): settings is a 'module:function' string")
    return Declared(mark.name, mark.target, names("outputs"), tuple(parsed), kind, names("section"), settings,
                    names("needs"), names("models"), names("after"), mark.where)


def ordered(declarations: Sequence[Declared]) -> tuple[Declared, ...]:
    """The declarations in dependency order, their selectors resolved to stage names (see the module's
    docstring for the rule); `declarations` in the source's order, which breaks ties."""
    by_name: dict[str, Declared] = {}
    for d in declarations:
        if d.name in by_name:
            raise ValueError(f"{d.where}: stage {d.name!r} is declared twice (also in {by_name[d.name].where})")
        by_name[d.name] = d

    def named(d: Declared, selector: str) -> list[str]:
        """The stages `selector` names that `d` must follow (`"<samples"`: those placed before it)."""
        if selector == PASSES_SAMPLES:  # a check follows select; a reader that passes nothing on, every passer
            return [s.name for s in declarations if s.passes_samples and s.name != d.name
                    and (not d.passes_samples or not any(PASSES_SAMPLES in i.stages for i in s.inputs))]
        if selector.startswith("*"):
            if selector[1:] not in KINDS:
                raise ValueError(f"{d.where}: stage {d.name} names {selector!r}: no such kind; "
                                 f"kinds: {', '.join(KINDS)}")
            return [s.name for s in declarations if s.kind == selector[1:] and s.name != d.name]
        if selector.startswith("<"):
            raise ValueError(f"{d.where}: stage {d.name} names {selector!r}: the one role of that form is "
                             f"{PASSES_SAMPLES!r}")
        if selector not in by_name:
            raise ValueError(f"{d.where}: stage {d.name} names {selector!r}, which no stage declares "
                             f"(known: {', '.join(by_name)})")
        return [selector]

    follows = {d.name: {s for sel in (*(x for i in d.inputs for x in i.stages), *d.needs, *d.after)
                        for s in named(d, sel)} for d in declarations}
    placed: list[Declared] = []
    while len(placed) < len(declarations):
        done = {d.name for d in placed}
        ready = next((d for d in declarations if d.name not in done and follows[d.name] <= done), None)
        if ready is None:
            raise ValueError(f"the stages form a cycle: {_cycle(declarations, follows, done)}")
        placed.append(ready)

    def resolve(d: Declared, selectors: tuple[str, ...], position: int) -> tuple[str, ...]:
        out: list[str] = []
        for selector in selectors:
            if selector == PASSES_SAMPLES:
                found = [s.name for s in placed[:position] if s.passes_samples]
            elif selector.startswith("*"):
                found = [s.name for s in placed if s.kind == selector[1:] and s.name != d.name]
            else:
                found = [selector]
            out += [s for s in found if s not in out]
        return tuple(out)

    return tuple(replace(d, inputs=tuple(Input(i.name, resolve(d, i.stages, n), i.latest) for i in d.inputs),
                         after=resolve(d, d.after, n))
                 for n, d in enumerate(placed))


def _cycle(declarations: Sequence[Declared], follows: dict[str, set[str]], done: set[str]) -> str:
    """One cycle among the stages not placed, as "a (file:line) follows b (file:line), which follows a"."""
    where = {d.name: d.where for d in declarations}
    first = [d.name for d in declarations if d.name not in done]
    path = [first[0]]
    while True:
        after = next(s for s in first if s in follows[path[-1]])
        if after in path:
            cycle = path[path.index(after):]
            break
        path.append(after)
    return " follows ".join(f"{s} ({where[s]})" for s in cycle) + f", which follows {cycle[0]}"


def _built() -> dict[str, Any]:
    """The graph's names (`DECLARED`, `PIPELINE_ORDER`, ...), built from the marks on first use, so that
    importing this module reads no source (`curate --help` stays instant)."""
    if "DECLARED" not in globals():
        declared = ordered([from_mark(m) for m in STAGES.marks()])
        globals().update(
            DECLARED=declared,
            BY_NAME={d.name: d for d in declared},
            PIPELINE_ORDER=tuple(d.name for d in declared),
            STAGE_INPUTS={d.name: d.reads for d in declared},
            GENERATORS=tuple(d.name for d in declared if d.kind == GENERATOR),
            CHECKS=tuple(d.name for d in declared if d.kind == CHECK),
            STEPS=(*(d.name for d in declared if d.kind != CORRECTION), "release"),  # `--until` choices
            # the stages whose current output is the workspace's samples (a corrected build's source, or
            # as the checks left them), latest first
            SAMPLES_LATEST_FIRST=tuple(reversed([d.name for d in declared
                                                 if d.writes_samples and d.kind != GENERATOR])))
    return globals()


GRAPH_NAMES = ("DECLARED", "BY_NAME", "PIPELINE_ORDER", "STAGE_INPUTS", "GENERATORS", "CHECKS", "STEPS",
               "SAMPLES_LATEST_FIRST")


def __getattr__(name: str) -> Any:
    if name in GRAPH_NAMES:
        return _built()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def declared(name: str) -> Declared:
    graph = _built()
    try:
        return graph["BY_NAME"][name]
    except KeyError:
        raise KeyError(f"unknown stage {name!r}; known: {', '.join(graph['PIPELINE_ORDER'])}") from None


def downstream(stage: str) -> set[str]:
    """Every stage that reads `stage`'s output, directly or not."""
    out: set[str] = set()
    frontier = [stage]
    while frontier:
        current = frontier.pop()
        for name, reads in _built()["STAGE_INPUTS"].items():
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


def check_order(declarations: Iterable[Declared] | None = None) -> None:
    """Every stage comes after every stage it reads, needs or follows (the build runs them in this order)."""
    seen: set[str] = set()
    for d in _built()["DECLARED"] if declarations is None else declarations:
        for what, names in (("reads", d.reads), ("needs", d.needs), ("follows", d.after)):
            late = [s for s in names if s not in seen]
            if late:
                raise ValueError(f"stage {d.name} {what} {', '.join(late)}, placed after it (or not at all)")
        seen.add(d.name)


def mermaid() -> str:
    """The graph as a Mermaid flowchart (docs/architecture.md shows it; a test keeps the two equal).

    Rounded boxes run when chosen (generators, checks) or when there is review state; a dotted
    arrow is a `latest` input: the samples as the last stage that ran left them."""
    lines = ["flowchart LR"]
    declarations = _built()["DECLARED"]
    for d in declarations:
        shape = f"{d.name}[{d.name}]" if d.kind == CORE else f"{d.name}([{d.name}: {d.kind}])"
        lines.append(f"    {shape}")
    for d in declarations:
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

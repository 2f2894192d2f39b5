"""Natural wording that cannot change the answer: TReB's generator/discriminator loop, over every task.

A template question ("What is the mean of y where x > 1?") is rewritten by a generator that sees the
tables, the question, the program and its executed answer. A discriminator that never sees the
program or the gold answers the rewrite from the tables alone and judges whether it is natural and
unambiguous. The rewrite is kept only when that answer matches the executed gold under the task's
metric and both judgements pass; otherwise the verdict goes back to the generator for another turn
(up to `max_turns`). A question that never passes keeps its template wording. The gold and the
program never change: a kept rewrite is the template sample with another question, and `select`
puts it in its template's place (`provenance["reworded_from"]`).

Samples advance turn by turn and role by role, so each step asks one batch of requests per model. A
sample whose reply is not there yet (a batch file's request, a server that did not answer) waits,
while the others go as far as their replies take them: with batch files, one stop of the build
holds every request of a round. The prompts are data: `prompts/adversarial.toml`.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from curate.curation.config import with_defaults
from curate.curation.llm.client import ChatClient, object_schema, parse_json_object, require_replies
from curate.curation.llm.types import ChatRequest, user
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import AdversarialReport
from curate.curation.pipeline.stage import Plan, Stage
from curate.curation.sample import Sample

PROMPTS_FILE = Path(__file__).with_name("prompts") / "adversarial.toml"
# metrics the loop cannot apply: they need a judge model, not the two answers
UNCHECKABLE_METRICS = ("llm_judge", "execution")
QUESTION_SCHEMA = object_schema(question={"type": "string"})
VERDICT_SCHEMA = object_schema(answer={}, natural={"type": "boolean"}, unambiguous={"type": "boolean"},
                               critique={"type": "string"})


@lru_cache(maxsize=1)
def prompts() -> dict[str, Any]:
    return tomllib.loads(PROMPTS_FILE.read_text())


def parse_question(text: str) -> str:
    question = " ".join(parse_json_object(text, {"question": str})["question"].split())
    if len(question) < 8:
        raise ValueError("the question is empty or too short")
    if len(question) > 1000:
        raise ValueError("the question is over 1,000 characters")
    return question


def parse_verdict(text: str) -> dict[str, Any]:
    value = parse_json_object(text, {"natural": bool, "unambiguous": bool})
    if "answer" not in value:  # null is an answer: the reader found none in the tables (a rejection, not a misreading)
        raise ValueError("the JSON object has no 'answer'")
    return {"answer": value["answer"], "natural": value["natural"], "unambiguous": value["unambiguous"],
            "critique": str(value.get("critique") or "")}


def task_metric(sample: Sample) -> tuple[str, dict[str, Any]]:
    """The task's metric and its settings (exact_match for a task the taxonomy lacks)."""
    from curate.curation.taxonomy import tasks

    task = tasks().get(sample.task)
    return (task.metric, dict(task.metric_settings)) if task else ("exact_match", {})


def metric_matches(sample: Sample, answer: Any, question: str, context: dict[str, Any]) -> tuple[bool, str]:
    """Does `answer` match the sample's executed gold under its task's metric (a full score)? And why not."""
    from curate.curation.registry import resolve

    name, settings = task_metric(sample)
    score = resolve("curate.evaluation.metrics:score")  # a sibling package: resolved, not imported
    result = score(name, answer, sample.answer, {"rel_tol": 0.01, **settings, **context, "question": question})
    return result.value >= 1.0, "" if result.value >= 1.0 else f"{name} {result.value:.2f}"


@dataclass
class Item:
    """One template sample, its tables as the prompt shows them, and what its metric needs beyond
    the two answers (execution_match: the tables and the gold SQL)."""

    sample: Sample
    tables: str
    context: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """One template sample's fate: `kept` (the sample reworded), `rejected` (no rewrite passed within
    the turns: the template wording stays), `flagged` (a reply that could not be read, even after
    one retry: the template stays) or `waiting` (a reply not there yet: the stage stops, its rerun
    goes on). `turns` records every rewrite and verdict."""

    source: Sample
    status: str = "pending"
    sample: Sample | None = None
    reason: str = ""
    turns: list[dict[str, Any]] = field(default_factory=list)
    waiting: Any = None  # the reply that did not come (a StructuredReply marked unavailable)
    waiting_on: str = ""  # its role


@dataclass
class AdversarialLoop:
    generator: ChatClient
    discriminator: ChatClient
    generator_params: dict[str, Any] = field(default_factory=dict)
    discriminator_params: dict[str, Any] = field(default_factory=dict)
    max_turns: int = 3
    matches: Callable[[Sample, Any, str, dict[str, Any]], tuple[bool, str]] = metric_matches

    def run(self, items: list[Item | tuple[Sample, str]]) -> list[Outcome]:
        items = [i if isinstance(i, Item) else Item(*i) for i in items]
        p = prompts()
        outcomes = [Outcome(source=i.sample) for i in items]
        conversations = [user(p["generator"]["prompt"].format(
            tables=i.tables, question=i.sample.question, program_kind=_program_kind(i.sample),
            program=i.sample.program.text if i.sample.program else "(none)", answer=_shown(i.sample.answer)))
            for i in items]
        active = list(range(len(items)))
        for turn in range(1, self.max_turns + 1):
            if not active:
                break
            written = self.generator.structured(
                [ChatRequest(conversations[i], self.generator_params, tag=items[i].sample.id) for i in active],
                parse_question, QUESTION_SCHEMA)
            asked, reviews = [], []
            for i, reply in zip(active, written):
                if self._stopped(outcomes[i], "generator", reply, turn):
                    continue
                outcomes[i].turns.append({"turn": turn, "generator": reply.text, "question": reply.value})
                conversations[i] = (*reply.exchange[:-1], {"role": "assistant", "content": reply.text})
                asked.append(i)
                reviews.append(ChatRequest(user(p["discriminator"]["prompt"].format(
                    tables=items[i].tables, question=reply.value,
                    answer_format=p["discriminator"]["answer_formats"].get(items[i].sample.answer_type, ""))),
                    self.discriminator_params, tag=items[i].sample.id))
            verdicts = self.discriminator.structured(reviews, parse_verdict, VERDICT_SCHEMA) if reviews else []
            still = []
            for i, review in zip(asked, verdicts):
                if self._stopped(outcomes[i], "discriminator", review, turn):
                    continue
                record = outcomes[i].turns[-1]
                record["discriminator"] = review.text
                verdict = review.value
                matched, why = (False, "the reader found no answer in the tables") if verdict["answer"] is None else \
                    self.matches(items[i].sample, verdict["answer"], record["question"], items[i].context)
                failed = [name for name, ok in (("wrong_answer", matched), ("unnatural", verdict["natural"]),
                                                ("ambiguous", verdict["unambiguous"])) if not ok]
                record.update(verdict=verdict, failed=failed, **({"metric": why} if why else {}))
                if not failed:
                    outcomes[i].status = "kept"
                    continue
                conversations[i] = (*conversations[i], {"role": "user", "content": p["generator"]["revise"].format(
                    verdict=_verdict_lines(p["generator"], failed, verdict, items[i].sample.answer))})
                still.append(i)
            active = still
        for i in active:
            outcomes[i].status, outcomes[i].reason = "rejected", f"no rewrite passed within {self.max_turns} turns"
        for o in outcomes:
            if o.status == "kept":
                o.sample = replace(o.source, question=o.turns[-1]["question"], id="", provenance={
                    **o.source.provenance, "reworded_from": o.source.id, "template_question": o.source.question,
                    "reworded_by": self.generator.model, "checked_by": self.discriminator.model,
                    "reworded_turns": str(len(o.turns))})
        return outcomes

    @staticmethod
    def _stopped(outcome: Outcome, role: str, reply: Any, turn: int) -> bool:
        """Set the outcome of a reply that did not come (waiting) or could not be read (flagged, the
        unreadable reply recorded in its turn)."""
        if not reply.flagged:
            return False
        if reply.unavailable:
            outcome.status, outcome.waiting, outcome.waiting_on = "waiting", reply, role
            return True
        outcome.status, outcome.reason = "flagged", f"{role}: {reply.error}"
        if role == "generator":
            outcome.turns.append({"turn": turn, "generator": reply.text})
        else:
            outcome.turns[-1]["discriminator"] = reply.text
        return True


def _shown(answer: Any) -> str:
    return json.dumps(answer, ensure_ascii=False, default=str)


def _program_kind(sample: Sample) -> str:
    if sample.program is None:
        return "none"
    kind = sample.program.kind
    dialect = getattr(sample.program, "dialect", "")
    return f"{kind}, {dialect}" if kind == "sql" and dialect else kind


def _verdict_lines(texts: dict[str, str], failed: list[str], verdict: dict[str, Any], gold: Any) -> str:
    lines = [texts[f].format(answered=_shown(verdict["answer"]), answer=_shown(gold)) for f in failed]
    if verdict["critique"].strip():
        lines.append(texts["critique"].format(critique=verdict["critique"].strip()))
    return "\n".join(lines)


def rejections(outcomes: list[Outcome]) -> dict[str, int]:
    """Every discriminator verdict that sent a rewrite back, by what failed (a verdict may fail on several)."""
    out: dict[str, int] = {"verdicts": 0, "rejected": 0}
    for o in outcomes:
        for turn in o.turns:
            if "verdict" not in turn:
                continue
            out["verdicts"] += 1
            out["rejected"] += bool(turn["failed"])
            for reason in turn["failed"]:
                out[reason] = out.get(reason, 0) + 1
    return out


# ------------------------------------------------------------------------------ the stage

STAGE_DEFAULTS: dict[str, Any] = {"seed": 0, "tasks": [], "per_task": 10, "max_samples": 0, "max_turns": 3,
                                  "max_table_rows": 0, "max_table_chars": 30000, "per_part": 16,
                                  "generator": {}, "discriminator": {}}


def stage_settings(config: dict[str, Any]) -> dict[str, Any]:
    out = with_defaults("generate.adversarial", config, STAGE_DEFAULTS)
    for role in ("generator", "discriminator"):
        if not out[role].get("model"):
            raise ValueError(f"the adversarial stage needs [models.{role}] with a model (see examples/build-llm.toml)")
    for key in ("per_task", "max_samples", "max_turns", "per_part"):
        value = out[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < (0 if key == "max_samples" else 1):
            raise ValueError(f"[generate.adversarial] {key} must be a whole number >= "
                             f"{0 if key == 'max_samples' else 1}, got {value!r}")
    if not isinstance(out["tasks"], list) or not all(isinstance(t, str) for t in out["tasks"]):
        raise ValueError(f"[generate.adversarial] tasks must be a list of task names or prefixes, got {out['tasks']!r}")
    return out


def drawn_per_task(files: list[str], prefixes: list[str], seed: int, per_task: int, limit: int
                   ) -> list[tuple[str, int]]:
    """(file, row) of up to `per_task` samples of each task (with a program, of a task whose metric
    compares two answers, of the task prefixes: none, any), in seeded content-hash order; at most
    `limit` in all (0: no limit); sorted by file, so a part reads each file once.

    The order is `select`'s (each template's samples by hash, then the templates taken in turn), so
    with the build's seed the samples tried are mostly those a capped task keeps: a rewrite of a
    template that select leaves out is lost (8 of 49 in a build whose draw had its own order). Select
    also drops near-duplicates and caps a database's share first, which this draw does not know."""
    import duckdb

    from curate.curation.taxonomy import tasks

    checkable = [k for k, t in tasks().items() if t.metric not in UNCHECKABLE_METRICS
                 and (not prefixes or any(k.startswith(p) for p in prefixes))]
    con = duckdb.connect()
    try:
        con.execute("CREATE TEMP TABLE s AS SELECT filename, file_row_number AS row, id, task, template, "
                    "program.kind AS kind "
                    "FROM read_parquet(?, filename = true, file_row_number = true)", [files])
        rows = con.execute("""
            WITH t AS (SELECT filename, row, id, task, md5(? || id) AS h,
                              row_number() OVER (PARTITION BY task, template ORDER BY md5(? || id), id) AS in_template
                       FROM s WHERE kind IS NOT NULL AND list_contains(?, task)),
            r AS (SELECT *, row_number() OVER (PARTITION BY task ORDER BY in_template, h, id) AS n FROM t)
            SELECT filename, row FROM r WHERE n <= ? ORDER BY h, id""",
                           [str(seed), str(seed), checkable, per_task]).fetchall()
    finally:
        con.close()
    return sorted(rows[:limit] if limit else rows)


def tables_shown(tables: list[Any], max_rows: int, max_chars: int) -> str:
    """The tables as both roles see them: several, each under the name its SQL uses, as `curate
    evaluate` shows them ("Table gapminder:"); under its title alone, a reader's query named the
    title ("Gapminder data") and missed a gold it had right."""
    from curate.curation.llm.prompts import table_for_prompt

    def shown(t: Any) -> str:  # max_rows 0: every row the characters allow, as `curate evaluate` cuts a table
        return table_for_prompt(t, max_rows or (t.n_rows if t is not None else 0), max_chars)

    if len(tables) == 1:
        return "Table:\n" + shown(tables[0])
    return "\n\n".join(f"Table {t.name.split('/')[-1] if t is not None else '?'}:\n" + shown(t) for t in tables)


def metric_context(sample: Sample, tables: list[Any]) -> dict[str, Any]:
    """What execution_match needs: the sample's tables under every name its SQL may use, the gold SQL."""
    if sample.program is None or sample.program.kind != "sql":
        return {}
    named: dict[str, Any] = {}
    for table in tables:
        if table is not None:
            named[table.name] = named[table.name.split("/")[-1]] = table.body
    if len(tables) == 1 and named:
        named["t"] = next(iter(named.values()))
    return {"tables": named, "program": sample.program.text,
            "dialect": getattr(sample.program, "dialect", "") or "duckdb"}


@stage("adversarial", outputs=("samples", "llm_records"),
       inputs={"samples": ("rules", "sql"), "tables": ("clean", "rules")}, kind="generator",
       section=("generate", "adversarial"), settings="curate.generators.adversarial:stage_settings",
       models=("generator", "discriminator"))
class AdversarialStage(Stage):
    """The `adversarial` stage: template samples of the rules and sql stages, reworded by the loop above.

    Inputs: the samples of the rules and sql stages, and the tables (clean's, and the rules stage's
    derived ones). Outputs the kept rewrites (each the template sample with its new question) and one
    `llm_records` row per sample tried (its status, reason and every turn), so rejected and flagged
    ones stay auditable. Replies are cached in the workspace (`llm-cache.sqlite`): a rerun, or one
    resumed with batch replies, asks no finished request again.
    """

    version = "3"  # 2: every task, one question, a discriminator that answers without the gold; 3: tables named

    report_type = AdversarialReport

    def in_process(self, config: dict[str, Any]) -> bool:
        from curate.curation.llm import uses_in_process_model

        return uses_in_process_model(config.get("generator"), config.get("discriminator"))

    def fingerprint(self, config: dict[str, Any]) -> Any:
        return prompts()

    def plan(self, config: dict[str, Any], inputs: list[Any]) -> Plan:
        from curate.curation.arrow_io import table_index
        from curate.curation.llm.cache import workspace_cache

        s = stage_settings(config)
        inputs = list({str(d.path): d for d in inputs}.values())  # rules is read for samples and tables: once
        files = [str(p) for d in inputs for p in d.files("samples")]
        if not files:
            return Plan(tasks=[])
        tables = table_index(str(p) for d in inputs for p in d.files("tables"))
        chosen = drawn_per_task(files, s["tasks"], s["seed"], s["per_task"], s["max_samples"])
        parts = [chosen[i:i + s["per_part"]] for i in range(0, len(chosen), s["per_part"])]
        return Plan(tasks=parts, shared={"tables": tables, "cache": str(workspace_cache(inputs[0]))})

    def run_part(self, task: list[tuple[str, int]], shared: dict[str, Any], config: dict[str, Any]):
        import pyarrow as pa

        from curate.curation.arrow_io import read_cached, samples_from_arrow, samples_to_arrow, table_at
        from curate.curation.llm.client import client_from_config

        s = stage_settings(config)
        items = []
        for path, row in task:  # sorted by file: each samples file is read once
            sample = next(samples_from_arrow(read_cached(path).slice(row, 1)))
            tables = [table_at(*shared["tables"][t]) if t in shared["tables"] else None for t in sample.table_ids]
            items.append(Item(sample, tables_shown(tables, s["max_table_rows"], s["max_table_chars"]),
                              metric_context(sample, tables)))
        generator, gen_params = client_from_config(s["generator"], shared["cache"], "generator")
        discriminator, disc_params = client_from_config(s["discriminator"], shared["cache"], "discriminator")
        outcomes = AdversarialLoop(generator, discriminator, gen_params, disc_params, s["max_turns"]).run(items)
        for client, role in ((generator, "generator"), (discriminator, "discriminator")):
            # a round's requests all written (every sample went as far as its replies took it): stop here
            require_replies(client, [o.waiting for o in outcomes if o.waiting_on == role])
        kept = [o.sample for o in outcomes if o.sample is not None]
        records = pa.Table.from_pylist([{"source": o.source.id, "status": o.status, "reason": o.reason,
                                         "turns": json.dumps(o.turns, ensure_ascii=False, default=str),
                                         "sample": o.sample.id if o.sample else ""} for o in outcomes],
                                       schema=pa.schema([(k, pa.string()) for k in
                                                         ("source", "status", "reason", "turns", "sample")]))
        by_status: dict[str, int] = {}
        by_task: dict[str, dict[str, int]] = {}
        for o in outcomes:
            by_status[o.status] = by_status.get(o.status, 0) + 1
            counts = by_task.setdefault(o.source.task, {"tried": 0, "kept": 0})
            counts["tried"] += 1
            counts["kept"] += o.status == "kept"
        summary = {"tried": len(outcomes), "samples": len(kept), "by_status": by_status, "by_task": by_task,
                   "verdicts": rejections(outcomes),
                   "usage": {"generator": generator.usage.as_dict(), "discriminator": discriminator.usage.as_dict()}}
        return {"samples": samples_to_arrow(kept), "llm_records": records}, summary

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        from curate.curation.pipeline.stage import merge_counts

        report = merge_counts(summaries)
        report["models"] = {role: {k: v for k, v in config.get(role, {}).items() if k != "api_key"}
                            for role in ("generator", "discriminator")}
        return report

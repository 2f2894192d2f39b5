"""TReB's adversarial multi-turn question writing: a generator and a discriminator.

Input: a reasoning-chain sample (its steps, its executed answer) and its table. The generator
writes two forms of the question: a long one (an analyst's multi-step request) and a short one (a
casual user's brief question). The discriminator scores each form for semantic plausibility,
logical consistency and answerability (1-5, with reasons). Forms that fall short go back to the
generator with that feedback, for up to `max_turns` turns. A sample is kept only when both forms
pass; its gold answer stays the chain's executed answer. Every turn is recorded on the sample.

All samples of a batch advance turn by turn, so each turn is one batch of requests per model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from curate.curation.config import with_defaults
from curate.curation.llm.client import ChatClient, object_schema, parse_json_object
from curate.curation.llm.types import ChatRequest, ModelUnavailable, user
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import AdversarialReport
from curate.curation.pipeline.stage import Plan, Stage
from curate.curation.sample import Sample

CRITERIA = ("plausibility", "consistency", "answerability")
FORMS = ("long", "short")

GENERATOR_PROMPT = """You write questions about a table for a benchmark.

Table:
{table}

A program computes the answer in these steps:
{steps}

Its answer is: {answer}

A template phrased the question as: "{question}"

Write the same question twice, so that the steps above answer it and nothing else does:
- "long": an analyst's multi-step request in full sentences, naming every condition;
- "short": a casual user's brief question with the same meaning.
Reply with JSON only: {{"long": "...", "short": "..."}}"""

REVISE_PROMPT = """A reviewer scored your questions 1-5 (plausibility, consistency, answerability) and said:
{feedback}
Rewrite them so that both pass. Reply with JSON only: {{"long": "...", "short": "..."}}"""

DISCRIMINATOR_PROMPT = """You review benchmark questions about a table.

Table:
{table}

The intended answer, computed by a program in these steps:
{steps}
Answer: {answer}

Long form: "{long}"
Short form: "{short}"

Score each form from 1 to 5 for plausibility (a real user would ask it), consistency (it means
exactly what the steps compute) and answerability (the table alone answers it, with the answer
above), and give your reasons. Reply with JSON only:
{{"long": {{"plausibility": n, "consistency": n, "answerability": n, "reasons": "..."}},
 "short": {{"plausibility": n, "consistency": n, "answerability": n, "reasons": "..."}}}}"""


def _form_scores() -> dict[str, Any]:
    score = {"type": "integer", "minimum": 1, "maximum": 5}
    return object_schema(**{c: score for c in CRITERIA}, reasons={"type": "string"})


FORMS_SCHEMA = object_schema(long={"type": "string"}, short={"type": "string"})
SCORES_SCHEMA = object_schema(long=_form_scores(), short=_form_scores())


def parse_forms(text: str) -> dict[str, str]:
    value = parse_json_object(text, {"long": str, "short": str})
    for form in FORMS:
        if len(value[form].strip()) < 8:
            raise ValueError(f"the {form} form is empty or too short")
    return {form: value[form].strip() for form in FORMS}


def parse_scores(text: str) -> dict[str, dict[str, Any]]:
    value = parse_json_object(text, {"long": dict, "short": dict})
    out = {}
    for form in FORMS:
        scores = value[form]
        for criterion in CRITERIA:
            score = scores.get(criterion)
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not 1 <= score <= 5:
                raise ValueError(f"{form}.{criterion} must be a number from 1 to 5, got {score!r}")
        out[form] = {**{c: scores[c] for c in CRITERIA}, "reasons": str(scores.get("reasons", ""))}
    return out


@dataclass
class Outcome:
    """One chain sample's fate: `kept` (the sample with both forms), `rejected` (no pass within the
    turns) or `flagged` (a reply that could not be read, even after one retry)."""

    source: Sample
    status: str = "pending"
    sample: Sample | None = None
    reason: str = ""
    unavailable: bool = False  # flagged because a model server failed, not because of a reply
    turns: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class AdversarialLoop:
    generator: ChatClient
    discriminator: ChatClient
    generator_params: dict[str, Any] = field(default_factory=dict)
    discriminator_params: dict[str, Any] = field(default_factory=dict)
    max_turns: int = 3
    threshold: float = 4.0  # every criterion of both forms must reach it

    def run(self, items: list[tuple[Sample, str]]) -> list[Outcome]:
        """`items`: (chain sample, its table serialized for the prompt)."""
        outcomes = [Outcome(source=s) for s, _ in items]
        tables = [t for _, t in items]
        conversations: list[tuple[dict[str, str], ...]] = [
            user(GENERATOR_PROMPT.format(table=t, steps=_steps(s), answer=json.dumps(s.answer, ensure_ascii=False),
                                         question=s.question)) for s, t in items]
        active = list(range(len(items)))
        for turn in range(1, self.max_turns + 1):
            if not active:
                break
            written = self.generator.structured(
                [ChatRequest(conversations[i], self.generator_params, tag=items[i][0].id) for i in active], parse_forms,
                FORMS_SCHEMA)
            judged_ids, reviews = [], []
            for i, reply in zip(active, written):
                record = {"turn": turn, "generator": reply.text}
                outcomes[i].turns.append(record)
                if reply.flagged:
                    outcomes[i].status, outcomes[i].reason = "flagged", f"generator: {reply.error}"
                    outcomes[i].unavailable = reply.unavailable
                    continue
                record["forms"] = reply.value
                conversations[i] = (*reply.exchange[:-1], {"role": "assistant", "content": reply.text})
                judged_ids.append(i)
                s = outcomes[i].source
                reviews.append(ChatRequest(user(DISCRIMINATOR_PROMPT.format(
                    table=tables[i], steps=_steps(s), answer=json.dumps(s.answer, ensure_ascii=False),
                    long=reply.value["long"], short=reply.value["short"])), self.discriminator_params, tag=s.id))
            scored = self.discriminator.structured(reviews, parse_scores, SCORES_SCHEMA) if reviews else []
            still = []
            for i, review in zip(judged_ids, scored):
                record = outcomes[i].turns[-1]
                record["discriminator"] = review.text
                if review.flagged:
                    outcomes[i].status, outcomes[i].reason = "flagged", f"discriminator: {review.error}"
                    outcomes[i].unavailable = review.unavailable
                    continue
                record["scores"] = review.value
                failing = {f: s for f, s in review.value.items() if min(s[c] for c in CRITERIA) < self.threshold}
                if not failing:
                    outcomes[i].status = "kept"
                    continue
                feedback = "\n".join(f"- {form}: " + ", ".join(f"{c} {s[c]}" for c in CRITERIA)
                                     + f". {s['reasons']}" for form, s in failing.items())
                conversations[i] = (*conversations[i], {"role": "user", "content": REVISE_PROMPT.format(
                    feedback=feedback)})
                still.append(i)
            active = still
        for i in active:
            outcomes[i].status = "rejected"
            outcomes[i].reason = f"no pass within {self.max_turns} turns"
        for o in outcomes:
            if o.status == "kept":
                forms = o.turns[-1]["forms"]
                o.sample = replace(
                    o.source, question=forms["long"], question_short=forms["short"], origin="llm", id="",
                    provenance={**o.source.provenance, "chain_sample": o.source.id, "turns": json.dumps(o.turns),
                                "generator": self.generator.model, "discriminator": self.discriminator.model})
        return outcomes


def _steps(sample: Sample) -> str:
    """The chain's steps as numbered lines (the program's JSON, one step a line)."""
    if sample.program is None:
        return "(no program)"
    try:
        steps = json.loads(sample.program.text)
    except json.JSONDecodeError:
        return sample.program.text
    steps = steps.get("steps", steps) if isinstance(steps, dict) else steps
    if not isinstance(steps, list):
        return sample.program.text
    return "\n".join(f"{n}. {json.dumps(step, ensure_ascii=False)}" for n, step in enumerate(steps, 1))


# ------------------------------------------------------------------------------ the stage

STAGE_DEFAULTS: dict[str, Any] = {"seed": 0, "max_samples": 50, "max_turns": 3, "threshold": 4.0,
                                  "max_table_rows": 20, "max_table_chars": 4000, "tasks": ["ADA/"], "per_part": 16,
                                  "generator": {}, "discriminator": {}}


def stage_settings(config: dict[str, Any]) -> dict[str, Any]:
    out = with_defaults("generate.adversarial", config, STAGE_DEFAULTS)
    for role in ("generator", "discriminator"):
        if not out[role].get("model"):
            raise ValueError(f"the adversarial stage needs [models.{role}] with a model (see examples/build-llm.toml)")
    return out


@stage("adversarial", outputs=("samples", "llm_records"), inputs={"samples": ("rules",), "tables": ("clean",)},
       kind="generator", section=("generate", "adversarial"), settings="curate.generators.adversarial:stage_settings",
       needs=("rules",), models=("generator", "discriminator"))
class AdversarialStage(Stage):
    """The `adversarial` stage: chain samples of the rules stage, rewritten by the loop above.

    Inputs: the rules dataset (its chain samples and derived tables) and the clean dataset (the
    tables). Outputs the kept samples and one `llm_records` row per chain sample (its status,
    reason and every turn), so rejected and flagged ones stay auditable. Replies are cached in the
    workspace (`llm-cache.sqlite`), so a rerun, or a resumed run, asks no finished request again.
    """

    version = "1"

    report_type = AdversarialReport

    def in_process(self, config: dict[str, Any]) -> bool:
        from curate.curation.llm import uses_in_process_model

        return uses_in_process_model(config.get("generator"), config.get("discriminator"))

    def fingerprint(self, config: dict[str, Any]) -> Any:
        return [GENERATOR_PROMPT, REVISE_PROMPT, DISCRIMINATOR_PROMPT]

    def plan(self, config: dict[str, Any], inputs: list[Any]) -> Plan:
        from curate.curation.arrow_io import drawn_sample_rows, table_index
        from curate.curation.llm.cache import workspace_cache

        s = stage_settings(config)
        files = [str(p) for p in inputs[0].files("samples")]
        tables = table_index(str(p) for d in inputs for p in d.files("tables"))
        if not files:
            return Plan(tasks=[])
        chosen = drawn_sample_rows(files, "chain", s["tasks"], s["seed"], s["max_samples"])
        tasks = [chosen[i:i + s["per_part"]] for i in range(0, len(chosen), s["per_part"])]
        cache = workspace_cache(inputs[0])
        return Plan(tasks=tasks, shared={"tables": tables, "cache": str(cache)})

    def run_part(self, task: list[tuple[str, int]], shared: dict[str, Any], config: dict[str, Any]):
        import pyarrow as pa

        from curate.curation.arrow_io import read_cached, samples_from_arrow, samples_to_arrow, table_at
        from curate.curation.llm.client import client_from_config
        from curate.curation.llm.prompts import table_for_prompt

        s = stage_settings(config)
        items = []
        for path, row in task:  # sorted by file: each samples file is read once
            sample = next(samples_from_arrow(read_cached(path).slice(row, 1)))
            where = shared["tables"].get(sample.table_ids[0])
            table = table_at(*where) if where else None
            items.append((sample, table_for_prompt(table, s["max_table_rows"], s["max_table_chars"])))
        generator, gen_params = client_from_config(s["generator"], shared["cache"], "generator")
        discriminator, disc_params = client_from_config(s["discriminator"], shared["cache"], "discriminator")
        loop = AdversarialLoop(generator, discriminator, gen_params, disc_params, s["max_turns"], s["threshold"])
        outcomes = loop.run(items)
        unreachable = [o.reason for o in outcomes if o.unavailable]
        if unreachable:
            raise ModelUnavailable(f"{len(unreachable)} of {len(outcomes)} chains got no reply from a model "
                                   f"({unreachable[0]}); rerun when it answers: finished requests are cached")
        kept = [o.sample for o in outcomes if o.sample is not None]
        records = pa.Table.from_pylist([{"source": o.source.id, "status": o.status, "reason": o.reason,
                                         "turns": json.dumps(o.turns, ensure_ascii=False),
                                         "sample": o.sample.id if o.sample else ""} for o in outcomes],
                                       schema=pa.schema([(k, pa.string()) for k in
                                                         ("source", "status", "reason", "turns", "sample")]))
        by_status: dict[str, int] = {}
        for o in outcomes:
            by_status[o.status] = by_status.get(o.status, 0) + 1
        summary = {"chains": len(outcomes), "samples": len(kept), "by_status": by_status,
                   "usage": {"generator": generator.usage.as_dict(), "discriminator": discriminator.usage.as_dict()}}
        return {"samples": samples_to_arrow(kept), "llm_records": records}, summary

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        from curate.curation.pipeline.stage import merge_counts

        report = merge_counts(summaries)
        report["models"] = {role: {k: v for k, v in config.get(role, {}).items() if k != "api_key"}
                            for role in ("generator", "discriminator")}
        return report

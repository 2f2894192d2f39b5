"""Questions written by a model: MMQA's phrasing of SQL samples, and RealHiTBench's per-type prompts.

- `phrase`: a SQL sample's template question ("What is the name of the sector with the largest
  total of ...?") rewritten by the generator as the question a person would ask. The program and
  its executed answer stay; the rewrite is kept only if it still names every value the SQL
  compares against (a filter with a reason: `drops_value`, `not_a_question`, `flagged`).
- `questions`: for tables chosen by content hash, one question per configured type, written from
  RealHiTBench's per-type instructions. No rule computed these answers: they are candidate golds
  (origin "llm", no program) that the vote and a human check decide.

The prompts are data: `curate/generators/prompts/llm_writing.toml`. Replies are cached in the workspace
(`llm-cache.sqlite`); a dead server stops the stage with the reason and a rerun goes on.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from curate.curation.answers import parse_typed_answer
from curate.curation.config import with_defaults
from curate.curation.llm.client import object_schema, require_replies
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import PhraseReport, QuestionsReport
from curate.curation.pipeline.stage import Plan, Stage, merge_counts

PROMPTS_FILE = Path(__file__).with_name("prompts") / "llm_writing.toml"


@lru_cache(maxsize=1)
def prompts() -> dict[str, Any]:
    return tomllib.loads(PROMPTS_FILE.read_text())


def _records_table(rows: list[dict[str, str]]) -> Any:
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=pa.schema([(k, pa.string()) for k in
                                                        ("source", "status", "reason", "exchange", "sample")]))


def _usage(client: Any) -> dict[str, Any]:
    return {client.role: client.usage.as_dict()}


# ------------------------------------------------------------------------------ phrase (MMQA)

_COMPARISONS = ("EQ", "NEQ", "GT", "GTE", "LT", "LTE", "In", "Between", "Like", "ILike")


def compared_values(sql: str, dialect: str = "duckdb") -> list[str]:
    """The literal values a query compares columns against (not LIMITs, rounding digits, ...)."""
    import sqlglot
    from sqlglot import exp

    values = []
    for literal in sqlglot.parse_one(sql, read=dialect or None).find_all(exp.Literal):
        parent = literal.parent
        while isinstance(parent, (exp.Paren, exp.Cast, exp.Neg)):
            parent = parent.parent
        if type(parent).__name__ in _COMPARISONS:
            values.append(f"-{literal.this}" if isinstance(literal.parent, exp.Neg) else str(literal.this))
    return values


def _mentions(question: str, value: str) -> bool:
    text = question.lower()
    if value.lower() in text:
        return True
    try:
        number = float(value)
    except ValueError:
        return False
    spellings = {f"{number:,.0f}" if number.is_integer() else f"{number:,}", f"{number:g}"}
    return any(s.lower() in text for s in spellings)


def parse_phrasing(text: str) -> dict[str, Any]:
    from curate.curation.llm.client import parse_json_object

    value = parse_json_object(text, {"question": str})
    if not value["question"].strip():
        raise ValueError("the question is empty")
    return value


PHRASE_DEFAULTS: dict[str, Any] = {"seed": 0, "max_samples": 100, "tasks": ["MMQA/multi_table_qa"], "per_part": 16,
                                   "generator": {}}


def phrase_settings(config: dict[str, Any]) -> dict[str, Any]:
    out = with_defaults("generate.phrase", config, PHRASE_DEFAULTS)
    if not out["generator"].get("model"):
        raise ValueError("the phrase stage needs [models.generator] with a model")
    return out


@stage("phrase", outputs=("samples", "llm_records"), inputs={"samples": ("sql",), "tables": ("clean",)}, kind="generator",
       section=("generate", "phrase"), settings="curate.generators.llm_writing:phrase_settings", needs=("sql",),
       models=("generator",))
class PhraseStage(Stage):
    """The `phrase` stage. Inputs: the sql dataset, then the clean dataset (table names and columns).
    Outputs the kept rewrites as new samples (origin "llm", the same program and answer,
    `provenance["phrased_from"]` naming the template sample) and one `llm_records` row per sample tried."""

    version = "1"

    report_type = PhraseReport

    def in_process(self, config: dict[str, Any]) -> bool:
        from curate.curation.llm import uses_in_process_model

        return uses_in_process_model(config.get("generator"))

    def fingerprint(self, config: dict[str, Any]) -> Any:
        return prompts()["phrase"]

    def plan(self, config: dict[str, Any], inputs: list[Any]) -> Plan:
        from curate.curation.arrow_io import drawn_sample_rows, table_index
        from curate.curation.llm.cache import workspace_cache

        s = phrase_settings(config)
        files = [str(p) for p in inputs[0].files("samples")]
        if not files:
            return Plan(tasks=[])
        tables = table_index(str(p) for d in inputs for p in d.files("tables"))
        chosen = drawn_sample_rows(files, "sql", s["tasks"], s["seed"], s["max_samples"])
        parts = [chosen[i:i + s["per_part"]] for i in range(0, len(chosen), s["per_part"])]
        cache = workspace_cache(inputs[0])
        return Plan(tasks=parts, shared={"tables": tables, "cache": str(cache)})

    def run_part(self, task: list[tuple[str, int]], shared: dict[str, Any], config: dict[str, Any]):
        from curate.curation.arrow_io import read_cached, samples_from_arrow, samples_to_arrow, table_at
        from curate.curation.llm.client import client_from_config
        from curate.curation.llm.types import ChatRequest, user

        s = phrase_settings(config)
        samples = [next(samples_from_arrow(read_cached(path).slice(row, 1))) for path, row in task]
        requests = []
        for sample in samples:
            schema = []
            for table_id in sample.table_ids:
                where = shared["tables"].get(table_id)
                table = table_at(*where) if where else None
                schema.append(f"- {table.name}({', '.join(table.columns)})" if table else f"- {table_id} (not available)")
            requests.append(ChatRequest(user(prompts()["phrase"]["prompt"].format(
                schema="\n".join(schema), sql=sample.program.text, question=sample.question)), {}, tag=sample.id))
        client, params = client_from_config(s["generator"], shared["cache"], "generator")
        requests = [replace(r, params=params) for r in requests]
        replies = client.structured(requests, parse_phrasing, object_schema(question={"type": "string"}))
        require_replies(client, replies)
        kept, records, reasons = [], [], {}
        for sample, reply in zip(samples, replies):
            status, reason, out = "flagged", reply.error, None
            if not reply.flagged:
                question = " ".join(reply.value["question"].split())
                missing = [v for v in compared_values(sample.program.text, sample.program.dialect)
                           if not _mentions(question, v)]
                if missing:
                    status, reason = "dropped", f"drops_value: {', '.join(missing[:5])}"
                elif not question.endswith("?"):
                    status, reason = "dropped", "not_a_question"
                else:
                    status, reason = "kept", ""
                    out = replace(sample, question=question, origin="llm", template=f"phrase:{sample.template}", id="",
                                  provenance={**sample.provenance, "phrased_from": sample.id,
                                              "template_question": sample.question, "phrased_by": client.model})
                    kept.append(out)
            key = "flagged" if status == "flagged" else (reason.split(":")[0] if reason else status)
            reasons[key] = reasons.get(key, 0) + 1
            records.append({"source": sample.id, "status": status, "reason": reason,
                            "exchange": json.dumps(reply.exchange, ensure_ascii=False),
                            "sample": out.id if out else ""})
        summary = {"tried": len(samples), "samples": len(kept), "by_reason": reasons, "usage": _usage(client)}
        return {"samples": samples_to_arrow(kept), "llm_records": _records_table(records)}, summary


# ------------------------------------------------------------------------------ questions (RealHiTBench)

# what a structured-output server is held to, per answer type (parse_typed_answer checks the rest)
ANSWER_SCHEMAS: dict[str, dict[str, Any]] = {
    "bool": {"type": "boolean"}, "number": {"type": "number"}, "text": {"type": "string"},
    "list": {"type": "array", "items": {"type": ["string", "number"]}, "minItems": 1},
    "chart": {"type": "object", "properties": {"chart_type": {"type": "string"}, "x": {"type": "array"},
                                               "y": {"type": "array", "items": {"type": "number"}}},
              "required": ["chart_type", "x", "y"]},
    "table": {"type": "string"},
}


def question_parser(answer_type: str):
    def parse(text: str) -> dict[str, Any]:
        from curate.curation.llm.client import parse_json_object

        value = parse_json_object(text, {"question": str})
        if not value["question"].strip():
            raise ValueError("the question is empty")
        if "answer" not in value:
            raise ValueError("the JSON object has no 'answer'")
        return {"question": " ".join(value["question"].split()), "answer": parse_typed_answer(value["answer"], answer_type)}
    return parse


QUESTIONS_DEFAULTS: dict[str, Any] = {
    "seed": 0, "max_tables": 20, "per_part": 4, "max_table_rows": 30, "max_table_chars": 6000,
    "types": ["RH/FC/value_matching", "RH/FC/multi_hop_fact_checking", "RH/FC/inference_based_fact_checking",
              "RH/NR/calculation", "RH/NR/comparison", "RH/NR/counting", "RH/NR/ranking",
              "RH/NR/multi_hop_numerical_reasoning"],
    "generator": {}}


def questions_settings(config: dict[str, Any]) -> dict[str, Any]:
    from curate.curation.taxonomy import tasks

    out = with_defaults("generate.questions", config, QUESTIONS_DEFAULTS)
    if not out["generator"].get("model"):
        raise ValueError("the questions stage needs [models.generator] with a model")
    known = prompts()["questions"]["types"]
    unknown = [t for t in out["types"] if t not in known or t not in tasks()]
    if unknown:
        raise ValueError(f"[generate.questions] types: no prompt for {', '.join(unknown)}; known: {', '.join(known)}")
    return out


@stage("questions", outputs=("samples", "llm_records"), inputs={"tables": ("clean",)}, kind="generator",
       section=("generate", "questions"), settings="curate.generators.llm_writing:questions_settings", models=("generator",))
class QuestionsStage(Stage):
    """The `questions` stage. Input: the clean dataset. For up to `max_tables` tables (content-hash
    order) and each configured type, one question and its candidate answer. Outputs samples
    (origin "llm", no program: the vote decides them) and one `llm_records` row per request."""

    version = "1"

    report_type = QuestionsReport

    def in_process(self, config: dict[str, Any]) -> bool:
        from curate.curation.llm import uses_in_process_model

        return uses_in_process_model(config.get("generator"))

    def fingerprint(self, config: dict[str, Any]) -> Any:
        return prompts()["questions"]

    def plan(self, config: dict[str, Any], inputs: list[Any]) -> Plan:
        import duckdb

        from curate.curation.arrow_io import table_index
        from curate.curation.llm.cache import workspace_cache

        s = questions_settings(config)
        files = [str(p) for d in inputs for p in d.files("tables")]
        if not files:
            return Plan(tasks=[])
        con = duckdb.connect()
        ids = [r[0] for r in con.execute("SELECT id FROM read_parquet(?) ORDER BY md5(? || id), id LIMIT ?",
                                         [files, str(s["seed"]), s["max_tables"]]).fetchall()]
        con.close()
        tables = table_index(files)
        chosen = sorted(ids)
        parts = [chosen[i:i + s["per_part"]] for i in range(0, len(chosen), s["per_part"])]
        cache = workspace_cache(inputs[0])
        return Plan(tasks=parts, shared={"tables": tables, "cache": str(cache)})

    def run_part(self, task: list[str], shared: dict[str, Any], config: dict[str, Any]):
        from curate.curation.arrow_io import samples_to_arrow, table_at
        from curate.curation.llm.client import client_from_config
        from curate.curation.llm.prompts import table_for_prompt
        from curate.curation.llm.types import ChatRequest, user
        from curate.curation.sample import Sample
        from curate.curation.taxonomy import task as task_of

        s = questions_settings(config)
        spec = prompts()["questions"]
        client, params = client_from_config(s["generator"], shared["cache"], "generator")
        kept, records, by_type, reasons = [], [], {}, {}
        for kind in s["types"]:
            t = spec["types"][kind]
            answer_type = task_of(kind).answer_type
            requests = []
            for table_id in task:
                table = table_at(*shared["tables"][table_id])
                requests.append(ChatRequest(user(spec["prompt"].format(
                    table=table_for_prompt(table, s["max_table_rows"], s["max_table_chars"]), type_name=t["name"],
                    instruction=t["instruction"], answer_format=t["answer_format"])), params, tag=f"{table_id}:{kind}"))
            replies = client.structured(requests, question_parser(answer_type),
                                        object_schema(question={"type": "string"}, answer=ANSWER_SCHEMAS[answer_type]))
            require_replies(client, replies)
            for table_id, reply in zip(task, replies):
                out = None
                if not reply.flagged:
                    out = Sample(task=kind, question=reply.value["question"], answer=reply.value["answer"],
                                 answer_type=answer_type, table_ids=(table_id,), origin="llm", template=f"llm:{kind}",
                                 provenance={"written_by": client.model})
                    kept.append(out)
                    by_type[kind] = by_type.get(kind, 0) + 1
                else:
                    reasons[kind] = reasons.get(kind, 0) + 1
                records.append({"source": f"{table_id}:{kind}", "status": "kept" if out else "flagged",
                                "reason": reply.error, "exchange": json.dumps(reply.exchange, ensure_ascii=False),
                                "sample": out.id if out else ""})
        # two types may yield the same question for one table: keep the first
        unique = list({x.id: x for x in reversed(kept)}.values())[::-1]
        summary = {"tables": len(task), "requests": len(records), "samples": len(unique), "by_type": by_type,
                   "flagged": reasons, "usage": _usage(client)}
        return {"samples": samples_to_arrow(unique), "llm_records": _records_table(records)}, summary

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        return merge_counts(summaries)

"""Stored predictions -> scored result rows, by each task's metric in the taxonomy."""

from __future__ import annotations

import json
from typing import Any

from curate.evaluation.dataset import EvalSample, ReleaseData


def _execution_context(data: ReleaseData, sample: EvalSample, config_name: str) -> dict[str, Any]:
    """The sample's tables under every name its SQL may use (the full name, its last part, `t`)."""
    tables: dict[str, Any] = {}
    for table_id in sample.table_ids:
        table = data.table(table_id)
        tables[table.name] = table.body
        tables[table.name.split("/")[-1]] = table.body
    if len(sample.table_ids) == 1:
        tables["t"] = next(iter(tables.values()))
    program = sample.program["text"] if sample.program and sample.program.get("kind") == "sql" else None
    dialect = (sample.program or {}).get("dialect") or "duckdb"
    return {"tables": tables, "program": program, "dialect": dialect, "question": sample.question}


def _executed(row: dict[str, Any], task: str) -> bool | None:
    """Did the model's code run without an error (ECR)? None where the reply was not meant to be code."""
    from curate.evaluation.charts import NO_CHART
    from curate.evaluation.modes import effective_mode

    runs_as = effective_mode(row["mode"], task)
    if runs_as in ("pot", "chart"):
        return bool(row["program"]) and row["error"] in ("", NO_CHART)
    if runs_as == "icot":
        turns = json.loads(row["turns"] or "[]")
        return all(t["ok"] for t in turns) if turns else None
    return None


def score_predictions(data: ReleaseData, rows: list[dict[str, Any]], samples: list[EvalSample], model: str,
                      rel_tol: float = 0.01, judged: dict[tuple[str, str], dict[str, Any]] | None = None
                      ) -> list[dict[str, Any]]:
    """One result row per prediction. `judged`: the judge's verdicts by (sample id, answer json), for
    `llm_judge` tasks; without a verdict such a row is unscored."""
    from curate.curation.taxonomy import tasks
    from curate.evaluation.metrics import JUDGED_METRICS, METRICS, score

    by_id = {s.id: s for s in samples}
    taxonomy = tasks()
    out = []
    for row in rows:
        sample = by_id.get(row["sample_id"])
        if sample is None:  # predicted in an earlier run with another --limit or --tasks
            continue
        task = taxonomy.get(sample.task)
        metric = task.metric if task else "exact_match"
        answer = json.loads(row["answer"]) if row["answer"] else None
        value: float | None
        details: dict[str, Any] = {}
        if metric in JUDGED_METRICS and answer is not None:
            verdict = (judged or {}).get((sample.id, row["answer"]))
            if verdict is None:
                value, details = None, {"unscored": "llm_judge needs a judge model (--judge-model)"}
            elif verdict["score"] is None:
                value, details = None, {"unscored": "the judge's verdict was unreadable", "judge_reply": verdict["reply"]}
            else:
                value, details = verdict["score"] / 100.0, {"judge_score": verdict["score"], "reason": verdict["reason"]}
        elif metric in JUDGED_METRICS:
            value, details = 0.0, {"unextracted": True}
        elif metric in METRICS:
            context: dict[str, Any] = {"rel_tol": rel_tol, **dict(task.metric_settings if task else ())}
            if metric == "execution_match":
                context.update(_execution_context(data, sample, row["config"]))
            result = score(metric, answer, sample.answer, context)
            value, details = result.value, result.details
        else:
            value, details = None, {"unscored": f"{metric} is not computed by this evaluator yet"}
        serialization, _, perturbation = row["config"].partition(":")
        out.append({"model": model, "sample_id": sample.id, "task": sample.task,
                    "skill": task.skill if task else "", "benchmark": task.benchmark if task else "",
                    "split": sample.split, "mode": row["mode"], "config": row["config"],
                    "serialization": serialization, "perturbation": perturbation, "metric": metric,
                    "score": value, "extracted": row["method"] != "none", "method": row["method"],
                    "executed": _executed(row, sample.task),
                    "gold": json.dumps(sample.answer, ensure_ascii=False), "answer": row["answer"],
                    "error": row["error"], "truncated": row.get("finish_reason") == "length",
                    "details": json.dumps(details, default=str),
                    "prompt_tokens": row["prompt_tokens"], "completion_tokens": row["completion_tokens"]})
    return sorted(out, key=lambda r: (r["sample_id"], r["mode"], r["config"]))


# the columns of results.parquet, in order (an empty results file has them too)
RESULT_COLUMNS = ("model", "sample_id", "task", "skill", "benchmark", "split", "mode", "config", "serialization",
                  "perturbation", "metric", "score", "extracted", "method", "executed", "gold", "answer", "error",
                  "truncated", "details", "prompt_tokens", "completion_tokens")

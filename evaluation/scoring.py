"""Stored predictions -> scored result rows, by each task's metric in the taxonomy."""

from __future__ import annotations

import json
from typing import Any

from evaluation.dataset import EvalSample, ReleaseData


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
    return {"tables": tables, "program": program}


def score_predictions(data: ReleaseData, rows: list[dict[str, Any]], samples: list[EvalSample], model: str,
                      rel_tol: float = 0.01) -> list[dict[str, Any]]:
    from curation.taxonomy import tasks
    from evaluation.metrics import METRICS, score

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
        if metric in METRICS:
            context: dict[str, Any] = {"rel_tol": rel_tol}
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
                    "gold": json.dumps(sample.answer, ensure_ascii=False), "answer": row["answer"],
                    "error": row["error"], "details": json.dumps(details, default=str),
                    "prompt_tokens": row["prompt_tokens"], "completion_tokens": row["completion_tokens"]})
    return sorted(out, key=lambda r: (r["sample_id"], r["mode"], r["config"]))

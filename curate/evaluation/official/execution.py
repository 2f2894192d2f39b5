"""The execution-accuracy profiles of imported text-to-SQL and multi-table benchmarks.

**bird**: BIRD's `curate.evaluation.py` counts a prediction right when its result rows, as a set, equal the
gold's (`set(predicted_res) == set(ground_truth_res)`): duplicates and row order are ignored, so a
query that returns a row twice, or the rows of an ORDER BY in another order, still counts; curate's
`execution_match` (multisets, ordered where the gold says ORDER BY) is reported beside it.

**spider**: execution accuracy as the Spider test-suite evaluator (Zhong et al., 2020) defines it:
the predicted and the gold query run on the database (here: a SQLite copy of its tables, as
released), and they match when the result rows are the same multiset, in the same order where the
gold says ORDER BY, allowing the predicted columns in another order. Spider's original
`curate.evaluation.py` matches executions through its own SQL parser (results keyed by parsed SELECT
units) and cannot parse every gold query, so the gold itself does not score 100% there; that path
needs Spider's parser and is not reproduced. curate's number (`execution_match`) keeps the
columns' order.

**mmqa**: MMQA's authors publish no evaluation code; the paper scores answers by exact match (EM)
and partial match (PM: the share of the gold's comma-separated values found in the answer), which
are reproduced here on the published answer text (case and surrounding spaces folded), and SQL by
text similarity to the gold query; text-to-SQL is scored here by execution (curate's
`execution_match` on the published tables), with the SQL's ROUGE-L to the published query beside it.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from typing import Any

from curate.evaluation.official import profile


def _runs(samples: list[Any], predictions: list[dict[str, Any]]) -> dict[tuple[str, str], list[tuple[Any, dict]]]:
    by_id = {s.id: s for s in samples}
    grouped: dict[tuple[str, str], list[tuple[Any, dict]]] = {}
    for row in sorted(predictions, key=lambda r: r["sample_id"]):
        if row["sample_id"] in by_id:
            grouped.setdefault((row["mode"], row["config"]), []).append((by_id[row["sample_id"]], row))
    return grouped


def _pct(values: list[float]) -> float:
    return round(sum(values) / len(values) * 100, 2) if values else 0.0


def same_results(gold: list[tuple], predicted: list[tuple], ordered: bool) -> bool:
    """The test suite's `result_eq`: equal rows (as a multiset unless ordered), the predicted
    columns possibly permuted."""
    if len(gold) != len(predicted):
        return False
    if not gold:
        return True
    width = len(gold[0])
    if any(len(r) != width for r in predicted):
        return False
    for order in itertools.permutations(range(width)) if width <= 6 else [tuple(range(width))]:
        moved = [tuple(r[i] for i in order) for r in predicted]
        if (moved == gold) if ordered else (Counter(moved) == Counter(gold)):
            return True
    return False


def _answer_sql(row: dict[str, Any]) -> str:
    answer = json.loads(row["answer"]) if row.get("answer") else None
    return answer if isinstance(answer, str) else ""


def same_sets(gold: list[tuple], predicted: list[tuple], ordered: bool) -> bool:
    """BIRD's evaluator: `set(predicted_res) == set(ground_truth_res)`: duplicates and order ignored."""
    return set(predicted) == set(gold)


@profile("bird")
def bird(data: Any, samples: list[Any], predictions: list[dict[str, Any]], results: list[dict[str, Any]],
         seed: int = 0, rerun: Any = None) -> dict[str, Any]:
    """BIRD's execution accuracy (its `curate.evaluation.py`): the two results equal as sets of rows."""
    return _execution(data, samples, predictions, results, same_sets, "BIRD", "EX (BIRD: sets of rows)",
                      "BIRD's execution accuracy compares the results as sets of rows (duplicates and order "
                      "ignored); curate's execution_match compares multisets, ordered where the gold says ORDER BY")


@profile("spider")
def spider(data: Any, samples: list[Any], predictions: list[dict[str, Any]], results: list[dict[str, Any]],
           seed: int = 0, rerun: Any = None) -> dict[str, Any]:
    return _execution(data, samples, predictions, results, same_results, "Spider", "EX (test suite)",
                      "Execution accuracy as the Spider test-suite evaluator defines it; Spider's original "
                      "parser-based exec match is not reproduced")


def _execution(data: Any, samples: list[Any], predictions: list[dict[str, Any]], results: list[dict[str, Any]],
               same: Any, benchmark: str, metric: str, note: str) -> dict[str, Any]:
    from curate.evaluation.metrics.execution import sqlite_rows
    from curate.evaluation.scoring import _execution_context

    curate = {(r["sample_id"], r["mode"], r["config"]): r["score"] for r in results}
    runs: dict[str, Any] = {}
    for (mode, config), pairs in _runs(samples, predictions).items():
        official, mine, disagreements = [], [], []
        for sample, row in pairs:
            context = _execution_context(data, sample, config)
            predicted = _answer_sql(row).strip().rstrip(";")
            gold_rows, pred_rows = sqlite_rows(context["tables"], context["program"] or "", predicted or "SELECT")
            ok = (not isinstance(gold_rows, str) and not isinstance(pred_rows, str) and bool(predicted)
                  and same(gold_rows, pred_rows, " order by " in (context["program"] or "").lower()))
            official.append(float(ok))
            theirs = curate.get((sample.id, mode, config))
            if theirs is not None:
                mine.append(theirs)
                if abs(theirs - float(ok)) > 1e-9:
                    disagreements.append({"sample_id": sample.id, "source_id": sample.provenance.get("source_id", ""),
                                          "official": float(ok), "curate": theirs, "predicted": predicted[:300]})
        runs[f"{mode}:{config}"] = {
            "types": {benchmark: {"EX": _pct(official), "total": len(official)}},
            "side_by_side": [{"subtype": f"{benchmark}/text_to_sql", "metric": metric, "official": _pct(official),
                              "curate": _pct(mine) if mine else None, "total": len(official)}],
            "curate_overall": _pct(mine) if mine else None, "disagreements": disagreements, "note": note}
    return {"runs": runs}


def _fold(text: Any) -> str:
    return " ".join(str(text).lower().split())


@profile("mmqa")
def mmqa(data: Any, samples: list[Any], predictions: list[dict[str, Any]], results: list[dict[str, Any]],
         seed: int = 0, rerun: Any = None) -> dict[str, Any]:
    from curate.curation.answers import final_answer_line
    from curate.evaluation.official.tablebench import rouge_l_scores

    curate = {(r["sample_id"], r["mode"], r["config"]): r["score"] for r in results}
    runs: dict[str, Any] = {}
    for (mode, config), pairs in _runs(samples, predictions).items():
        em, pm, ex, sql_rouge, qa_curate, disagreements = [], [], [], [], [], []
        for sample, row in pairs:
            theirs = curate.get((sample.id, mode, config))
            if sample.task == "MMQA/text_to_sql":
                ex.append(theirs or 0.0)
                sql_rouge += rouge_l_scores([sample.provenance.get("source_sql", "")], [_answer_sql(row)])
                continue
            gold = str(sample.provenance.get("answer_text") or sample.provenance.get("source_answer", ""))
            stated = final_answer_line(row.get("reply") or "") or ""
            exact = float(_fold(stated) == _fold(gold))
            items = [_fold(x) for x in gold.split(",") if x.strip()]
            partial = sum(1 for x in items if x in _fold(stated)) / len(items) if items else 0.0
            em.append(exact)
            pm.append(partial)
            if theirs is not None:
                qa_curate.append(theirs)
                if abs(theirs - exact) > 1e-9:
                    disagreements.append({"sample_id": sample.id, "source_id": sample.provenance.get("source_id", ""),
                                          "gold": gold, "answer": stated, "official": exact, "curate": theirs})
        side = [{"subtype": "MMQA/multi_table_qa", "metric": "EM", "official": _pct(em),
                 "curate": _pct(qa_curate) if qa_curate else None, "total": len(em)},
                {"subtype": "MMQA/text_to_sql", "metric": "EX", "official": _pct(ex), "curate": _pct(ex),
                 "total": len(ex)}]
        runs[f"{mode}:{config}"] = {
            "types": {"MMQA/multi_table_qa": {"EM": _pct(em), "PM": _pct(pm), "total": len(em)},
                      "MMQA/text_to_sql": {"EX": _pct(ex), "SQL ROUGE-L": _pct(sql_rouge), "total": len(ex)}},
            "side_by_side": side, "curate_overall": _pct(qa_curate + ex) if qa_curate or ex else None,
            "disagreements": disagreements,
            "note": "MMQA publishes no evaluation code: EM and PM follow the paper's definitions; text-to-SQL by execution"}
    return {"runs": runs}

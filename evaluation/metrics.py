"""Metrics by name (the taxonomy's `metric` of each task), scoring one prediction against its gold.

Each metric takes (prediction, gold, context) and returns a Score in [0, 1] with details. The
prediction is the extracted answer (None when nothing was extracted: 0). Maintained libraries do
the text metrics (rouge-score for ROUGE-L, sacrebleu for BLEU); nothing is re-implemented that a
library does. `context` carries what a metric may need beyond the two answers: the sample's
program and tables (execution accuracy), the tolerance, K for retrieval.

| metric             | what it compares                                                        |
| ------------------ | ----------------------------------------------------------------------- |
| exact_match        | equal after normalization: 42 = "42.0" = "42.00", case and spacing      |
|                    | ignored, lists in any order                                             |
| numeric_match      | numbers within `rel_tol` (default 1%): 0.947 ~ 0.95; else exact_match   |
| tolerance_10pct    | numbers within 10% (TableBench)                                         |
| token_f1           | SQuAD's token F1                                                        |
| rouge_l            | ROUGE-L F (rouge-score, stemmed)                                        |
| bleu               | sentence BLEU / 100 (sacrebleu)                                         |
| set_f1             | F1 of the two answers as sets                                           |
| partial_match      | share of the gold's items present in the prediction                     |
| retrieval_prf_at_k | precision, recall and F1 of the first K retrieved items (score: F1)     |
| key_selection      | MMQA's key selection accuracy: the same set of table.column keys (case, |
|                    | quoting and spacing ignored); precision, recall and F1 in the details   |
| chart_pass         | PASS@1 of a drawn chart: same chart type and values (evaluation.charts) |
| execution_match    | predicted SQL run in DuckDB over the sample's tables: same result set   |
|                    | as the gold program (as multisets; ordered when the gold has ORDER BY)  |
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from curation.answers import Equivalence, normalize_answer
from curation.registry import Registry


@dataclass(frozen=True)
class Score:
    value: float
    details: dict[str, Any] = field(default_factory=dict)


Metric = Callable[[Any, Any, dict[str, Any]], Score]

METRICS = Registry("metric", {
    **{name: f"evaluation.metrics:{name}" for name in (
        "exact_match", "numeric_match", "tolerance_10pct", "token_f1", "rouge_l", "bleu", "set_f1",
        "partial_match", "retrieval_prf_at_k", "execution_match", "key_selection")},
    "chart_pass": "evaluation.charts:chart_pass",
})
# scored by a judge model the evaluator asks (evaluation/judge.py), not from the two answers alone
JUDGED_METRICS = ("llm_judge",)


def score(metric: str, prediction: Any, gold: Any, context: dict[str, Any] | None = None) -> Score:
    if prediction is None:
        return Score(0.0, {"unextracted": True})
    return METRICS.get(metric)(prediction, gold, context or {})


# ------------------------------------------------------------------------------ answers


def _items(value: Any) -> list[Any]:
    v = normalize_answer(value)
    return v if isinstance(v, list) else [v]


def _matches(prediction: Any, gold: Any, rel_tol: float) -> bool:
    """The one answer equivalence (`curation.answers.Equivalence`), numbers within `rel_tol` of the gold."""
    return Equivalence(rel_tol=rel_tol).same(prediction, gold)


def exact_match(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    return Score(float(_matches(prediction, gold, 0.0)))


def numeric_match(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    rel_tol = float(context.get("rel_tol", 0.01))
    return Score(float(_matches(prediction, gold, rel_tol)), {"rel_tol": rel_tol})


def tolerance_10pct(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    return Score(float(_matches(prediction, gold, 0.10)), {"rel_tol": 0.10})


# ------------------------------------------------------------------------------ text

_TOKEN = re.compile(r"\w+", re.UNICODE)
_ARTICLES = {"a", "an", "the"}


def _tokens(value: Any) -> list[str]:
    text = " ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return [t for t in _TOKEN.findall(text.lower()) if t not in _ARTICLES]


def token_f1(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    p, g = _tokens(prediction), _tokens(gold)
    if not p or not g:
        return Score(float(p == g))
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return Score(0.0)
    precision, recall = common / len(p), common / len(g)
    return Score(2 * precision * recall / (precision + recall), {"precision": precision, "recall": recall})


def _text(value: Any) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)


_ROUGE: Any = None


def rouge_l(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    global _ROUGE
    if _ROUGE is None:
        from rouge_score import rouge_scorer

        _ROUGE = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    result = _ROUGE.score(_text(gold), _text(prediction))["rougeL"]
    return Score(result.fmeasure, {"precision": result.precision, "recall": result.recall})


def bleu(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    import sacrebleu

    return Score(sacrebleu.sentence_bleu(_text(prediction), [_text(gold)]).score / 100.0)


# ------------------------------------------------------------------------------ sets and retrieval


def _key(value: Any) -> Any:
    return round(value, 9) if isinstance(value, float) else value


def set_f1(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    p = {_key(x) for x in _items(prediction)}
    g = {_key(x) for x in _items(gold)}
    if not p or not g:
        return Score(float(p == g))
    common = len(p & g)
    if not common:
        return Score(0.0, {"precision": 0.0, "recall": 0.0})
    precision, recall = common / len(p), common / len(g)
    return Score(2 * precision * recall / (precision + recall), {"precision": precision, "recall": recall})


def partial_match(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    p = Counter(_key(x) for x in _items(prediction))
    g = Counter(_key(x) for x in _items(gold))
    return Score(sum((p & g).values()) / max(1, sum(g.values())))


def retrieval_prf_at_k(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    k = int(context.get("k", 5))
    ranked = []
    for item in _items(prediction):
        if item not in ranked:
            ranked.append(item)
    top = ranked[:k]
    relevant = set(_items(gold))
    hits = sum(1 for x in top if x in relevant)
    precision = hits / len(top) if top else 0.0
    recall = hits / len(relevant) if relevant else 0.0
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return Score(f1, {"k": k, "precision": precision, "recall": recall})


_QUOTES = str.maketrans("", "", "`\"'[] ")


def _key_name(value: Any) -> str:
    """"Orders.`customer_id`" -> "orders.customer_id"; a foreign key "a.x → b.y" -> "a.x->b.y"."""
    return str(value).replace("→", "->").translate(_QUOTES).lower()


def key_selection(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    """1 when the predicted keys are exactly the gold's: primary keys as table.column, foreign keys as
    table.column -> table.column."""
    p = {_key_name(x) for x in _items(prediction)}
    g = {_key_name(x) for x in _items(gold)}
    common = len(p & g)
    precision, recall = (common / len(p) if p else 0.0), (common / len(g) if g else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if common else 0.0
    return Score(float(p == g), {"precision": precision, "recall": recall, "f1": f1})


# ------------------------------------------------------------------------------ SQL execution

_QUERY = re.compile(r"^\s*(\(\s*)*(select|with|from)\b", re.I)
_CONNECTION: Any = None


def _connection() -> Any:
    """One DuckDB connection per process: connecting costs ~20 ms, registering an Arrow table nothing."""
    global _CONNECTION
    if _CONNECTION is None:
        import duckdb

        _CONNECTION = duckdb.connect()
    return _CONNECTION


def _result_rows(con: Any, sql: str) -> list[tuple]:
    return [tuple(normalize_answer(v) if not isinstance(v, (int, float)) or isinstance(v, bool)
                  else round(float(v), 6) for v in row) for row in con.execute(sql).fetchall()]


def execution_match(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    """`context["tables"]`: name -> Arrow table; `context["program"]`: the gold SQL, in DuckDB
    unless `context["dialect"]` is "sqlite" (Spider's: both queries then run in SQLite)."""
    import duckdb

    predicted = _text(prediction).strip().rstrip(";")
    program = context.get("program")
    if not program:
        return Score(0.0, {"error": "the sample has no gold SQL"})
    if not _QUERY.match(predicted):
        return Score(0.0, {"error": "the answer is not a query"})
    if context.get("dialect") == "sqlite":
        return _sqlite_execution_match(predicted, program, context)
    con = _connection()
    names = list(context.get("tables", {}))
    try:
        for name in names:
            con.register(name, context["tables"][name])
        gold_rows = _result_rows(con, program)
        try:
            pred_rows = _result_rows(con, predicted)
        except duckdb.Error as e:
            return Score(0.0, {"error": f"{type(e).__name__}: {str(e)[:200]}"})
    finally:
        for name in names:
            con.unregister(name)
    ordered = " order by " in program.lower()
    same = pred_rows == gold_rows if ordered else Counter(pred_rows) == Counter(gold_rows)
    return Score(float(same), {"rows": len(pred_rows)})


def sqlite_rows(tables: dict[str, Any], *queries: str) -> list[list[tuple] | str]:
    """Each query's result rows in one SQLite copy of the tables (an error's text where it fails).
    Names that alias one table (its full and short names) hold it once."""
    import sqlite3

    from curation.programs.sql import sqlite_copy

    bodies: dict[str, Any] = {}
    for name, body in tables.items():
        if name != "t":  # the one-table alias of generated samples; published SQL names its tables
            bodies.setdefault(name.split("/")[-1], body)
    con = sqlite_copy(bodies)
    out: list[list[tuple] | str] = []
    try:
        for query in queries:
            try:
                out.append(_result_rows(con, query))
            except (sqlite3.Error, sqlite3.Warning) as e:
                out.append(f"{type(e).__name__}: {str(e)[:200]}")
    finally:
        con.close()
    return out


def _sqlite_execution_match(predicted: str, program: str, context: dict[str, Any]) -> Score:
    gold_rows, pred_rows = sqlite_rows(context.get("tables", {}), program, predicted)
    if isinstance(gold_rows, str):
        return Score(0.0, {"error": f"the gold SQL fails: {gold_rows}"})
    if isinstance(pred_rows, str):
        return Score(0.0, {"error": pred_rows})
    ordered = " order by " in program.lower()
    same = pred_rows == gold_rows if ordered else Counter(pred_rows) == Counter(gold_rows)
    return Score(float(same), {"rows": len(pred_rows)})

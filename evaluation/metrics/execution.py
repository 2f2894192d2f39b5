"""Text-to-SQL by execution: the predicted query's result set against the gold program's."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from curation.answers import normalize_answer
from evaluation.metrics import Score, answer_text, metric

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


@metric("execution_match")
def execution_match(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    """`context["tables"]`: name -> Arrow table; `context["program"]`: the gold SQL, in DuckDB
    unless `context["dialect"]` is "sqlite" (Spider's: both queries then run in SQLite)."""
    import duckdb

    predicted = answer_text(prediction).strip().rstrip(";")
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

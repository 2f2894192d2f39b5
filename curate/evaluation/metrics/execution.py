"""Text-to-SQL by execution: the predicted query's result set against the gold program's."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from curate.curation.answers import normalize_answer
from curate.evaluation.metrics import Score, answer_text, metric

_QUERY = re.compile(r"^\s*(\(\s*)*(select|with|from)\b", re.I)
# what a question says when it asks for its rows in an order: "in order", "sorted", "ranked",
# "ascending", "from highest to lowest", "top 5", "first three", "alphabetically", ...
_ASKS_ORDER = re.compile(
    r"\b(in (\w+ )?order|ordered|order(ed)? by|sort(ed)?|rank(ed|ing)?|ascending|descending|alphabetical(ly)?|"
    r"chronological(ly)?|(highest|largest|biggest|most|greatest|lowest|smallest|least|fewest|oldest|newest|earliest|"
    r"latest) (\w+ )?to (\w+ )?(highest|largest|biggest|most|greatest|lowest|smallest|least|fewest|oldest|newest|"
    r"earliest|latest)|(top|first|last|bottom) (\d+|two|three|four|five|six|seven|eight|nine|ten))\b", re.I)


def order_matters(question: str, program: str) -> bool:
    """Rows are compared in order only where the question asks for an order and the gold program
    gives one: a gold ORDER BY alone (often there to make a LIMIT pick its rows) is not enough."""
    return bool(re.search(r"\border\s+by\b", program, re.I)) and bool(_ASKS_ORDER.search(question or ""))


def _result_rows(rows: list[tuple]) -> list[tuple]:
    return [tuple(normalize_answer(v) if not isinstance(v, (int, float)) or isinstance(v, bool)
                  else round(float(v), 6) for v in row) for row in rows]


@metric("execution_match")
def execution_match(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    """`context["tables"]`: name -> Arrow table; `context["program"]`: the gold SQL, in DuckDB
    unless `context["dialect"]` is "sqlite" (Spider's: both queries then run in SQLite). Both run
    under `curate.curation.programs.untrusted_sql`'s rule, each on its own fresh connection, the gold first."""
    from curate.curation.programs.untrusted_sql import QueryRefused, duckdb_database, run_duckdb

    predicted = answer_text(prediction).strip().rstrip(";")
    program = context.get("program")
    if not program:
        return Score(0.0, {"error": "the sample has no gold SQL"})
    if not _QUERY.match(predicted):
        return Score(0.0, {"error": "the answer is not a query"})
    if context.get("dialect") == "sqlite":
        return _sqlite_execution_match(predicted, program, context)
    tables = context.get("tables", {})
    try:
        gold_rows = _result_rows(run_duckdb(duckdb_database(), program.strip().rstrip(";"), tables))
    except QueryRefused as e:
        return Score(0.0, {"error": f"the gold SQL fails: {e}"})
    try:
        pred_rows = _result_rows(run_duckdb(duckdb_database(), predicted, tables))
    except QueryRefused as e:
        return Score(0.0, {"error": str(e)})
    return _compared(pred_rows, gold_rows, context.get("question", ""), program)


def _compared(pred_rows: list[tuple], gold_rows: list[tuple], question: str, program: str) -> Score:
    ordered = order_matters(question, program)
    same = pred_rows == gold_rows if ordered else Counter(pred_rows) == Counter(gold_rows)
    return Score(float(same), {"rows": len(pred_rows), "gold_rows": len(gold_rows),
                               "compared": "in order (the question asks for one)" if ordered else "as a multiset"})


def sqlite_rows(tables: dict[str, Any], *queries: str) -> list[list[tuple] | str]:
    """Each query's result rows in one read-only SQLite copy of the tables (an error's text where it
    fails or is refused), in order: the gold first. Names that alias one table (its full and short
    names) hold it once."""
    from curate.curation.programs.untrusted_sql import QueryRefused, run_sqlite, sqlite_database

    bodies: dict[str, Any] = {}
    for name, body in tables.items():
        if name != "t":  # the one-table alias of generated samples; published SQL names its tables
            bodies.setdefault(name.split("/")[-1], body)
    con = sqlite_database(bodies)
    out: list[list[tuple] | str] = []
    try:
        for query in queries:
            try:
                out.append(_result_rows(run_sqlite(con, query.strip().rstrip(";"), bodies)))
            except QueryRefused as e:
                out.append(str(e))
    finally:
        con.close()
    return out


def _sqlite_execution_match(predicted: str, program: str, context: dict[str, Any]) -> Score:
    gold_rows, pred_rows = sqlite_rows(context.get("tables", {}), program, predicted)
    if isinstance(gold_rows, str):
        return Score(0.0, {"error": f"the gold SQL fails: {gold_rows}"})
    if isinstance(pred_rows, str):
        return Score(0.0, {"error": pred_rows})
    return _compared(pred_rows, gold_rows, context.get("question", ""), program)

"""Re-check a published dataset's gold answers by running its own SQL on its own tables.

`curate recheck FILE` (MMQA's sample format): each sample's SQL (SQLite dialect) is transpiled
to DuckDB with sqlglot and run on the sample's tables; the result is compared with the gold
answer string ("Treasury, 115897"), cell by cell, numbers within rounding.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def _cells(answer: str) -> list[str]:
    return [c.strip() for c in str(answer).split(",") if c.strip()]


def _same_cell(gold: str, value: Any) -> bool:
    text = str(value).strip()
    if NUMBER.match(gold) and isinstance(value, (int, float)) and not isinstance(value, bool):
        decimals = len(gold.split(".")[1]) if "." in gold else 0
        return abs(float(gold) - float(value)) <= max(0.5 * 10 ** -decimals, 1e-9 * abs(float(value)))
    return gold == text


def answers_agree(gold: str, rows: list[tuple]) -> bool:
    """Gold cells against the result's cells (row by row, left to right), in order or as a set."""
    cells = [v for row in rows for v in row]
    expected = _cells(gold)
    if len(expected) != len(cells):
        # values that contain commas ("Grand Falls/Grand-Sault, ...") are compared whole
        return ", ".join(str(c) for c in cells) == str(gold).strip()
    if all(_same_cell(g, v) for g, v in zip(expected, cells)):
        return True
    remaining = list(cells)
    for g in expected:
        match = next((i for i, v in enumerate(remaining) if _same_cell(g, v)), None)
        if match is None:
            return False
        remaining.pop(match)
    return True


def _run_in_sqlite(sample: dict[str, Any], path: str) -> list[tuple]:
    import sqlite3

    from curation.programs.sql import sqlite_copy
    from curation.sources.mmqa import sample_tables

    con = None
    try:
        con = sqlite_copy({t.name: t.body for t in sample_tables(sample, path)}, typed=False)
        return con.execute(sample["SQL"]).fetchall()
    except sqlite3.Error as e:
        return [(f"sqlite error: {e}",)]
    finally:
        if con is not None:
            con.close()


def recheck_mmqa(path: str) -> dict[str, Any]:
    import duckdb
    import sqlglot

    from curation.programs.sql import quote_ident
    from curation.sources.mmqa import is_mmqa, sample_tables

    try:
        samples = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SystemExit(f"cannot read {path}: {e}") from None
    if not is_mmqa(samples):
        raise SystemExit(f"{path}: not MMQA samples (a list of objects with SQL, table_names and tables)")
    results = []
    for sample in samples:
        entry: dict[str, Any] = {"id": sample.get("id_"), "question": sample.get("Question", ""),
                                 "sql": sample["SQL"], "gold": sample.get("answer")}
        con = duckdb.connect(config={"threads": 1})
        con.execute("SET enable_external_access = false")
        try:
            for table in sample_tables(sample, path):
                con.register("__source", table.body)
                con.execute(f"CREATE TABLE {quote_ident(table.name)} AS SELECT * FROM __source")
                con.unregister("__source")
            duck = sqlglot.transpile(sample["SQL"], read="sqlite", write="duckdb")[0]
            rows = con.execute(duck).fetchall()
            entry["computed"] = ", ".join(str(v) for row in rows for v in row)
            entry["agree"] = answers_agree(str(sample.get("answer", "")), rows)
            native = _run_in_sqlite(sample, path)  # the dialect it was written in: a second opinion
            entry["sqlite_computed"] = ", ".join(str(v) for row in native for v in row)
            entry["engines_agree"] = answers_agree(entry["computed"], native) or native == rows
        except (duckdb.Error, sqlglot.errors.SqlglotError) as e:
            entry["error"] = str(e).splitlines()[0]
            entry["agree"] = False
        finally:
            con.close()
        results.append(entry)
    return {"path": path, "samples": len(results), "agree": sum(r["agree"] for r in results),
            "disagree": [r for r in results if not r["agree"]], "results": results}

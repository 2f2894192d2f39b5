"""`curate recheck FILE`: the SQL-only view of `curate audit` (`curate.validators.audit`) over a file of
MMQA samples, not yet imported: each sample's SQL re-run (SQLite over typed tables, DuckDB as the
second opinion) and its result compared with the gold as a result set, by `audit.check_sql`.
A sample "agrees" unless the audit finds its gold wrong (`wrong_gold`); presentation-only
differences and ties are listed with their kind but are not disagreements.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def answers_agree(gold: str, rows: list[tuple]) -> bool:
    """The gold is the result set (as `curate audit` compares them: order, rounding, shape)."""
    from curate.validators.audit import compare

    width = len(rows[0]) if rows else 1
    return compare(gold, rows, [f"c{i}" for i in range(width)], "", "")[0] is None


def recheck_mmqa(path: str) -> dict[str, Any]:
    from curate.curation.programs import data_view
    from curate.curation.sources.mmqa import is_mmqa, sample_tables
    from curate.validators.audit import check_sql

    try:
        samples = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SystemExit(f"cannot read {path}: {e}") from None
    if not is_mmqa(samples):
        raise SystemExit(f"{path}: not MMQA samples (a list of objects with SQL, table_names and tables)")
    results = []
    for sample in samples:
        bodies = {t.name: data_view(t) for t in sample_tables(sample, path)}
        r = check_sql(sample.get("Question", ""), sample["SQL"], str(sample.get("answer", "")), bodies)
        entry: dict[str, Any] = {"id": sample.get("id_"), "question": sample.get("Question", ""),
                                 "sql": sample["SQL"], "gold": sample.get("answer"), "kind": r["kind"],
                                 "wrong_gold": r["wrong_gold"], "confidence": r["confidence"], "detail": r["detail"],
                                 "computed": r["recomputed"], "engines": r["engines"],
                                 "engines_agree": r["engines_agree"], "agree": not r["wrong_gold"]}
        if r["kind"] == "sql_fails":
            entry["error"] = r["detail"]
        results.append(entry)
    return {"path": path, "samples": len(results), "agree": sum(r["agree"] for r in results),
            "disagree": [r for r in results if not r["agree"]], "results": results}

"""Dataset checks before a release: near-duplicate questions and leakage across splits.

- **Near duplicates**: samples of the same task and tables whose questions are equal once case,
  punctuation and spacing are ignored. The benchmark would ask the same thing twice.
- **Leakage**: the same tables and the same program in two splits. A model tuned on one split
  would have seen the other's answer.

Both run in DuckDB straight over the samples' Parquet files, so a million samples take seconds.
This is `curate check`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curate.curation.sample import NORMALIZED_QUESTION_SQL

EXAMPLES = 10


def check_samples(sample_files: list[str], examples: int = EXAMPLES) -> dict[str, Any]:
    import duckdb

    if not sample_files:
        return {"samples": 0, "near_duplicates": {"groups": 0, "samples": 0, "examples": []},
                "leakage": {"groups": 0, "samples": 0, "examples": []}, "ok": True}
    con = duckdb.connect()
    con.read_parquet(sample_files).create_view("samples")
    total = con.execute("SELECT count(*) FROM samples").fetchone()[0]
    duplicates = con.execute(f"""
        SELECT task, table_ids, {NORMALIZED_QUESTION_SQL} AS normalized, count(*) AS n, list(id ORDER BY id) AS ids,
               min(question) AS question
        FROM samples GROUP BY ALL HAVING count(*) > 1 ORDER BY n DESC, normalized""").fetchall()
    leaks = con.execute("""
        SELECT table_ids, program.text AS program, list(DISTINCT split ORDER BY split) AS splits, count(*) AS n,
               list(id ORDER BY id) AS ids
        FROM samples WHERE program IS NOT NULL
        GROUP BY table_ids, program.text HAVING count(DISTINCT split) > 1 ORDER BY n DESC, program""").fetchall()
    con.close()
    report = {
        "samples": total,
        "near_duplicates": {
            "groups": len(duplicates), "samples": sum(r[3] for r in duplicates),
            "examples": [{"task": r[0], "question": r[5], "count": r[3], "ids": r[4][:5]}
                         for r in duplicates[:examples]]},
        "leakage": {
            "groups": len(leaks), "samples": sum(r[3] for r in leaks),
            "examples": [{"tables": r[0], "program": r[1][:200], "splits": r[2], "ids": r[4][:5]}
                         for r in leaks[:examples]]},
    }
    report["ok"] = not duplicates and not leaks
    return report


def run_check(path: str) -> dict[str, Any]:
    """`curate check`: the checks over a workspace's current samples, or a folder's Parquet files."""
    from curate.curation.workspace import Workspace
    from curate.validators.execution import files_of

    root = Path(path)
    workspace = Workspace(root)
    if workspace.exists():
        from curate.curation.commands import sample_datasets

        sample_files = [str(p) for d in sample_datasets(workspace) for p in d.files("samples")]
    elif root.is_dir():
        sample_files = files_of(root)[0]
    else:
        raise SystemExit(f"{path}: neither a workspace nor a release folder")
    if not sample_files:
        raise SystemExit(f"{path}: no samples to check (run `curate generate rules` or `curate generate sql` first)")
    report = check_samples(sample_files)
    report["path"] = path
    return report

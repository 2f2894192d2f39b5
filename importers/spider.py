"""Spider's format (Yu et al., 2018): a questions file (`db_id, question, query`) beside the
`database/<db_id>/<db_id>.sqlite` folder and `tables.json`.

Every table of each database a question names is read from its SQLite file as stored (curate's
SQLite reader, keys from `tables.json` where they agree); the gold answer is the gold SQL's result
in SQLite, on the published file (read-only), and the SQL is the sample's program (dialect sqlite),
which execution accuracy runs against the prediction.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from importers import BadInput, Imported, SourceFile, sha256_of

LICENCE = "CC BY-SA 4.0 (Spider; translated databases as their publisher states)"
CITATION = "Spider: A Large-Scale Human-Labeled Dataset for Complex and Cross-Domain Semantic Parsing and Text-to-SQL Task (Yu et al., EMNLP 2018)"
REQUIRED = {"db_id": str, "question": str, "query": str}


def _root_and_questions(paths: list[Path]) -> tuple[Path, list[Path]]:
    """The Spider folder (holding database/ and tables.json) and the questions files."""
    questions = [p for p in paths if p.is_file()]
    folders = [p for p in paths if p.is_dir()]
    root = folders[0] if folders else (questions[0].parent if questions else Path("."))
    if not questions:
        questions = sorted(p for p in root.glob("*.json") if p.name != "tables.json")
    if not (root / "database").is_dir():
        raise BadInput(root, "", "", "no database/ folder here (Spider keeps database/<db_id>/<db_id>.sqlite)")
    return root, questions


def gold_rows(database: Path, sql: str) -> list[list[Any]]:
    con = sqlite3.connect(f"file:{database.resolve()}?mode=ro&immutable=1", uri=True)
    try:
        return [[v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in row]
                for row in con.execute(sql).fetchall()]
    finally:
        con.close()


def read(paths: list[Path]) -> Imported:
    from curation.database import Database
    from curation.sample import Program, Sample
    from curation.sources.sqlite import read_sqlite

    root, files = _root_and_questions(paths)
    imported = Imported(benchmark="Spider", profile="spider", citation=CITATION, licence=LICENCE)
    tables_json = root / "tables.json"
    if tables_json.exists():
        imported.sources.append(SourceFile(str(tables_json), sha256_of(tables_json), LICENCE))
    databases: dict[str, tuple[Path, list[Any]]] = {}
    for path in files:
        imported.sources.append(SourceFile(str(path), sha256_of(path), LICENCE))
        try:
            questions = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise BadInput(path, "", "", f"not JSON ({e})") from None
        if not isinstance(questions, list):
            raise BadInput(path, "", "", "Spider's questions file is a JSON list")
        for n, q in enumerate(questions):
            where = f"question {n}"
            if not isinstance(q, dict):
                raise BadInput(path, where, "", "a question must be a JSON object")
            for name, kind in REQUIRED.items():
                if not isinstance(q.get(name), kind):
                    raise BadInput(path, where, name, "missing" if name not in q else "must be text")
            db_id = q["db_id"]
            if db_id not in databases:
                database = root / "database" / db_id / f"{db_id}.sqlite"
                if not database.is_file():
                    raise BadInput(path, where, "db_id", f"{db_id!r} has no database at {database}")
                imported.sources.append(SourceFile(str(database), sha256_of(database), LICENCE))
                records = list(read_sqlite(str(database), "spider", str(tables_json) if tables_json.exists() else None))
                tables = [r for r in records if not isinstance(r, Database)]
                databases[db_id] = (database, tables)
                imported.tables += tables
            database, tables = databases[db_id]
            try:
                rows = gold_rows(database, q["query"])
            except sqlite3.Error as e:  # the benchmark's own gold is broken: left out, and listed
                imported.skipped.append({"source_id": f"{path.stem}:{n}", "where": f"{path}:{where}",
                                         "field": "query", "reason": f"the gold SQL fails in SQLite on {db_id}: {e}"})
                continue
            provenance = {"source_id": f"{path.stem}:{n}", "source": "spider", "source_file": str(path),
                          "db_id": db_id, "source_sql": q["query"], "licence": LICENCE,
                          **({"original_question": q["match"]} if isinstance(q.get("match"), str) else {})}
            imported.samples.append(Sample(task="Spider/text_to_sql", question=q["question"], answer=rows,
                                           answer_type="table", table_ids=tuple(t.id for t in tables),
                                           program=Program("sql", q["query"], "sqlite"), origin="import",
                                           quality="published", template="spider", provenance=provenance))
    imported.notes.append(f"{len(imported.samples)} questions over {len(databases)} databases; gold: the gold SQL's "
                          "result in SQLite on the published database file.")
    if imported.skipped:
        imported.notes.append(f"{len(imported.skipped)} questions left out: their gold SQL does not run in SQLite "
                              "(listed with the reason in the manifest, build.import.skipped).")
    return imported

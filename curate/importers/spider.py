"""Spider's format (Yu et al., 2018): a questions file (`db_id, question, query`) beside the
`database/<db_id>/<db_id>.sqlite` folder and `tables.json`; BIRD's (Li et al., 2023) likewise, with
`SQL` for the query, `evidence` (its external knowledge, added to the question as BIRD's prompts
add it) and the databases in `dev_databases/` (or `database/`).

Every table of each database a question names is read from its SQLite file as stored (curate's
SQLite reader, keys from `tables.json` where they agree); the gold answer is the gold SQL's result
in SQLite over the released tables (what `curate release verify` recomputes; checked against the
published file as a multiset of rows, any difference named in the card), and the SQL is the
sample's program (dialect sqlite), which execution accuracy runs against the prediction.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from curate.importers import BadInput, Imported, SourceFile, importer, json_list, sha256_of

LICENCE = "CC BY-SA 4.0 (Spider; translated databases as their publisher states)"
CITATION = "Spider: A Large-Scale Human-Labeled Dataset for Complex and Cross-Domain Semantic Parsing and Text-to-SQL Task (Yu et al., EMNLP 2018)"


DATABASE_FOLDERS = ("database", "dev_databases", "train_databases")


def _root_and_questions(paths: list[Path]) -> tuple[Path, Path, list[Path]]:
    """The benchmark's folder, its databases folder, and the questions files."""
    questions = [p for p in paths if p.is_file()]
    folders = [p for p in paths if p.is_dir()]
    root = folders[0] if folders else (questions[0].parent if questions else Path("."))
    if not questions:
        questions = sorted(p for p in root.glob("*.json") if p.name not in ("tables.json", "dev_tables.json"))
    found = [root / d for d in DATABASE_FOLDERS if (root / d).is_dir()]
    if not found:
        raise BadInput(root, "", "", f"no {' or '.join(DATABASE_FOLDERS)} folder here (each holds <db_id>/<db_id>.sqlite)")
    return root, found[0], questions


def gold_rows(database: Path, sql: str) -> list[list[Any]]:
    con = sqlite3.connect(f"file:{database.resolve()}?mode=ro&immutable=1", uri=True)
    try:
        return [[v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in row]
                for row in con.execute(sql).fetchall()]
    finally:
        con.close()


BIRD_LICENCE = "CC BY-SA 4.0 (BIRD)"
BIRD_CITATION = ("Can LLM Already Serve as A Database Interface? A BIg Bench for Large-Scale Database Grounded "
                 "Text-to-SQLs (Li et al., NeurIPS 2023)")


def _same_rows(rows: list[list[Any]], value: Any) -> bool:
    """The file's result rows and the released tables' result value hold the same rows."""
    from collections import Counter

    if value is None:
        return not rows
    as_rows = ([list(r) for r in value] if value and isinstance(value[0], list) else [[v] for v in value]
               ) if isinstance(value, list) else [[value]]
    key = lambda r: tuple(round(v, 9) if isinstance(v, float) else v for v in r)  # noqa: E731
    return Counter(map(key, rows)) == Counter(map(key, as_rows))


@importer("spider")
def read(paths: list[Path]) -> Imported:
    return _read(paths, bird=False)


@importer("bird")
def read_bird(paths: list[Path]) -> Imported:
    return _read(paths, bird=True)


def _read(paths: list[Path], bird: bool) -> Imported:
    from curate.curation.database import Database
    from curate.curation.sample import Program, Sample
    from curate.curation.sources.readers.sqlite import read_sqlite

    from curate.curation.programs import ProgramError
    from curate.curation.programs.sqlite import SqliteRunner

    runner, differ = SqliteRunner(), []
    root, database_folder, files = _root_and_questions(paths)
    licence = BIRD_LICENCE if bird else LICENCE
    imported = Imported(benchmark="BIRD" if bird else "Spider", profile="bird" if bird else "spider",
                        citation=BIRD_CITATION if bird else CITATION, licence=licence)
    tables_json = root / ("dev_tables.json" if bird and (root / "dev_tables.json").exists() else "tables.json")
    if tables_json.exists():
        imported.sources.append(SourceFile(str(tables_json), sha256_of(tables_json), licence))
    databases: dict[str, tuple[Path, list[Any]]] = {}
    for path in files:
        imported.sources.append(SourceFile(str(path), sha256_of(path), licence))
        for n, q in enumerate(json_list(path, "Spider's questions file")):
            where = f"question {n}"
            query_field = "SQL" if bird else "query"
            try:  # an unreadable question is listed and left out (`--strict`: the import stops)
                if not isinstance(q, dict):
                    raise BadInput(path, where, "", "a question must be a JSON object")
                for name in ("db_id", "question", query_field):
                    if not isinstance(q.get(name), str):
                        raise BadInput(path, where, name, "missing" if name not in q else "must be text")
                database = database_folder / q["db_id"] / f"{q['db_id']}.sqlite"
                if q["db_id"] not in databases and not database.is_file():
                    raise BadInput(path, where, "db_id", f"{q['db_id']!r} has no database at {database}")
            except BadInput as e:
                imported.refuse(e, f"{path.stem}:{n}")
                continue
            db_id, query = q["db_id"], q[query_field]
            if db_id not in databases:
                imported.sources.append(SourceFile(str(database), sha256_of(database), licence))
                records = list(read_sqlite(str(database), "spider", str(tables_json) if tables_json.exists() else None))
                tables = [r for r in records if not isinstance(r, Database)]
                databases[db_id] = (database, tables)
                imported.tables += tables
            database, tables = databases[db_id]
            try:
                rows = gold_rows(database, query)
                # the gold as every reader of the release recomputes it (`curate release verify`): the
                # query over the released tables in SQLite; an unordered result's rows come in that order
                answer = runner.run(query, tables)
            except ProgramError as e:
                imported.read_as(query_field, "fails in SQLite")
                imported.skipped.append({"source_id": f"{path.stem}:{n}", "where": f"{path}:{where}", "field": "query",
                                         "kind": "gold_sql_fails",
                                         "reason": f"the gold SQL fails on the released tables: {e}"})
                continue
            except sqlite3.Error as e:  # the benchmark's own gold is broken: left out, and listed
                imported.read_as(query_field, "fails in SQLite")
                imported.skipped.append({"source_id": f"{path.stem}:{n}", "where": f"{path}:{where}",
                                         "field": "query", "kind": "gold_sql_fails",
                                         "reason": f"the gold SQL fails in SQLite on {db_id}: {e}"})
                continue
            imported.read_as(query_field, "runs in SQLite")
            evidence = q.get("evidence") if bird and isinstance(q.get("evidence"), str) else ""
            source_id = str(q["question_id"]) if bird and "question_id" in q else f"{path.stem}:{n}"
            provenance = {"source_id": source_id, "source": "bird" if bird else "spider", "source_file": str(path),
                          "db_id": db_id, "source_sql": query, "licence": licence,
                          **({"evidence": evidence} if evidence else {}),
                          **({"difficulty": q["difficulty"]} if isinstance(q.get("difficulty"), str) else {}),
                          **({"original_question": q["match"]} if isinstance(q.get("match"), str) else {})}
            if not _same_rows(rows, answer):
                differ.append(f"{path.stem}:{n}")
            question = f"{q['question']}\nExternal knowledge: {evidence}" if evidence else q["question"]
            imported.samples.append(Sample(task="BIRD/text_to_sql" if bird else "Spider/text_to_sql", question=question,
                                           answer=answer, answer_type="table", table_ids=tuple(t.id for t in tables),
                                           program=Program("sql", query, "sqlite"), origin="import",
                                           quality="published", template="bird" if bird else "spider",
                                           provenance=provenance))
    imported.notes.append(f"{len(imported.samples)} questions read over {len(databases)} databases; gold: the gold "
                          "SQL's result in SQLite over the released tables, checked against its result on the "
                          "published database file (as multisets of rows).")
    runner.close()
    if differ:
        imported.notes.append(f"{len(differ)} gold results differ between the published database file and its "
                              f"released tables (as multisets of rows): {', '.join(differ[:20])}")
    failing = sum(s.get("kind") == "gold_sql_fails" for s in imported.skipped)
    if failing:
        imported.notes.append(f"{failing} questions left out: their gold SQL does not run in SQLite "
                              "(listed with the reason in the manifest, build.import.skipped).")
    return imported

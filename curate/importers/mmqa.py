"""MMQA's sample JSON (Wu et al., ICLR 2025): a list of samples, each carrying its tables, keys,
SQL (SQLite) and answer; two- and three-table files alike.

Each published sample gives two curate samples over the same tables: the multi-table question
(`MMQA/multi_table_qa`, gold the published answer, read as curate reads a Final Answer line) and
text-to-SQL (`MMQA/text_to_sql`, gold the published SQL's result; the SQL is kept as published in
`provenance.source_sql` and as its DuckDB transpilation in the program, which execution accuracy runs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curate.importers import BadInput, Imported, SourceFile, importer, json_list, require, sha256_of

LICENCE = "as published by the authors (MMQA, ICLR 2025)"
CITATION = "MMQA: Evaluating LLMs with Multi-Table Multi-Hop Complex Questions (Wu et al., ICLR 2025)"
REQUIRED = {"Question": str, "SQL": str, "table_names": list, "tables": list, "answer": (str, int, float)}


def _check(path: Path, n: int, sample: Any) -> None:
    where = f"sample {n}"
    if not isinstance(sample, dict):
        raise BadInput(path, where, "", f"a sample must be a JSON object, got {type(sample).__name__}")
    require(path, where, sample, REQUIRED)
    if len(sample["table_names"]) != len(sample["tables"]):
        raise BadInput(path, where, "tables", f"{len(sample['tables'])} tables for {len(sample['table_names'])} names")
    for i, table in enumerate(sample["tables"]):
        if not isinstance(table, dict) or not {"table_columns", "table_content"} <= table.keys():
            raise BadInput(path, where, f"tables[{i}]", "needs table_columns and table_content")
        width = len(table["table_columns"])
        for r, row in enumerate(table["table_content"]):
            if len(row) != width:
                raise BadInput(path, where, f"tables[{i}].table_content[{r}]", f"has {len(row)} cells for {width} columns")


def duckdb_result(sql: str, tables: list[Any]) -> tuple[str, list[list[Any]]]:
    """The SQL in DuckDB's dialect and its result over the tables (sqlglot, as `curate recheck`)."""
    import duckdb
    import sqlglot

    from curate.curation.programs.sql import quote_ident

    duck = sqlglot.transpile(sql, read="sqlite", write="duckdb")[0]
    con = duckdb.connect(config={"threads": 1})
    try:
        con.execute("SET enable_external_access = false")
        for table in tables:
            con.register("__source", table.body)
            con.execute(f"CREATE TABLE {quote_ident(table.name)} AS SELECT * FROM __source")
            con.unregister("__source")
        rows = con.execute(duck).fetchall()
    finally:
        con.close()
    return duck, [[_plain(v) for v in row] for row in rows]


def _plain(value: Any) -> Any:
    """A result cell as JSON holds it (decimals as floats, dates as text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


@importer("mmqa")
def read(paths: list[Path]) -> Imported:
    from dataclasses import replace

    import duckdb
    import sqlglot

    from curate.curation.answers import normalize_answer, split_list
    from curate.curation.sample import Program, Sample
    from curate.curation.sources.mmqa import sample_tables

    imported = Imported(benchmark="MMQA", profile="mmqa", citation=CITATION, licence=LICENCE)
    for path in paths:
        imported.sources.append(SourceFile(str(path), sha256_of(path), LICENCE))
        for n, sample in enumerate(json_list(path, "MMQA's file of samples")):
            _check(path, n, sample)
            tables = sample_tables(sample, str(path))
            tables = [t.replace(provenance=replace(t.provenance, licence=LICENCE)) for t in tables]
            imported.tables += tables
            source_id = str(sample.get("id_", n))
            try:
                duck, rows = duckdb_result(sample["SQL"], tables)
            except (duckdb.Error, sqlglot.errors.SqlglotError) as e:
                raise BadInput(path, f"sample {n}", "SQL", f"does not run on its tables ({str(e).splitlines()[0]})"
                               ) from None
            provenance = {"source_id": source_id, "source": "mmqa", "source_file": str(path), "licence": LICENCE,
                          "source_answer": str(sample["answer"]), "source_sql": sample["SQL"],
                          "primary_keys": json.dumps(sample.get("primary_keys", [])),
                          "foreign_keys": json.dumps(sample.get("foreign_keys", []))}
            table_ids = tuple(t.id for t in tables)
            answer = split_list(str(sample["answer"]).strip())
            answer_type = "list" if isinstance(answer, list) else (
                "number" if isinstance(normalize_answer(answer), float) else "text")
            imported.samples.append(Sample(task="MMQA/multi_table_qa", question=sample["Question"], answer=answer,
                                           answer_type=answer_type, table_ids=table_ids, origin="import",
                                           quality="published", template="mmqa", provenance=provenance))
            imported.samples.append(Sample(task="MMQA/text_to_sql", question=sample["Question"], answer=rows,
                                           answer_type="table", table_ids=table_ids,
                                           program=Program("sql", duck, "duckdb"), origin="import",
                                           quality="published", template="mmqa", provenance=provenance))
    imported.notes.append(f"{len(imported.samples) // 2} MMQA samples, each asked twice: as a multi-table question "
                          "(the published answer) and as text-to-SQL (gold: the published SQL's result in DuckDB).")
    return imported

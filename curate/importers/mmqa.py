"""MMQA's sample JSON (Wu et al., ICLR 2025): a list of samples, each carrying its tables, keys,
SQL (SQLite) and answer; two- and three-table files alike.

Each published sample gives two curate samples over the same tables: the multi-table question
(`MMQA/multi_table_qa`, gold the published answer) and text-to-SQL (`MMQA/text_to_sql`, gold the
published SQL's result in SQLite, its own dialect and the engine `curate audit` uses: there `"CA"`
is a string where no column has that name). The SQL is the program (dialect sqlite) and stays
verbatim in `provenance.source_sql`.

The published answers come in three forms (the complete two-table file: 39 JSON objects, 179
strings): text ("Treasury, 115897", read as curate reads a Final Answer line), a pandas `split`
object (`{"columns", "index", "data"}`), or that object's Python repr as a string; a `split` answer
is its data's cells (one cell: that value). `provenance.source_answer` keeps it as published (an
object as JSON). A sample that cannot be read is left out and listed; a SQL that fails in SQLite
keeps its question and leaves out only its text-to-SQL twin (no gold), listed for the audit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curate.importers import BadInput, Imported, SourceFile, importer, json_list, require, sha256_of

LICENCE = "as published by the authors (MMQA, ICLR 2025)"
CITATION = "MMQA: Evaluating LLMs with Multi-Table Multi-Hop Complex Questions (Wu et al., ICLR 2025)"
REQUIRED = {"Question": str, "SQL": str, "table_names": list, "tables": list, "answer": (str, int, float, dict, list)}


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


def _split_cells(value: Any) -> list[Any] | None:
    """The cells of a pandas `split` object ({"columns", "index", "data"}), row by row; None if not one."""
    if not (isinstance(value, dict) and isinstance(value.get("data"), list) and "columns" in value):
        return None
    return [c for row in value["data"] for c in (row if isinstance(row, list) else [row])]


def read_answer(raw: Any) -> tuple[Any, str]:
    """(the answer as curate's metrics read it, the form it was published in). ValueError: none."""
    from curate.curation.answers import split_list
    from curate.curation.literals import LiteralError, literal

    form, value = "text", raw
    if isinstance(raw, bool) or raw is None:
        raise ValueError(f"has the wrong type ({type(raw).__name__})")
    if isinstance(raw, (int, float)):
        return raw, "number"
    if isinstance(raw, list):
        return [c for row in raw for c in (row if isinstance(row, list) else [row])], "JSON list"
    if isinstance(raw, dict):
        form = "pandas split object"
    elif raw.strip()[:1] == "{":
        try:
            value, form = json.loads(raw), "pandas split string (JSON)"
        except (json.JSONDecodeError, RecursionError):
            try:
                value, form = literal(raw), "pandas split string (Python literal)"
            except LiteralError:
                value = raw  # braces, but no object: read as text
    if form != "text":
        cells = _split_cells(value)
        if cells is None:
            raise ValueError(f"an object that is not a pandas split table (keys {sorted(value)[:5]})"
                             if isinstance(value, dict) else "not an object")
        return (cells[0] if len(cells) == 1 else cells), form
    return split_list(raw.strip()), "text"


def answer_text(answer: Any) -> str:
    """A `split` answer's cells as MMQA's text answers write them ("Treasury, 115897"): what EM compares."""
    cells = answer if isinstance(answer, list) else [answer]
    return ", ".join(str(int(c)) if isinstance(c, float) and c.is_integer() else str(c) for c in cells)


def published_answer(raw: Any) -> str:
    """The answer as published, as text (an object as JSON) for `provenance.source_answer`."""
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)


@importer("mmqa")
def read(paths: list[Path]) -> Imported:
    from dataclasses import replace

    from curate.curation.answers import normalize_answer
    from curate.curation.programs import ProgramError
    from curate.curation.programs.sqlite import SqliteRunner
    from curate.curation.sample import Program, Sample
    from curate.curation.sources.mmqa import sample_tables

    imported = Imported(benchmark="MMQA", profile="mmqa", citation=CITATION, licence=LICENCE)
    runner, questions = SqliteRunner(), 0
    for path in paths:
        imported.sources.append(SourceFile(str(path), sha256_of(path), LICENCE))
        for n, sample in enumerate(json_list(path, "MMQA's file of samples")):
            source_id = str(sample.get("id_", n)) if isinstance(sample, dict) else str(n)
            try:
                _check(path, n, sample)
                answer, form = read_answer(sample["answer"])
            except BadInput as e:
                imported.refuse(e, source_id)
                continue
            except ValueError as e:
                imported.refuse(BadInput(path, f"sample {n}", "answer", str(e)), source_id)
                continue
            imported.read_as("answer", form)
            tables = sample_tables(sample, str(path))
            tables = [t.replace(provenance=replace(t.provenance, licence=LICENCE)) for t in tables]
            imported.tables += tables
            provenance = {"source_id": source_id, "source": "mmqa", "source_file": str(path), "licence": LICENCE,
                          "source_answer": published_answer(sample["answer"]), "source_sql": sample["SQL"],
                          # a `split` answer's cells as MMQA's text answers write them (what EM compares)
                          **({"answer_text": answer_text(answer)} if form.startswith("pandas split") else {}),
                          "primary_keys": json.dumps(sample.get("primary_keys", [])),
                          "foreign_keys": json.dumps(sample.get("foreign_keys", []))}
            table_ids = tuple(t.id for t in tables)
            answer_type = "list" if isinstance(answer, list) else (
                "number" if isinstance(normalize_answer(answer), float) else "text")
            questions += 1
            imported.samples.append(Sample(task="MMQA/multi_table_qa", question=sample["Question"], answer=answer,
                                           answer_type=answer_type, table_ids=table_ids, origin="import",
                                           quality="published", template="mmqa", provenance=provenance))
            try:
                rows = runner.run(sample["SQL"], tables)
            except ProgramError as e:  # no gold for the text-to-SQL twin; the question stays, the audit says why
                imported.read_as("SQL", "fails in SQLite")
                imported.skipped.append({"source_id": source_id, "where": f"{path}:sample {n}", "field": "SQL",
                                         "kind": "gold_sql_fails", "task": "MMQA/text_to_sql",
                                         "reason": f"the published SQL fails in SQLite ({e}): its text-to-SQL "
                                                   "twin has no gold and is left out; the question is kept"})
                continue
            imported.read_as("SQL", "runs in SQLite")
            imported.samples.append(Sample(task="MMQA/text_to_sql", question=sample["Question"], answer=rows,
                                           answer_type="table", table_ids=table_ids,
                                           program=Program("sql", sample["SQL"], "sqlite"), origin="import",
                                           quality="published", template="mmqa", provenance=provenance))
    runner.close()
    twins = len(imported.samples) - questions
    imported.notes.append(f"{questions} MMQA samples: each a multi-table question (the published answer) and, for "
                          f"the {twins} whose SQL runs in SQLite, text-to-SQL (gold: the published SQL's result in "
                          "SQLite).")
    return imported

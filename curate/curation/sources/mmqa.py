"""MMQA's sample format as a source: each sample carries its tables, keys, SQL and gold answer.

A document is a list of objects with `SQL`, `table_names` and `tables` (each `table_columns` +
`table_content`). Reading yields every distinct table once, and one Database per distinct set
of table names, with the keys MMQA names in words ("department id") matched to columns.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from curate.curation.body import from_rows
from curate.curation.database import Database, ForeignKey, PrimaryKey
from curate.curation.table import Provenance, Table


def is_mmqa(doc: Any) -> bool:
    return (isinstance(doc, list) and bool(doc) and all(isinstance(d, dict) for d in doc)
            and all({"SQL", "table_names", "tables"} <= d.keys() for d in doc))


def _words(name: str) -> str:
    return re.sub(r"[\s_]+", " ", name).strip().lower()


def sample_tables(sample: dict[str, Any], path: str) -> list[Table]:
    out = []
    for name, table in zip(sample["table_names"], sample["tables"]):
        out.append(Table(name=name, body=from_rows(table["table_columns"], table["table_content"]),
                         provenance=Provenance(source="mmqa", path=path, sheet=name,
                                               database=" + ".join(sample["table_names"]))))
    return out


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def sample_keys(sample: dict[str, Any], tables: list[Table]) -> tuple[list[PrimaryKey], list[ForeignKey]]:
    """MMQA names keys in words and without their table ("course id"). A primary key goes to the
    table named after it (Courses); a foreign key is a column of another table whose name is, or
    ends with, that key's name ("host city id" -> city). Anything less clear is left out."""
    columns = {t.name: {_words(c): c for c in t.columns} for t in tables}
    pks: list[PrimaryKey] = []
    for word in dict.fromkeys(_words(k) for k in sample.get("primary_keys", [])):
        if not word.endswith(" id"):
            continue
        base = word[:-3]
        for t in tables:
            table_words = " ".join(_singular(w) for w in _words(t.name).split())
            if (table_words == base or table_words.endswith(" " + base)) and word in columns[t.name]:
                pks.append(PrimaryKey(t.name, (columns[t.name][word],), "declared", 1.0, "named by MMQA"))
    fks: list[ForeignKey] = []
    for word in dict.fromkeys(_words(k) for k in sample.get("foreign_keys", [])):
        for t in tables:
            column = columns[t.name].get(word)
            if column is None:
                continue
            for pk in pks:
                pk_word = _words(pk.columns[0])
                if pk.table != t.name and (word == pk_word or word.endswith(" " + pk_word)):
                    fks.append(ForeignKey(t.name, (column,), pk.table, pk.columns, "declared", 1.0, "named by MMQA"))
    return pks, fks


def read(path: str, documents: list[Any]) -> Iterator[Table | Database]:
    seen_tables: set[str] = set()
    seen_dbs: set[tuple[str, ...]] = set()
    for doc in documents:
        for sample in doc:
            tables = sample_tables(sample, path)
            for t in tables:
                if t.id not in seen_tables:
                    seen_tables.add(t.id)
                    yield t
            names = tuple(sample["table_names"])
            if names in seen_dbs:
                continue
            seen_dbs.add(names)
            pks, fks = sample_keys(sample, tables)
            yield Database(name=" + ".join(names), tables=tuple((t.name, t.id) for t in tables),
                           primary_keys=tuple(pks), foreign_keys=tuple(fks), source="mmqa", path=path)

"""JSON and JSON Lines: records, `{"columns": [...], "data": [[...]]}` (TableBench), or many."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from curate.curation.body import from_rows
from curate.curation.sources.errors import SourceError
from curate.curation.sources.readers import reader
from curate.curation.sources.text import read_text
from curate.curation.table import Provenance, Table


def _table_from(value: Any) -> tuple[list[Any], list[list[Any]]] | None:
    """(columns, rows) if `value` is a table in one of the forms we know, else None."""
    if isinstance(value, dict) and isinstance(value.get("columns"), list) and isinstance(value.get("data"), list):
        if all(isinstance(r, list) for r in value["data"]):
            return value["columns"], value["data"]
    if isinstance(value, dict) and isinstance(value.get("header"), list) and isinstance(value.get("rows"), list):
        return value["header"], value["rows"]
    if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        if all(not isinstance(v, (dict, list)) for r in value[:100] for v in r.values()):
            columns: dict[str, None] = {}
            for r in value:
                columns.update(dict.fromkeys(r))
            return list(columns), [[r.get(c) for c in columns] for r in value]
    return None


@reader("json", extensions=(".json", ".jsonl", ".ndjson"))
def read(path: str) -> Iterator[Table]:
    text, _ = read_text(path)
    stem = Path(path).stem
    provenance = Provenance(source="json", path=path)
    try:
        documents = [json.loads(text)]
    except json.JSONDecodeError as first_error:
        try:
            documents = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError:
            raise SourceError(path, f"invalid JSON ({first_error})") from None
        table = _table_from(documents)  # JSON Lines of flat records: one table
        if table is not None:
            yield Table(name=stem, body=from_rows(*table), provenance=provenance)
            return
    from curate.curation.sources import mmqa

    if all(mmqa.is_mmqa(doc) for doc in documents):  # MMQA samples: their tables and keys
        yield from mmqa.read(path, documents)  # type: ignore[misc]
        return
    found = 0
    for k, doc in enumerate(documents):
        for name, value in _candidates(doc, stem, len(documents) > 1 and k + 1):
            table = _table_from(value)
            if table is None:
                continue
            columns, rows = table
            found += 1
            yield Table(name=name, body=from_rows(columns, rows),
                        caption=str(doc.get("title", "")) if isinstance(doc, dict) and "title" in doc else "",
                        provenance=Provenance(source="json", path=path, sheet=name))
    if not found:
        raise SourceError(path, "no table in the JSON (expected records, or {\"columns\": [...], \"data\": [[...]]})")


def _candidates(doc: Any, stem: str, line: int | bool) -> Iterator[tuple[str, Any]]:
    """The document itself, a `table` field of it (TableBench lines), or each value of a mapping."""
    name = f"{stem} #{line}" if line else stem
    if _table_from(doc) is not None:
        yield name, doc
        return
    if isinstance(doc, dict):
        if "table" in doc:
            ident = doc.get("id") or doc.get("name")
            yield (f"{stem} {ident}" if ident else name), doc["table"]
            return
        for key, value in doc.items():
            if _table_from(value) is not None:
                yield f"{name} / {key}", value

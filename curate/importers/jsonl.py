"""Any JSON Lines benchmark, by a field mapping: `curate import jsonl FILE --map
question=q,answer=a,table=t[,id=uid]`.

The table field may hold `{"columns": [...], "data": [[...]]}` (TableBench's shape), a list of
row objects, or a list of rows whose first is the header. Samples are `Imported/qa` (exact match);
the benchmark's id (the `id` field, else the line number) is kept as `provenance.source_id`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from curate.importers import BadInput, Imported, SourceFile, importer, json_object, sha256_of

ROLES = ("question", "answer", "table", "id")
REQUIRED = ("question", "answer", "table")
LICENCE = "as stated by the source (not recorded in the file)"


def parse_map(text: str) -> dict[str, str]:
    """"question=q,answer=a,table=t" -> {"question": "q", ...}; ValueError names what is wrong."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        role, sep, name = part.partition("=")
        if not sep or not name.strip() or role.strip() not in ROLES:
            raise ValueError(f"--map: {part!r} is not ROLE=FIELD with ROLE one of {', '.join(ROLES)}")
        out[role.strip()] = name.strip()
    missing = [r for r in REQUIRED if r not in out]
    if missing:
        raise ValueError(f"--map must name the field of {', '.join(missing)} (e.g. question=q,answer=a,table=t)")
    return out


def _rows(value: Any) -> tuple[list[Any], list[list[Any]], str]:
    """The table's header and rows, and the form it was written in."""
    if isinstance(value, dict) and isinstance(value.get("columns"), list) and isinstance(value.get("data"), list):
        return value["columns"], value["data"], "object {columns, data}"
    if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        columns = list(dict.fromkeys(k for r in value for k in r))
        return columns, [[r.get(c) for c in columns] for r in value], "row objects"
    if isinstance(value, list) and len(value) > 1 and all(isinstance(r, list) for r in value):
        return value[0], value[1:], "rows under a header"
    raise ValueError('a table is {"columns": [...], "data": [[...]]}, a list of row objects, or a list of rows '
                     "whose first is the header")


@importer("jsonl", takes_map=True)
def reader(mapping: dict[str, str]) -> Any:
    def read(paths: list[Path]) -> Imported:
        from curate.curation.answers import normalize_answer, split_list
        from curate.curation.body import from_rows
        from curate.curation.sample import Sample
        from curate.curation.table import Provenance, Table

        imported = Imported(benchmark="Imported", profile="", citation="", licence=LICENCE,
                            notes=[f"fields mapped: {', '.join(f'{k}={v}' for k, v in mapping.items())}"])
        for path in paths:
            imported.sources.append(SourceFile(str(path), sha256_of(path), LICENCE))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                where = f"line {number}"
                try:  # an unreadable line is listed and left out (`--strict`: the import stops)
                    record = json_object(path, where, line)
                    for role in REQUIRED:
                        if mapping[role] not in record:
                            raise BadInput(path, where, mapping[role], f"missing (mapped as the {role})")
                    if not isinstance(record[mapping["question"]], str):
                        raise BadInput(path, where, mapping["question"], "the question must be text")
                    try:
                        columns, rows, form = _rows(record[mapping["table"]])
                        if any(not isinstance(r, list) or len(r) != len(columns) for r in rows):
                            raise ValueError(f"every row needs {len(columns)} cells")
                    except ValueError as e:
                        raise BadInput(path, where, mapping["table"], str(e)) from None
                except BadInput as e:
                    seen = re.search(rf'"{re.escape(mapping.get("id", "id"))}"\s*:\s*"?([^",}}]*)', line)
                    imported.refuse(e, seen.group(1) if seen else str(number))
                    continue
                imported.read_as(mapping["table"], form)
                source_id = str(record.get(mapping.get("id", ""), number))
                table = Table(name=f"{path.stem}/{source_id}", body=from_rows(columns, rows),
                              provenance=Provenance(source="jsonl", path=str(path), sheet=source_id, licence=LICENCE))
                imported.tables.append(table)
                raw = record[mapping["answer"]]
                imported.read_as(mapping["answer"], "text" if isinstance(raw, str) else f"JSON {type(raw).__name__}")
                answer = split_list(raw.strip()) if isinstance(raw, str) else raw
                kind = ("list" if isinstance(answer, list) else "bool" if isinstance(answer, bool) else
                        "number" if isinstance(normalize_answer(answer), float) else "text")
                imported.samples.append(Sample(task="Imported/qa", question=record[mapping["question"]], answer=answer,
                                               answer_type=kind, table_ids=(table.id,), origin="import",
                                               quality="published", template="jsonl",
                                               provenance={"source_id": source_id, "source": "jsonl",
                                                           "source_file": str(path), "source_line": str(number),
                                                           "source_answer": json.dumps(raw, ensure_ascii=False)}))
        return imported

    return read

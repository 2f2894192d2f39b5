"""Records <-> Arrow tables: the bulk form that Parquet parts, DuckDB and releases share.

Table metadata is stored as ordinary columns (queryable by DuckDB); the typed body of each
table is one Arrow IPC stream (zstd) in a binary column, so any schema survives unchanged.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator

import pyarrow as pa

from curate.curation.database import Database, ForeignKey, PrimaryKey
from curate.curation.semantics import from_json, to_json
from curate.curation.sample import Program, Review, Sample, Vote
from curate.curation.table import HeaderNode, Provenance, Table, canonical_body

_INTS = pa.list_(pa.int32())
_STRS = pa.list_(pa.string())

HEADER_NODE = pa.struct([("axis", pa.string()), ("level", pa.int32()), ("start", pa.int32()),
                         ("end", pa.int32()), ("text", pa.string())])
PROVENANCE = pa.struct([(f, pa.string()) for f in Provenance.__slots__])

TABLE_SCHEMA = pa.schema([
    ("id", pa.string()), ("content_hash", pa.string()), ("name", pa.string()), ("caption", pa.string()),
    ("n_rows", pa.int64()), ("n_cols", pa.int32()), ("columns", _STRS),
    ("header", pa.list_(HEADER_NODE)), ("notes", _STRS), ("structure", _STRS), ("provenance", PROVENANCE),
    ("summary_rows", _INTS), ("summary_columns", _INTS), ("empty_columns", _INTS),
    ("constant_columns", _INTS), ("flags", _STRS), ("semantics", pa.string()), ("body", pa.binary()),
])

# ---------------------------------------------------------------------------- bodies

def body_to_bytes(body: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    body = canonical_body(body)
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_stream(sink, body.schema, options=options) as writer:
        writer.write_table(body)
    return sink.getvalue().to_pybytes()


def body_from_bytes(data: bytes) -> pa.Table:
    with pa.ipc.open_stream(pa.py_buffer(data)) as reader:
        return reader.read_all()


# ---------------------------------------------------------------------------- files of records

_FILE_CACHE: dict[str, pa.Table] = {}  # per process: a stage's file is read once, not once per record
FILE_CACHE_SIZE = 8


def read_cached(path: str) -> pa.Table:
    """A Parquet file of records, kept in memory (the last few files) for the next lookup."""
    import pyarrow.parquet as pq

    if path not in _FILE_CACHE:
        if len(_FILE_CACHE) >= FILE_CACHE_SIZE:
            _FILE_CACHE.clear()
        _FILE_CACHE[path] = pq.read_table(path)
    return _FILE_CACHE[path]


def table_index(files: Iterable[str]) -> dict[str, tuple[str, int]]:
    """Table id -> (file, row), reading only the ids. Files come in pipeline order and a later one
    wins: cleaning keeps a table's id but adds the marks (summary rows) that decide its data view."""
    import pyarrow.parquet as pq

    index: dict[str, tuple[str, int]] = {}
    for path in files:
        for row, table_id in enumerate(pq.read_table(path, columns=["id"]).column("id").to_pylist()):
            index[table_id] = (str(path), row)
    return index


def table_at(path: str, row: int) -> Table:
    """The Table record at one row of a tables file."""
    return next(tables_from_arrow(read_cached(path).slice(row, 1)))


def drawn_sample_rows(files: list[str], program_kind: str, task_prefixes: list[str], seed: int,
                      limit: int) -> list[tuple[str, int]]:
    """(file, row) of at most `limit` samples whose program is of `program_kind` and whose task starts
    with one of `task_prefixes` (none: any), drawn in seeded content-hash order; sorted by file, so
    a stage part reads each file once."""
    import duckdb

    prefixes = " OR ".join(["starts_with(task, ?)"] * len(task_prefixes)) or "true"
    con = duckdb.connect()
    try:
        # materialized first: DuckDB 2.0 fails an assertion on a struct-field filter pushed into the scan
        con.execute("CREATE TEMP TABLE s AS SELECT filename, file_row_number AS row, id, task, program.kind AS kind "
                    "FROM read_parquet(?, filename = true, file_row_number = true)", [files])
        rows = con.execute(f"SELECT filename, row FROM s WHERE kind = ? AND ({prefixes}) ORDER BY md5(? || id), id "
                           "LIMIT ?", [program_kind, *task_prefixes, str(seed), limit]).fetchall()
    finally:
        con.close()
    return sorted(rows)


# ---------------------------------------------------------------------------- tables

def tables_to_arrow(tables: Iterable[Table]) -> pa.Table:
    rows = [{
        "id": t.id, "content_hash": t.content_hash, "name": t.name, "caption": t.caption,
        "n_rows": t.n_rows, "n_cols": t.n_cols, "columns": t.columns,
        "header": [n.as_dict() for n in t.header], "notes": list(t.notes), "structure": list(t.structure),
        "provenance": {f: getattr(t.provenance, f) for f in Provenance.__slots__},
        "summary_rows": list(t.summary_rows), "summary_columns": list(t.summary_columns),
        "empty_columns": list(t.empty_columns), "constant_columns": list(t.constant_columns),
        "flags": list(t.flags), "semantics": to_json(t.semantics), "body": body_to_bytes(t.body),
    } for t in tables]
    return pa.Table.from_pylist(rows, schema=TABLE_SCHEMA)


def tables_from_arrow(data: pa.Table) -> Iterator[Table]:
    for row in data.to_pylist():
        yield Table(
            name=row["name"], caption=row["caption"], body=body_from_bytes(row["body"]),
            header=tuple(HeaderNode(**n) for n in row["header"]), notes=tuple(row["notes"]),
            structure=tuple(row["structure"]), provenance=Provenance(**row["provenance"]),
            summary_rows=tuple(row["summary_rows"]), summary_columns=tuple(row["summary_columns"]),
            empty_columns=tuple(row["empty_columns"]), constant_columns=tuple(row["constant_columns"]),
            flags=tuple(row["flags"]), semantics=from_json(row.get("semantics")),
            id=row["id"], content_hash=row["content_hash"],
        )


# ---------------------------------------------------------------------------- databases

_PK = pa.struct([("table", pa.string()), ("columns", _STRS), ("origin", pa.string()),
                 ("confidence", pa.float64()), ("evidence", pa.string())])
_FK = pa.struct([("table", pa.string()), ("columns", _STRS), ("ref_table", pa.string()),
                 ("ref_columns", _STRS), ("origin", pa.string()), ("confidence", pa.float64()),
                 ("evidence", pa.string())])
DATABASE_SCHEMA = pa.schema([
    ("id", pa.string()), ("name", pa.string()),
    ("tables", pa.list_(pa.struct([("name", pa.string()), ("table_id", pa.string())]))),
    ("primary_keys", pa.list_(_PK)), ("foreign_keys", pa.list_(_FK)),
    ("source", pa.string()), ("path", pa.string()), ("licence", pa.string()),
])


def databases_to_arrow(databases: Iterable[Database]) -> pa.Table:
    rows = [{
        "id": d.id, "name": d.name, "tables": [{"name": n, "table_id": i} for n, i in d.tables],
        "primary_keys": [k.as_dict() for k in d.primary_keys],
        "foreign_keys": [k.as_dict() for k in d.foreign_keys],
        "source": d.source, "path": d.path, "licence": d.licence,
    } for d in databases]
    return pa.Table.from_pylist(rows, schema=DATABASE_SCHEMA)


def databases_from_arrow(data: pa.Table) -> Iterator[Database]:
    for row in data.to_pylist():
        yield Database(
            name=row["name"], tables=tuple((t["name"], t["table_id"]) for t in row["tables"]),
            primary_keys=tuple(PrimaryKey(**{**k, "columns": tuple(k["columns"])}) for k in row["primary_keys"]),
            foreign_keys=tuple(ForeignKey(**{**k, "columns": tuple(k["columns"]),
                                             "ref_columns": tuple(k["ref_columns"])}) for k in row["foreign_keys"]),
            source=row["source"], path=row["path"], licence=row["licence"], id=row["id"],
        )


# ---------------------------------------------------------------------------- samples

def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


_VOTE = pa.struct([("model", pa.string()), ("answer", pa.string()), ("agrees_with_gold", pa.bool_()),
                   ("raw", pa.string()), ("score", pa.float64())])
_REVIEW = pa.struct([("annotator", pa.string()), ("decision", pa.string()), ("answer", pa.string()),
                     ("comment", pa.string()), ("at", pa.string())])
SAMPLE_SCHEMA = pa.schema([
    ("id", pa.string()), ("task", pa.string()), ("question", pa.string()), ("question_short", pa.string()),
    ("answer", pa.string()), ("answer_type", pa.string()), ("table_ids", _STRS),
    ("program", pa.struct([("kind", pa.string()), ("text", pa.string()), ("dialect", pa.string())])),
    ("origin", pa.string()), ("template", pa.string()), ("votes", pa.list_(_VOTE)),
    ("judge_verdict", pa.string()), ("quality", pa.string()), ("reviews", pa.list_(_REVIEW)),
    ("split", pa.string()), ("provenance", pa.map_(pa.string(), pa.string())),
])


def samples_to_arrow(samples: Iterable[Sample]) -> pa.Table:
    rows = [{
        "id": s.id, "task": s.task, "question": s.question, "question_short": s.question_short,
        "answer": _dump(s.answer), "answer_type": s.answer_type, "table_ids": list(s.table_ids),
        "program": None if s.program is None else {"kind": s.program.kind, "text": s.program.text,
                                                   "dialect": s.program.dialect},
        "origin": s.origin, "template": s.template,
        "votes": [{"model": v.model, "answer": _dump(v.answer), "agrees_with_gold": v.agrees_with_gold,
                   "raw": v.raw, "score": v.score} for v in s.votes],
        "judge_verdict": s.judge_verdict, "quality": s.quality,
        "reviews": [{"annotator": r.annotator, "decision": r.decision, "answer": _dump(r.answer),
                     "comment": r.comment, "at": r.at} for r in s.reviews],
        "split": s.split, "provenance": sorted(s.provenance.items()),
    } for s in samples]
    return pa.Table.from_pylist(rows, schema=SAMPLE_SCHEMA)


def samples_from_arrow(data: pa.Table) -> Iterator[Sample]:
    for row in data.to_pylist():
        yield Sample(
            task=row["task"], question=row["question"], question_short=row["question_short"],
            answer=json.loads(row["answer"]), answer_type=row["answer_type"], table_ids=tuple(row["table_ids"]),
            program=None if row["program"] is None else Program(**row["program"]),
            origin=row["origin"], template=row["template"],
            votes=tuple(Vote(model=v["model"], answer=json.loads(v["answer"]),
                             agrees_with_gold=v["agrees_with_gold"], raw=v["raw"], score=v.get("score"))
                          for v in row["votes"]),
            judge_verdict=row["judge_verdict"], quality=row["quality"],
            reviews=tuple(Review(annotator=r["annotator"], decision=r["decision"], answer=json.loads(r["answer"]),
                                 comment=r["comment"], at=r["at"]) for r in row["reviews"]),
            split=row["split"], provenance=dict(row["provenance"]), id=row["id"],
        )



def release_samples(path: str) -> pa.Table:
    """A release's sample file (`samples/<task>/<split>.parquet`, provenance as a JSON object in text,
    as `datasets` needs it) read back in the stages' sample schema."""
    import pyarrow.parquet as pq

    data = pq.read_table(path)
    provenance = [sorted((k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
                         for k, v in (json.loads(p) if isinstance(p, str) else dict(p or {})).items())
                  for p in data.column("provenance").to_pylist()]
    i = data.schema.get_field_index("provenance")
    data = data.set_column(i, "provenance", pa.array(provenance, type=SAMPLE_SCHEMA.field("provenance").type))
    return data.select(SAMPLE_SCHEMA.names).cast(SAMPLE_SCHEMA)

RECORD_KINDS = {
    "tables": (TABLE_SCHEMA, tables_to_arrow, tables_from_arrow),
    "databases": (DATABASE_SCHEMA, databases_to_arrow, databases_from_arrow),
    "samples": (SAMPLE_SCHEMA, samples_to_arrow, samples_from_arrow),
}

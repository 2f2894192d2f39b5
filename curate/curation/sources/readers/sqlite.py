"""SQLite and DuckDB database files, and the Spider layout: tables plus declared keys."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from curate.curation.body import cell_text, infer_column, plain_array
from curate.curation.database import Database, ForeignKey, PrimaryKey
from curate.curation.semantics import ColumnInfo
from curate.curation.sources.errors import SourceError
from curate.curation.sources.hostile_db import (Deadline, duckdb_table, interrupted_at, open_duckdb, open_sqlite, quote,
                                         sqlite_error, sqlite_rows)
from curate.curation.sources.limits import out_of_memory
from curate.curation.sources.readers import reader
from curate.curation.table import Provenance, Table, unique_names

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

TEXT_AFFINITY = ("CHAR", "CLOB", "TEXT")


@reader("sqlite", extensions=(".sqlite", ".sqlite3", ".db"))
@reader("spider")  # database/<db_id>/<db_id>.sqlite beside a tables.json (curation.sources.file_unit)
def read_sqlite(path: str, source: str = "sqlite", tables_json: str | None = None,
                warnings: list[dict] | None = None) -> Iterator[Table | Database]:
    """Every table of a SQLite file, then the Database that ties them together (last). Where a
    Spider `tables.json` disagrees with the database, `warnings` gets what disagrees."""
    import pyarrow as pa

    if Path(path).stat().st_size == 0:
        raise SourceError(path, "empty file")
    uri = f"file:{Path(path).resolve()}?mode=ro&immutable=1"  # immutable: no journal or trigger ever writes
    try:
        con, deadline = open_sqlite(path, uri)
        names = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
    except sqlite3.DatabaseError as e:
        raise SourceError(path, f"not a SQLite database ({e})") from None
    db_name = Path(path).stem
    natural = _natural_names(tables_json, db_name, con) if tables_json else {}
    members: list[tuple[str, str]] = []
    where = "the database"
    pks: list[PrimaryKey] = []
    fks: list[ForeignKey] = []
    try:
        for name in names:
            where = f"table {name!r}"
            # table_xinfo: generated columns too (hidden 2 and 3), not a virtual table's hidden ones (1)
            info = [r for r in con.execute(f"PRAGMA table_xinfo({quote(name)})").fetchall() if r[6] != 1]
            columns = [r[1] for r in info]
            declared = [r[2] or "" for r in info]
            rows = sqlite_rows(con, path, name, columns, deadline)
            arrays = [_column([r[j] for r in rows], any(t in col_type.upper() for t in TEXT_AFFINITY))
                      for j, col_type in enumerate(declared)]
            table_name, column_names = natural.get(name, ("", {}))
            table = Table(name=name, caption=table_name, body=pa.table(arrays, names=unique_names(columns)),
                          semantics=tuple(ColumnInfo(name=c, label=column_names[c],
                                                     evidence="the column's natural name in Spider's tables.json")
                                          for c in columns if column_names.get(c)),
                          provenance=Provenance(source=source, path=path, sheet=name, database=db_name))
            members.append((name, table.id))
            yield table
            pk_cols = tuple(r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
            if pk_cols:
                pks.append(PrimaryKey(name, pk_cols, "declared", 1.0, "declared in the SQLite schema"))
            groups: dict[int, list[tuple]] = {}
            for fk in con.execute(f"PRAGMA foreign_key_list({quote(name)})").fetchall():
                groups.setdefault(fk[0], []).append(fk)
            for _, parts in sorted(groups.items()):
                parts.sort(key=lambda r: r[1])
                ref_table = parts[0][2]
                ref_cols = tuple(p[4] or "" for p in parts)
                if not all(ref_cols):  # REFERENCES t (no columns): the referenced table's primary key
                    ref_info = con.execute(f"PRAGMA table_info({quote(ref_table)})").fetchall()
                    ref_cols = tuple(r[1] for r in sorted((r for r in ref_info if r[5]), key=lambda r: r[5]))
                fks.append(ForeignKey(name, tuple(p[3] for p in parts), ref_table, ref_cols, "declared", 1.0,
                                      "declared in the SQLite schema"))
    except sqlite3.DatabaseError as e:
        raise sqlite_error(path, e, deadline, where) from None
    finally:
        con.close()
    if tables_json:
        problems: list[str] = []
        pks, fks = _merge_spider_keys(tables_json, db_name, names, pks, fks, problems)
        if warnings is not None:
            warnings += [{"path": tables_json, "database": path, "reason": p} for p in problems]
    yield Database(name=db_name, tables=tuple(members), primary_keys=tuple(pks), foreign_keys=tuple(fks),
                   source=source, path=path)


def _spider_schema(tables_json: str, db_id: str) -> dict[str, Any] | None:
    try:
        schemas = json.loads(Path(tables_json).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # said by _merge_spider_keys
    if not isinstance(schemas, list):
        return None
    return next((s for s in schemas if isinstance(s, dict) and s.get("db_id") == db_id), None)


_SPIDER_TYPES = {"number": ("INT", "REAL", "FLOA", "DOUB", "NUM", "DEC"), "text": TEXT_AFFINITY}  # else any


def _natural_names(tables_json: str, db_id: str, con: sqlite3.Connection) -> dict[str, tuple[str, dict[str, str]]]:
    """Each table's natural name and its columns' ("has pet"; "StuID" -> "student id") from Spider's
    tables.json, so that questions speak one language. A database whose names were translated
    (MachineSpider's `schüler` for `Student`) is matched table by table on its columns' number and
    types in order; a table that matches no entry, or several, gets none."""
    schema = _spider_schema(tables_json, db_id)
    if schema is None:
        return {}
    try:
        tables = [str(t) for t in schema["table_names_original"]]
        natural_tables = [str(t) for t in schema["table_names"]]
        columns: list[list[tuple[str, str, str]]] = [[] for _ in tables]
        position: list[tuple[int, int]] = []  # each column of the file: (table, position in it)
        for (t, original), (_, said), kind in zip(schema["column_names_original"], schema["column_names"],
                                                  schema["column_types"]):
            position.append((int(t), len(columns[int(t)]) if int(t) >= 0 else -1))
            if int(t) >= 0:
                columns[int(t)].append((str(original), str(said), str(kind)))
        references = {position[int(a)]: position[int(b)][0] for a, b in schema.get("foreign_keys", [])}
    except (KeyError, TypeError, ValueError, IndexError):
        return {}
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
    infos = {name: con.execute(f"PRAGMA table_info({quote(name)})").fetchall() for name in names}
    fits: dict[str, list[int]] = {}
    for name, info in infos.items():
        same = [i for i, t in enumerate(tables) if t.lower() == name.lower()]
        if not same:
            kinds = [_spider_kind(r[2] or "") for r in info]
            same = [i for i, cols in enumerate(columns) if len(cols) == len(info)
                    and all(k is None or k == c[2] for k, c in zip(kinds, cols))]
        fits[name] = same
    chosen: dict[str, int] = {}
    while True:  # a table that fits one entry takes it; the others then fit one fewer
        taken = set(chosen.values())
        settled = {n: [i for i in f if i not in taken] for n, f in fits.items() if n not in chosen}
        found = {n: f[0] for n, f in settled.items() if len(f) == 1}
        for name, i in chosen.items():  # a key of a matched table points where its entry's key does (`sänger`)
            names_at = [r[1] for r in infos[name]]
            for fk in con.execute(f"PRAGMA foreign_key_list({quote(name)})").fetchall():
                target = references.get((i, names_at.index(fk[3]) if fk[3] in names_at else -1))
                if fk[2] in settled and target in settled[fk[2]] and fk[2] not in found:
                    found[fk[2]] = target
        if not found:
            break
        chosen.update(found)
    return {name: (natural_tables[i], {r[1]: said for r, (_, said, _) in zip(infos[name], columns[i])})
            for name, i in chosen.items() if len(columns[i]) == len(infos[name])}


def _spider_kind(declared: str) -> str | None:
    upper = declared.upper()
    return next((kind for kind, marks in _SPIDER_TYPES.items() if any(m in upper for m in marks)), None)


def _merge_spider_keys(tables_json: str, db_id: str, names: list[str], pks: list[PrimaryKey],
                       fks: list[ForeignKey], problems: list[str]) -> tuple[list[PrimaryKey], list[ForeignKey]]:
    """Add keys from Spider's tables.json that the SQLite schema does not declare. Keys are taken
    only where the file agrees with the database (same tables, every key's column there); each
    disagreement, and a malformed entry, is said in `problems`."""
    try:
        schemas = json.loads(Path(tables_json).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        problems.append(f"unreadable tables.json ({type(e).__name__}: {e})")
        return pks, fks
    if not isinstance(schemas, list):
        problems.append("tables.json is not a list of database schemas")
        return pks, fks
    schema = next((s for s in schemas if isinstance(s, dict) and s.get("db_id") == db_id), None)
    if schema is None:
        problems.append(f"tables.json has no entry for database {db_id!r}: its keys are not known")
        return pks, fks
    try:
        tables = [str(t) for t in schema["table_names_original"]]
        cols = [(int(t), str(c)) for t, c in schema["column_names_original"]]
        key_pairs = [(int(a), int(b)) for a, b in schema.get("foreign_keys", [])]
        pk_indexes = [int(i[0] if isinstance(i, list) else i) for i in schema.get("primary_keys", [])]
    except (KeyError, TypeError, ValueError) as e:
        problems.append(f"tables.json's entry for {db_id!r} is malformed ({type(e).__name__}: {e}); its keys are ignored")
        return pks, fks
    in_json, in_db = {t.lower() for t in tables}, {n.lower() for n in names}
    if in_json != in_db:
        only_json, only_db = sorted(in_json - in_db), sorted(in_db - in_json)
        problems.append(f"tables.json and {db_id}.sqlite name different tables (only in tables.json: "
                        f"{', '.join(only_json) or 'none'}; only in the database: {', '.join(only_db) or 'none'}); "
                        "its keys are ignored")
        return pks, fks

    def column(index: int) -> tuple[str, str] | None:
        if not 0 <= index < len(cols) or not 0 <= cols[index][0] < len(tables):
            problems.append(f"tables.json's entry for {db_id!r} names column #{index}, which it does not list")
            return None
        return tables[cols[index][0]], cols[index][1]

    have_pk = {p.table.lower() for p in pks}
    for index in pk_indexes:
        found = column(index)
        if found and found[0].lower() not in have_pk:
            pks.append(PrimaryKey(found[0], (found[1],), "declared", 1.0, "declared in Spider's tables.json"))
    have_fk = {(f.table.lower(), f.columns, f.ref_table.lower()) for f in fks}
    for a, b in key_pairs:
        source, target = column(a), column(b)
        if source and target and (source[0].lower(), (source[1],), target[0].lower()) not in have_fk:
            fks.append(ForeignKey(source[0], (source[1],), target[0], (target[1],), "declared", 1.0,
                                  "declared in Spider's tables.json"))
    return pks, fks


@reader("duckdb", extensions=(".duckdb",))
def read_duckdb(path: str) -> Iterator[Table | Database]:
    import duckdb
    import pyarrow as pa

    if Path(path).stat().st_size == 0:
        raise SourceError(path, "empty file")
    try:
        con = open_duckdb(path)  # read-only, no external access or extensions, its memory and threads bounded
    except (duckdb.Error, OSError) as e:
        raise SourceError(path, f"not a DuckDB database ({e})") from None
    db_name = Path(path).stem
    members, pks, fks = [], [], []
    deadline = Deadline(path)
    try:
        names = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT internal ORDER BY table_name").fetchall()]
        for name in names:
            with interrupted_at(con, deadline):  # held only while DuckDB works, not while the caller does
                arrow = duckdb_table(con, path, name)
            body = pa.table([plain_array(c) for c in arrow.columns], names=unique_names(arrow.column_names))
            table = Table(name=name, body=body, provenance=Provenance(source="duckdb", path=path, sheet=name,
                                                                      database=db_name))
            members.append((name, table.id))
            yield table
        for table_name, kind, columns, ref_table, ref_columns in con.execute(
                "SELECT table_name, constraint_type, constraint_column_names, referenced_table, "
                "referenced_column_names FROM duckdb_constraints() "
                "WHERE constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY') ORDER BY table_name, constraint_index"
        ).fetchall():
            if kind == "PRIMARY KEY":
                pks.append(PrimaryKey(table_name, tuple(columns), "declared", 1.0, "declared in the DuckDB schema"))
            else:
                fks.append(ForeignKey(table_name, tuple(columns), ref_table, tuple(ref_columns), "declared", 1.0,
                                      "declared in the DuckDB schema"))
    except duckdb.InterruptException:
        raise deadline.error() from None
    except duckdb.OutOfMemoryException as e:
        raise SourceError(path, f"{out_of_memory()} ({e})") from None
    except duckdb.Error as e:
        raise SourceError(path, f"unreadable DuckDB database ({e})") from None
    finally:
        con.close()
    yield Database(name=db_name, tables=tuple(members), primary_keys=tuple(pks), foreign_keys=tuple(fks),
                   source="duckdb", path=path)


def _column(values: list[Any], text: bool) -> "pa.Array":
    """One column exactly as stored: SQL over a database must find the values it holds, so text
    keeps its whitespace and words like "NA" (a spreadsheet reader would normalise both). Numbers
    in a TEXT column stay text, as SQLite compares them."""
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if not text and present and all(isinstance(v, int) for v in present) and \
            all(-(2**63) <= v < 2**63 for v in present):
        return pa.array(values, type=pa.int64())
    if not text and present and all(isinstance(v, (int, float)) for v in present):
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())
    if not present and not text:
        return infer_column(values)
    return pa.array([None if v is None else v if isinstance(v, str)
                     else v.decode("utf-8", "replace") if isinstance(v, bytes) else cell_text(v)
                     for v in values], type=pa.string())

"""Tables as SQL sees them: an identifier quoted, and an in-memory SQLite copy of Arrow tables. Here, apart
from the runners (`sql`) and the rule for untrusted queries (`untrusted_sql`), because both build on it."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from curate.curation.answers import plain

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa


@lru_cache(maxsize=8192)
def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sqlite_copy(bodies: dict[str, "pa.Table"], typed: bool = True, indexes: dict[str, set[str]] | None = None) -> Any:
    """An in-memory SQLite database holding these tables, for running SQL as SQLite would.

    `typed` declares each column's affinity from its Arrow type (INTEGER, REAL, TEXT), as a
    database built from the data would; untyped columns compare as stored. `indexes` names the
    columns to index per table (joins on tables of 30k rows then take milliseconds, not seconds).
    """
    import sqlite3

    import pyarrow as pa

    con = sqlite3.connect(":memory:")
    for name, body in bodies.items():
        columns = []
        for f in body.schema:
            affinity = ""
            if typed:
                affinity = (" INTEGER" if pa.types.is_integer(f.type) or pa.types.is_boolean(f.type)
                            else " REAL" if pa.types.is_floating(f.type) or pa.types.is_decimal(f.type) else " TEXT")
            columns.append(quote_ident(f.name) + affinity)
        con.execute(f"CREATE TABLE {quote_ident(name)} ({', '.join(columns)})")
        if body.num_rows:
            marks = ", ".join("?" * body.num_columns)
            rows = zip(*(map(_sqlite_value, c.to_pylist()) for c in body.columns))
            con.executemany(f"INSERT INTO {quote_ident(name)} VALUES ({marks})", rows)
        for i, column in enumerate(sorted((indexes or {}).get(name, ()))):
            index = quote_ident(f"__key_{i}_{name}")
            con.execute(f"CREATE INDEX {index} ON {quote_ident(name)} ({quote_ident(column)})")
    return con


def _sqlite_value(value: Any) -> Any:
    if value is None or isinstance(value, (int, float, str, bytes)):
        return value
    return plain(value)

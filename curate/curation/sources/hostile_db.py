"""Opening a SQLite or DuckDB file that may be hostile, and streaming its tables under the `[ingest]` limits.

A database file is a program as much as data: a generated column (`zeroblob(900000000)`) makes
values of any size from an 8 KB file, and a schema names functions, views and triggers. So the
file is opened read-only (SQLite immutable too: no journal, no trigger ever writes), with ATTACH,
extensions and external access off; each value is capped (`max_cell_mb`) by the engine itself,
before it is made; rows are fetched in batches and counted against `max_rows`, `max_cells` and
`max_table_mb` as they come, so a table past a limit stops at the first batch past it; and reading
a table stops at the file's deadline (`seconds_per_file`), from inside the engine, where a Python
signal handler would wait for the statement to end. What one row or batch costs to make
is bounded, whatever the library, by the stage's address-space limit (`max_memory_mb`).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

from curate.curation.sources import limits
from curate.curation.sources.errors import SourceError

BATCH_ROWS = 1024
SQLITE_MAX_LENGTH = 1_000_000_000  # SQLite's own ceiling on a value
_SQLITE_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
_SQLITE_PRAGMAS = {"table_info", "table_xinfo", "foreign_key_list"}


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


class Deadline:
    """When reading one file must stop: `seconds_per_file` from when it was opened."""

    def __init__(self, path: str) -> None:
        self.path, self.seconds = path, limits.current().seconds_per_file
        self.at = time.monotonic() + self.seconds

    def passed(self) -> bool:
        return time.monotonic() > self.at

    def error(self) -> SourceError:
        return SourceError(self.path, limits.past("reading it (seconds)", self.seconds, "seconds_per_file"))


def _sqlite_authorizer(action: int, arg1: Any, *_: Any) -> int:
    """Reads only: no ATTACH, no writes, no pragma but the three the reader asks."""
    if action in _SQLITE_ALLOWED or (action == sqlite3.SQLITE_PRAGMA and str(arg1).lower() in _SQLITE_PRAGMAS):
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def open_sqlite(path: str, uri: str) -> tuple[sqlite3.Connection, Deadline]:
    bounds = limits.current()
    con = sqlite3.connect(uri, uri=True)
    deadline = Deadline(path)
    con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, min(SQLITE_MAX_LENGTH, bounds.max_cell_mb * limits.MB))
    con.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    con.execute("PRAGMA trusted_schema = OFF")  # the schema may call only functions safe on any input
    con.set_authorizer(_sqlite_authorizer)
    return con, deadline


def sqlite_error(path: str, error: sqlite3.DatabaseError, deadline: Deadline, what: str) -> SourceError:
    """A SQLite error as the limit it broke, where it broke one."""
    text = str(error)
    if "interrupted" in text and deadline.passed():
        return deadline.error()
    if "too big" in text:
        return SourceError(path, limits.past(f"a value in {what} (MB)", None, "max_cell_mb"))
    return SourceError(path, f"unreadable SQLite database ({error})")


def sqlite_rows(con: sqlite3.Connection, path: str, table: str, columns: list[str],
                deadline: Deadline) -> list[tuple]:
    """Every row of `table` (these columns, generated ones included), fetched in batches and
    counted against the limits as they come."""
    budget = limits.TableBudget(path, table, len(columns))
    rows: list[tuple] = []
    with interrupted_at(con, deadline):
        cursor = con.execute(f"SELECT {', '.join(map(quote, columns))} FROM {quote(table)}")
        while batch := cursor.fetchmany(BATCH_ROWS):
            budget.add(len(batch), 8 * len(batch) * len(columns) +
                       sum(len(v) for row in batch for v in row if isinstance(v, (str, bytes))))
            rows += batch
    return rows


DUCKDB_CONFIG = {"enable_external_access": False, "autoload_known_extensions": False,
                 "autoinstall_known_extensions": False, "allow_community_extensions": False, "threads": 1}


def open_duckdb(path: str) -> Any:
    import duckdb

    config = {**DUCKDB_CONFIG, "memory_limit": f"{limits.current().max_memory_mb}MB", "lock_configuration": True}
    return duckdb.connect(path, read_only=True, config=config)


@contextmanager
def interrupted_at(con: Any, deadline: Deadline) -> Iterator[None]:
    """Interrupt the connection's statement at the deadline, from a thread: SQLite and DuckDB stop
    at their next row or vector, where a Python signal handler would wait for the statement to end
    (and SQLite's progress handler counts opcodes, of which one can hold seconds of work). It
    interrupts again until the statement ends, so that one started at the deadline stops too."""
    stop = threading.Event()

    def watch() -> None:
        if not stop.wait(max(0.0, deadline.at - time.monotonic())):
            con.interrupt()
            while not stop.wait(0.05):
                con.interrupt()

    watcher = threading.Thread(target=watch, daemon=True)
    try:
        watcher.start()
    except RuntimeError:  # no memory left for its thread's stack
        raise SourceError(deadline.path, limits.out_of_memory()) from None
    try:
        yield
    finally:
        stop.set()


def duckdb_table(con: Any, path: str, table: str) -> Any:
    """Every row of `table` as an Arrow table, fetched in batches counted against the limits as they come."""
    import pyarrow as pa
    import pyarrow.compute as pc

    relation = con.sql(f"SELECT * FROM {quote(table)}")
    reader = relation.to_arrow_reader(BATCH_ROWS) if hasattr(relation, "to_arrow_reader") \
        else relation.fetch_record_batch(BATCH_ROWS)  # DuckDB 1.x
    budget = limits.TableBudget(path, table, len(reader.schema))
    cell_bytes = limits.current().max_cell_mb * limits.MB
    batches = []
    for batch in _memory_errors(reader, path):
        for column in batch.columns:
            if _is_binary(column.type) and len(column) and (pc.max(pc.binary_length(column)).as_py() or 0) > cell_bytes:
                raise SourceError(path, limits.past(f"a value in table {table!r} (MB)", None, "max_cell_mb"))
        budget.add(batch.num_rows, batch.nbytes)
        batches.append(batch)
    return pa.Table.from_batches(batches, schema=reader.schema)


def _is_binary(kind: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) \
        or pa.types.is_large_binary(kind) or pa.types.is_string_view(kind) or pa.types.is_binary_view(kind)


def _memory_errors(batches: Any, path: str) -> Iterator[Any]:
    """DuckDB's batches, its failure to allocate one (an OSError through Arrow's stream) named as the limit."""
    iterator = iter(batches)
    while True:
        try:
            batch = next(iterator)
        except StopIteration:
            return
        except OSError as e:
            if "Out of Memory" not in str(e):
                raise
            raise SourceError(path, limits.out_of_memory()) from None
        yield batch

"""The one rule for running SQL that a model wrote (and the gold SQL it is scored against).

A query is first read with sqlglot and refused unless it is exactly one read query (SELECT, WITH,
a set operation) whose every source is one of the sample's own tables or a CTE (an allow-list: no
table function, file, other catalog or system view), with no function that reads files, settings,
variables or other catalogs, nor one that builds an arbitrarily large value from a small query.
It then runs where a hole in that check would find little to reach: DuckDB on an empty in-memory
database (external access off, extensions neither loaded nor installed, configuration locked, one
thread, a memory limit), each query on its own fresh connection holding only the sample's tables; SQLite on an in-memory copy of them behind an authorizer that allows reads only. Each
query has a deadline (an interrupt from a timer; SQLite's progress handler) and a row cap.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

SECONDS = 10.0  # per query
ROW_CAP = 100_000  # rows fetched per query; a larger result is refused, never held
MEMORY_LIMIT = "512MB"  # DuckDB's buffer limit
MAX_VALUE_BYTES = 10_000_000  # SQLite: the largest string or blob a query may build
MAX_RESULT_BYTES = 64_000_000  # text and blobs fetched per query (100k rows of 10 MB values would be 1 TB)
MAX_SQL_CHARS = 100_000  # a longer query is refused unread (sqlglot takes ~1 GB and seconds on 1.3 MB of IN list)

# sqlglot statement and clause types that a read query never holds
_FORBIDDEN_NODES = tuple(getattr(__import__("sqlglot").exp, n) for n in (
    "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "Copy", "Command", "Pragma", "Set", "Attach",
    "Detach", "Use", "Transaction", "Commit", "Rollback", "Describe", "Show", "Export", "Install", "Into", "Summarize",
    "Cache", "Uncache", "Refresh", "LoadData", "Analyze", "Grant", "Revoke", "TruncateTable", "Kill", "Execute")
    if hasattr(__import__("sqlglot").exp, n))
# functions that read outside the sample's tables, or build a huge value from a small query
_FORBIDDEN_FUNCTIONS = re.compile(
    r"^(read_\w*|duckdb_\w*|sqlite_\w*|pragma_\w*|parquet_\w*|iceberg_\w*|delta_\w*|json_execute_serialized_sql"
    r"|glob|query|query_table|getvariable|current_setting|getenv|load_extension|readfile|writefile|edit"
    r"|fts\w*|repeat|pad|lpad|rpad|printf|format|range|generate_series|list_resize|array_resize|zeroblob"
    r"|randomblob)$", re.I)


class QueryRefused(Exception):
    """The query broke the rule, failed, ran past its deadline or returned too many rows: the reason."""


def refusal(sql: str, table_names: Iterable[str], dialect: str = "duckdb") -> str | None:
    """Why `sql` may not run over the tables named `table_names`; None when it may."""
    if len(sql) > MAX_SQL_CHARS:
        return f"the query is longer than {MAX_SQL_CHARS:,} characters"
    return _refusal(sql, frozenset(n.lower() for n in table_names), dialect)


@lru_cache(maxsize=4096)  # a sample's gold and reply come back once per table configuration
def _refusal(sql: str, table_names: frozenset[str], dialect: str) -> str | None:
    import sqlglot
    from sqlglot import exp

    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (sqlglot.errors.SqlglotError, RecursionError, ValueError) as e:
        return f"unreadable SQL: {str(e).splitlines()[0][:200] if str(e) else type(e).__name__}"
    if len(statements) != 1:
        return f"one statement expected, found {len(statements)}"
    tree = statements[0]
    if not isinstance(tree, (exp.Select, exp.SetOperation, exp.Subquery)):
        return f"only a read query (SELECT, WITH, UNION ...) may run, not {tree.key.upper()}"
    allowed = set(table_names) | {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            return f"{node.key.upper()} is not allowed in a read query"
        if isinstance(node, exp.Func):
            name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
            if _FORBIDDEN_FUNCTIONS.match(name or ""):
                return f"the function {name.lower()}() is not allowed"
        if isinstance(node, exp.Lateral) and not isinstance(node.this, exp.Subquery):
            return "LATERAL over a function is not allowed"
        if isinstance(node, exp.Table):
            if not isinstance(node.this, exp.Identifier):
                return f"only the sample's tables may be read, not {node.this.sql(dialect=dialect)[:80]}"
            if node.args.get("db") or node.args.get("catalog") or node.name.lower() not in allowed:
                return f"only the sample's tables may be read, not {node.sql(dialect=dialect)[:80]}"
    return None


def fetch_bounded(cursor: Any, row_cap: int = ROW_CAP, max_bytes: int = MAX_RESULT_BYTES) -> list[tuple]:
    """The cursor's rows, in batches, refused once past `row_cap` rows or `max_bytes` of text and
    blobs (each value within SQLite's length limit, yet many of them, would exhaust memory)."""
    rows: list[tuple] = []
    size = 0
    while batch := cursor.fetchmany(min(1024, row_cap + 1 - len(rows)) or 1):
        rows += batch
        if len(rows) > row_cap:
            raise QueryRefused(f"the result has more than {row_cap} rows")
        size += sum(len(v) for row in batch for v in row if isinstance(v, (str, bytes)))
        if size > max_bytes:
            raise QueryRefused(f"the result holds more than {max_bytes:,} bytes of text")
    return rows


# --------------------------------------------------------------------------- DuckDB


_DATABASE: Any = None


def duckdb_database() -> Any:
    """The in-memory DuckDB that model SQL runs in: one per process (opening one costs 25-90 ms, a
    connection to it ~1 ms), empty, and unable to reach anything outside itself or to be
    reconfigured. Nothing is ever created in it: each query gets its own connection, whose
    registered tables and any temporary object die with it, and the rule refuses every statement
    that could write to the database itself."""
    global _DATABASE
    if _DATABASE is None:
        import duckdb

        _DATABASE = duckdb.connect(":memory:", config={
            "enable_external_access": False, "autoload_known_extensions": False,
            "autoinstall_known_extensions": False, "allow_community_extensions": False, "threads": 1,
            "memory_limit": MEMORY_LIMIT, "lock_configuration": True})
    return _DATABASE


class _Watchdog:
    """One thread that interrupts each watched connection at its deadline (a timer thread per query
    would cost more than the query)."""

    def __init__(self) -> None:
        self._due: dict[int, tuple[float, Any]] = {}
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, con: Any, seconds: float) -> int:
        import time

        with self._wake:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="sql-deadlines", daemon=True)
                self._thread.start()
            key = id(con)
            self._due[key] = (time.monotonic() + seconds, con)
            self._wake.notify()
            return key

    def release(self, key: int) -> None:
        with self._wake:
            self._due.pop(key, None)

    def _run(self) -> None:
        import time

        with self._wake:
            while True:
                now = time.monotonic()
                for key, (due, con) in list(self._due.items()):
                    if due <= now:
                        con.interrupt()
                        del self._due[key]
                nearest = min((due for due, _ in self._due.values()), default=None)
                self._wake.wait(None if nearest is None else max(nearest - now, 0.001))


_WATCHDOG = _Watchdog()


@contextmanager
def deadline(con: Any, seconds: float) -> Iterator[None]:
    """Interrupt `con`'s running query once `seconds` have passed (DuckDB's InterruptException)."""
    key = _WATCHDOG.watch(con, seconds)
    try:
        yield
    finally:
        _WATCHDOG.release(key)


def run_duckdb(database: Any, sql: str, tables: dict[str, Any], seconds: float = SECONDS,
               row_cap: int = ROW_CAP) -> list[tuple]:
    """`sql`'s rows, on a new connection to `database` holding only `tables` (name -> Arrow table)."""
    if (why := refusal(sql, tables, "duckdb")) is not None:
        raise QueryRefused(why)
    import duckdb

    con = database.cursor()
    watched = None
    try:
        for name, body in tables.items():
            con.register(name, body)
        watched = _WATCHDOG.watch(con, seconds)
        return fetch_bounded(con.execute(sql), row_cap)
    except duckdb.InterruptException:
        raise QueryRefused(f"the query ran past its {seconds:g} s deadline") from None
    except (duckdb.Error, MemoryError, OverflowError, ValueError, RuntimeError) as e:
        raise QueryRefused(f"{type(e).__name__}: {str(e)[:200]}") from None
    finally:
        if watched is not None:
            _WATCHDOG.release(watched)
        con.close()


# --------------------------------------------------------------------------- SQLite

_SQLITE_ALLOWED = {21, 20, 31, 33}  # SQLITE_SELECT, SQLITE_READ, SQLITE_FUNCTION, SQLITE_RECURSIVE


def sqlite_database(bodies: dict[str, Any]) -> Any:
    """An in-memory SQLite copy of the tables that, once made, only reads: an authorizer refuses
    every action but reading the tables and calling allowed functions (no ATTACH, PRAGMA, writes)."""
    import sqlite3

    from curate.curation.programs.sql_tables import sqlite_copy

    con = sqlite_copy(bodies)
    con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    con.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    names = {n.lower() for n in bodies}

    def authorize(action: int, first: str | None, second: str | None, database: str | None, source: str | None) -> int:
        if action not in _SQLITE_ALLOWED:
            return sqlite3.SQLITE_DENY
        if action == 31 and _FORBIDDEN_FUNCTIONS.match(second or ""):
            return sqlite3.SQLITE_DENY
        if action == 20 and (database not in (None, "main") or (first or "").lower() not in names):
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    con.set_authorizer(authorize)
    return con


def run_sqlite(con: Any, sql: str, table_names: Iterable[str], seconds: float = SECONDS,
               row_cap: int = ROW_CAP, with_width: bool = False) -> Any:
    """`sql`'s rows on a `sqlite_database` copy, refused past `seconds` or `row_cap`
    (`with_width`: (rows, the result's column count))."""
    if (why := refusal(sql, table_names, "sqlite")) is not None:
        raise QueryRefused(why)
    import sqlite3
    import time

    deadline = time.monotonic() + seconds
    con.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        cursor = con.execute(sql)
        rows = fetch_bounded(cursor, row_cap)
        return (rows, len(cursor.description or ())) if with_width else rows
    except sqlite3.OperationalError as e:
        if time.monotonic() > deadline and "interrupted" in str(e):
            raise QueryRefused(f"the query ran past its {seconds:g} s deadline") from None
        raise QueryRefused(f"{type(e).__name__}: {str(e)[:200]}") from None
    except (sqlite3.Error, sqlite3.Warning, MemoryError, OverflowError, ValueError) as e:
        raise QueryRefused(f"{type(e).__name__}: {str(e)[:200]}") from None
    finally:
        con.set_progress_handler(None, 0)

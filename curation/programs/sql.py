"""DuckDB SQL programs: one connection, the sample's tables loaded under their names."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from curation.answers import plain
from curation.programs import ProgramError, data_view

if TYPE_CHECKING:  # pragma: no cover
    from curation.table import Table


@lru_cache(maxsize=8192)
def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: Any) -> str:
    """A SQL literal that DuckDB reads back as exactly `value`."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return f"'{value}'::DOUBLE"
        text = repr(value)  # shortest round-trip form; an exponent makes DuckDB read a DOUBLE
        return text if "e" in text else text + "e0"
    return "'" + str(value).replace("'", "''") + "'"


class SqlRunner:
    """Tables are named `t` for a single-table program, or by their own names for several (or by
    the names given: a database's table names)."""

    def __init__(self) -> None:
        import duckdb

        self._con = duckdb.connect(config={"threads": 1})
        self._con.execute("SET enable_external_access = false")
        self._loaded: dict[str, str] = {}  # SQL name -> table id

    @property
    def connection(self) -> Any:
        return self._con

    def load(self, tables: list["Table"], names: list[str] | None = None) -> None:
        """Make the tables' data views queryable, under `names` (else `t`, or their own names)."""
        if names is None or len(names) != len(tables):
            names = ["t"] if len(tables) == 1 else [t.name for t in tables]
        for name, table in zip(names, tables):
            if self._loaded.get(name) == table.id:
                continue
            self._con.register("__curate_source", data_view(table))
            try:  # a real table, so that `rowid` is the row's position
                self._con.execute(f"CREATE OR REPLACE TABLE {quote_ident(name)} AS SELECT * FROM __curate_source")
            finally:
                self._con.unregister("__curate_source")
            self._loaded[name] = table.id

    def run(self, text: str, tables: list["Table"], names: list[str] | None = None) -> Any:
        import duckdb

        self.load(tables, names)
        try:
            cursor = self._con.execute(text)
            rows = cursor.fetchall()
            width = len(cursor.description or ())
        except duckdb.Error as e:
            raise ProgramError(f"SQL failed: {str(e).splitlines()[0]}") from None
        return result_value(rows, width)

    def close(self) -> None:
        self._con.close()


def result_value(rows: list[tuple], width: int) -> Any:
    """A result set as a value: one cell -> that value; one column -> a list; else rows as lists."""
    if not rows:
        return None
    if len(rows) == 1 and width == 1:
        return plain(rows[0][0])
    if width == 1:
        return [plain(r[0]) for r in rows]
    return [plain(list(r)) for r in rows]

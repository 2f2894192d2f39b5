"""DuckDB SQL programs: one connection, the sample's tables loaded under their names."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from curate.curation.answers import plain
from curate.curation.programs import ProgramError, data_view, program_kind
from curate.curation.programs.sql_tables import quote_ident, sqlite_copy  # noqa: F401 (this module's API too)

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from curate.curation.table import Table


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


SHEET = "sheet"  # a single table's every body row, summary rows included (tree questions read totals there)
_NAMES_SHEET = re.compile(r"\bsheet\b")


@program_kind("sql")
class SqlRunner:
    """Tables are named `t` for a single-table program, or by their own names for several (or by
    the names given: a database's table names). A single-table program may also read `sheet`:
    the table's whole body, the rows cleaning marked as summaries (a Total, a group's own
    subtotal row) included, `rowid` still the row's position; it is loaded only for a program
    that names it."""

    def __init__(self, seconds: float | None = None) -> None:
        import duckdb

        from curate.curation.programs.untrusted_sql import MEMORY_LIMIT, SECONDS

        self._seconds = seconds or SECONDS  # each program's deadline

        # a release's programs are as hostile as its author: no file, no extension, no setting changed
        self._con = duckdb.connect(config={
            "threads": 1, "enable_external_access": False, "autoload_known_extensions": False,
            "autoinstall_known_extensions": False, "allow_community_extensions": False,
            "memory_limit": MEMORY_LIMIT, "lock_configuration": True})
        self._loaded: dict[str, str] = {}  # SQL name -> table id

    @property
    def connection(self) -> Any:
        return self._con

    def load(self, tables: list["Table"], names: list[str] | None = None, sheet: bool = False) -> None:
        """Make the tables' data views queryable, under `names` (else `t`, or their own names);
        `sheet`: a single table's whole body too, as `sheet`."""
        if names is None or len(names) != len(tables):
            names = ["t"] if len(tables) == 1 else [t.name for t in tables]
        pairs = list(zip(names, tables))
        if sheet and len(tables) == 1:
            pairs.append((SHEET, tables[0]))
        for name, table in pairs:
            if self._loaded.get(name) == table.id:
                continue
            self._con.register("__curate_source", table.body if name == SHEET else data_view(table))
            try:  # a real table, so that `rowid` is the row's position
                self._con.execute(f"CREATE OR REPLACE TABLE {quote_ident(name)} AS SELECT * FROM __curate_source")
            finally:
                self._con.unregister("__curate_source")
            self._loaded[name] = table.id

    def run(self, text: str, tables: list["Table"], names: list[str] | None = None) -> Any:
        """One read statement, within the model-SQL rule's deadline and row cap: a program that
        would write (a macro, a table another sample reads) or run forever is an error."""
        import duckdb

        from curate.curation.programs.untrusted_sql import QueryRefused, deadline, fetch_bounded

        try:
            kinds = [s.type for s in self._con.extract_statements(text)]
        except duckdb.Error as e:
            raise ProgramError(f"SQL failed: {str(e).splitlines()[0]}") from None
        if kinds != [duckdb.StatementType.SELECT]:
            raise ProgramError(f"SQL refused: one SELECT statement expected, found {', '.join(k.name for k in kinds)}")
        self.load(tables, names, sheet=bool(_NAMES_SHEET.search(text)))
        try:
            with deadline(self._con, self._seconds):
                cursor = self._con.execute(text)
                rows = fetch_bounded(cursor)
            width = len(cursor.description or ())
        except duckdb.InterruptException:
            raise ProgramError(f"SQL refused: ran past its {self._seconds:g} s deadline") from None
        except QueryRefused as e:
            raise ProgramError(f"SQL refused: {e}") from None
        except (duckdb.Error, MemoryError) as e:
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

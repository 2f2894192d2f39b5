"""SQL in SQLite's dialect: the gold queries of imported Spider and BIRD releases (a `sql` program
with dialect `sqlite`), run where their answers were computed, in a SQLite copy of the tables'
data views under their own names, under the model-SQL rule (`untrusted_sql`): a downloaded release
is hostile input. `curate verify` and `curate release verify` run them here; every
other `sql` program is DuckDB's (`curate.curation.programs.sql`). A module apart, not a registered kind:
the generating stages never make such programs, and their code signatures stay as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from curate.curation.programs import ProgramError, data_view
from curate.curation.programs.sql import result_value

if TYPE_CHECKING:  # pragma: no cover
    from curate.curation.sample import Program
    from curate.curation.table import Table


def is_sqlite(program: "Program") -> bool:
    return program.kind == "sql" and program.dialect == "sqlite"


class SqliteRunner:
    def __init__(self, seconds: float | None = None) -> None:
        self._seconds = seconds  # each query's deadline (None: the model-SQL rule's)
        self._copy: tuple[tuple[str, ...], Any] | None = None  # the last tables' copy (samples come grouped)

    def run(self, text: str, tables: list["Table"], names: list[str] | None = None) -> Any:
        from curate.curation.programs.untrusted_sql import SECONDS, QueryRefused, run_sqlite, sqlite_database

        if names is None or len(names) != len(tables):
            names = [t.name for t in tables]
        key = tuple(f"{n}={t.id}" for n, t in zip(names, tables))
        if self._copy is None or self._copy[0] != key:
            self.close()
            self._copy = (key, sqlite_database({n: data_view(t) for n, t in zip(names, tables)}))
        try:  # a release's SQL is as hostile as a model's: read-only, bounded, under the one rule
            rows, width = run_sqlite(self._copy[1], text, names, self._seconds or SECONDS, with_width=True)
        except QueryRefused as e:
            raise ProgramError(f"SQL failed (SQLite): {e}") from None
        return result_value(rows, width)

    def close(self) -> None:
        if self._copy is not None:
            self._copy[1].close()
            self._copy = None

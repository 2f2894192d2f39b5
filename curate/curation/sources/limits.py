"""Limits on what one source file may cost to read: the `[ingest]` section of the build config.

A file past a limit (a zip bomb, an HTML span bomb, a sheet of a billion cells, a reader that
never ends) is reported as unreadable with the limit it broke, and the run goes on. The stage
sets the limits of its config in each worker before it reads (`use`); readers ask `current()`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class IngestLimits:
    max_file_mb: int = 2048  # bytes on disk
    max_uncompressed_mb: int = 1024  # an XLSX (a zip) unpacked
    max_cells: int = 20_000_000  # rows x columns of one table, or of one HTML table's grid
    max_rows: int = 10_000_000
    max_columns: int = 16_384  # Excel's own limit
    max_merged_cells: int = 2_000_000  # the area all merged cells (rowspan x colspan) of one table cover
    seconds_per_file: float = 600.0  # reading one file (a unit)
    max_cell_mb: int = 64  # one value (a text or blob) of a database, generated columns' included
    max_table_mb: int = 1024  # the values of one database table, counted as its rows stream in
    max_memory_mb: int = 4096  # address space that reading one file may add to its process

    @classmethod
    def from_config(cls, section: dict[str, Any] | None) -> "IngestLimits":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(section or {}) - known)
        if unknown:
            raise ValueError(f"[ingest]: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        limits = replace(cls(), **(section or {}))
        bad = [k for k, v in asdict(limits).items() if not isinstance(v, (int, float)) or v <= 0]
        if bad:
            raise ValueError(f"[ingest]: {', '.join(bad)} must be positive numbers")
        return limits

    def changed(self) -> dict[str, Any]:
        """The settings that differ from the defaults (what a stage's signature needs)."""
        default = IngestLimits()
        return {k: v for k, v in asdict(self).items() if getattr(default, k) != v}


_current = IngestLimits()


def use(limits: IngestLimits) -> None:
    global _current
    _current = limits


def current() -> IngestLimits:
    return _current


def past(what: str, value: float | None, setting: str) -> str:
    """The reason a file past a limit is unreadable, naming the setting that would let it through."""
    here = "" if value is None else f"; {value:,.0f} here"
    return f"{what} is past the limit ({setting} = {getattr(_current, setting):,} in [ingest]{here})"


def out_of_memory() -> str:
    """The reason for a file whose reading failed to allocate: past `max_memory_mb`, or a tighter bound."""
    return past("the memory reading it takes (MB)", None, "max_memory_mb")


class TableBudget:
    """What one database table has cost so far as its rows stream in, so that a table past a limit
    is refused at the first batch past it, before the rest is fetched (a file's rows can be generated:
    an 8 KB file may hold 50 rows of 900 MB each)."""

    def __init__(self, path: str, table: str, n_columns: int) -> None:
        from curate.curation.sources.errors import SourceError

        self.path, self.table, self.n_columns = path, table, n_columns
        self.rows = self.bytes = 0
        if n_columns > _current.max_columns:
            raise SourceError(path, past(f"table {table!r}'s column count", n_columns, "max_columns"))

    def add(self, rows: int, nbytes: int) -> None:
        from curate.curation.sources.errors import SourceError

        self.rows += rows
        self.bytes += nbytes
        if self.rows > _current.max_rows:
            raise SourceError(self.path, past(f"table {self.table!r}'s row count", self.rows, "max_rows"))
        if self.rows * self.n_columns > _current.max_cells:
            raise SourceError(self.path, past(f"table {self.table!r}'s cell count", self.rows * self.n_columns,
                                              "max_cells"))
        if self.bytes > _current.max_table_mb * MB:
            raise SourceError(self.path, past(f"table {self.table!r}'s values (MB)", self.bytes / MB, "max_table_mb"))


MB = 1024 * 1024

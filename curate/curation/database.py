"""The Database record: related tables with primary and foreign keys, declared or inferred."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from curate.curation.hashing import content_hash

KeyOrigin = Literal["declared", "inferred"]


@dataclass(frozen=True, slots=True)
class PrimaryKey:
    table: str
    columns: tuple[str, ...]
    origin: KeyOrigin = "declared"
    confidence: float = 1.0
    evidence: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"table": self.table, "columns": list(self.columns), "origin": self.origin,
                "confidence": self.confidence, "evidence": self.evidence}


@dataclass(frozen=True, slots=True)
class ForeignKey:
    """`table.columns` references `ref_table.ref_columns`."""

    table: str
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]
    origin: KeyOrigin = "declared"
    confidence: float = 1.0
    evidence: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"table": self.table, "columns": list(self.columns), "ref_table": self.ref_table,
                "ref_columns": list(self.ref_columns), "origin": self.origin,
                "confidence": self.confidence, "evidence": self.evidence}


@dataclass(frozen=True, slots=True)
class Database:
    """A named set of tables. `tables` maps table name -> Table id (the Tables live in the tables set)."""

    name: str
    tables: tuple[tuple[str, str], ...]  # (table name, table id), in schema order
    primary_keys: tuple[PrimaryKey, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    source: str = ""
    path: str = ""
    licence: str = ""
    id: str = field(default="")

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", "db-" + content_hash(
                "database", self.name, [list(t) for t in self.tables],
                [k.as_dict() for k in self.primary_keys], [k.as_dict() for k in self.foreign_keys]))

    @property
    def table_names(self) -> list[str]:
        return [name for name, _ in self.tables]

    def table_id(self, name: str) -> str:
        return dict(self.tables)[name]

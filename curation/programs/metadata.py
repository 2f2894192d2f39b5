"""Metadata programs: the answer is a field of a table record (caption, column names).

Text: {"table": <table id>, "field": "caption" | "columns", "index": <column index, optional>}.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from curation.programs import ProgramError

if TYPE_CHECKING:  # pragma: no cover
    from curation.table import Table


class MetadataRunner:
    def run(self, text: str, tables: list["Table"]) -> Any:
        spec = json.loads(text)
        table = next((t for t in tables if t.id == spec.get("table")), None)
        if table is None:
            raise ProgramError(f"metadata program names table {spec.get('table')!r}, which the sample does not carry")
        field = spec.get("field")
        if field == "caption":
            return table.caption or None
        if field == "columns":
            index = spec.get("index")
            return table.columns if index is None else table.columns[index]
        raise ProgramError(f"unknown metadata field {field!r}")

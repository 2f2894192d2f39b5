"""Metadata programs: the answer is a field of a table record (caption, column names, header tree).

Text: {"table": <table id>, "field": "caption" | "columns", "index": <column index, optional>}, or
{"table": ..., "field": "children", "axis": "R" | "C", "path": [labels from the top]}: the labels
directly under a header node, in the order the table shows them (a Structure Comprehending gold
that follows a swap of sibling blocks).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from curate.curation.programs import ProgramError, program_kind

if TYPE_CHECKING:  # pragma: no cover
    from curate.curation.table import Table


@program_kind("metadata")
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
        if field == "children":
            from curate.curation.header_tree import children_labels

            labels = children_labels(table.header, spec.get("axis", "R"), spec.get("path", []))
            if labels is None:
                raise ProgramError(f"no {spec.get('axis')} header node at path {spec.get('path')!r}")
            return labels
        raise ProgramError(f"unknown metadata field {field!r}")

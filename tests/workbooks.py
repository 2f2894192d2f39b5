"""Small real .xlsx files for the tests of how a sheet is read: rows written as given, some bold, some merged."""

from __future__ import annotations

from pathlib import Path

import openpyxl
from openpyxl.styles import Font


def workbook(path: Path, rows: list[list], bold_rows: tuple[int, ...] = (), merges: tuple[str, ...] = ()) -> Path:
    """`rows` on the first sheet; `bold_rows` (1-based) in bold; `merges` ("B1:C1") merged."""
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in rows:
        ws.append(row)
    for r in bold_rows:
        for cell in ws[r]:
            cell.font = Font(bold=True)
    for m in merges:
        ws.merge_cells(m)
    wb.save(path)
    return path

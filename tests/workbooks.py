"""Small real .xlsx files for the tests of how a sheet is read: rows written as given, some bold, some merged."""

from __future__ import annotations

from pathlib import Path

import openpyxl
from openpyxl.styles import Font


def workbook(path: Path, rows: list[list], bold_rows: tuple[int, ...] = (), merges: tuple[str, ...] = (),
             formats: dict[str, str] | None = None) -> Path:
    """`rows` on the first sheet; `bold_rows` (1-based) in bold; `merges` ("B1:C1") merged;
    `formats` a number format per cell or range ({"B2:B4": "#,##0.00"})."""
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in rows:
        ws.append(row)
    for r in bold_rows:
        for cell in ws[r]:
            cell.font = Font(bold=True)
    for m in merges:
        ws.merge_cells(m)
    for where, number_format in (formats or {}).items():
        cells = ws[where]
        for row in cells if isinstance(cells, tuple) else ((cells,),):
            for cell in row if isinstance(row, tuple) else (row,):
                cell.number_format = number_format
    wb.save(path)
    return path

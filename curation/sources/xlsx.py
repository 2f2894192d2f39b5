"""Excel workbooks: every sheet, merged cells, indentation, notes, cached formula values."""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path
from typing import Iterator

from curation.sources.errors import SourceError
from curation.sources.grid import Grid, NoGrid, grid_to_table, split_tables
from curation.table import Provenance, Table


def read(path: str, skipped: list[dict] | None = None) -> Iterator[Table]:
    """One Table per sheet that holds a grid; sheets without one are listed in `skipped`."""
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    if Path(path).stat().st_size == 0:
        raise SourceError(path, "empty file")
    try:
        # data_only: formulas come back as the values Excel cached when it last saved the file
        with warnings.catch_warnings():  # "extension is not supported": formatting we do not use
            warnings.simplefilter("ignore", UserWarning)
            workbook = openpyxl.load_workbook(path, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError, ValueError) as e:
        raise SourceError(path, f"not a readable .xlsx workbook ({type(e).__name__}: {e})") from None
    stem = Path(path).stem
    found = 0
    for sheet in workbook.worksheets:
        base = stem if len(workbook.worksheets) == 1 else f"{stem} / {sheet.title}"
        parts = split_tables(sheet_grid(sheet))
        for k, grid in enumerate(parts):
            name = base if len(parts) == 1 else f"{base} #{k + 1}"
            try:
                table = grid_to_table(grid, name, Provenance(source="xlsx", path=path, sheet=sheet.title))
            except NoGrid as e:
                if skipped is not None:
                    skipped.append({"path": path, "sheet": sheet.title, "reason": f"sheet has no grid: {e}"})
                continue
            found += 1
            yield table
    if not found:
        raise SourceError(path, "no sheet holds a grid of cells")


def sheet_grid(sheet) -> Grid:  # type: ignore[no-untyped-def]
    min_row, min_col = sheet.min_row, sheet.min_column
    values: list[list] = []
    indents: dict[tuple[int, int], int] = {}
    for r, row in enumerate(sheet.iter_rows(min_row=min_row, max_row=sheet.max_row,
                                            min_col=min_col, max_col=sheet.max_column)):
        out = []
        for c, cell in enumerate(row):
            out.append(cell.value)
            if cell.value is not None and cell.alignment is not None and cell.alignment.indent:
                indents[(r, c)] = int(cell.alignment.indent)
        values.append(out)
    merges = []
    for rng in sheet.merged_cells.ranges:
        merges.append((rng.min_row - min_row, rng.min_col - min_col, rng.max_row - min_row, rng.max_col - min_col))
    return Grid(values=values, merges=merges, indents=indents, origin=(min_row - 1, min_col - 1))

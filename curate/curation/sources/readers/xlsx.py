"""Excel workbooks: every sheet, merged cells, indentation, notes, cached formula values."""

from __future__ import annotations

import datetime as dt
import re
import warnings
import zipfile
from pathlib import Path
from typing import Any, Iterator

from curate.curation.body import cell_text
from curate.curation.sources.errors import SourceError
from curate.curation.sources.grid import Grid, NoGrid, grid_to_table, split_tables
from curate.curation.sources.numfmt import display, shown_places
from curate.curation.sources.readers import reader
from curate.curation.sources.side_by_side import side_by_side
from curate.curation.table import Provenance, Table


@reader("xlsx", extensions=(".xlsx", ".xlsm"))
def read(path: str, skipped: list[dict] | None = None) -> Iterator[Table]:
    """One Table per sheet that holds a grid; sheets without one are listed in `skipped`."""
    found = 0
    for sheet, parts in sheet_tables(path):
        for _, table in parts:
            if isinstance(table, NoGrid):
                if skipped is not None:
                    skipped.append({"path": path, "sheet": sheet, "reason": f"sheet has no grid: {table}"})
                continue
            if table.n_rows == 0:  # a header with nothing under it: said, never dropped silently
                if skipped is not None:
                    skipped.append({"path": path, "sheet": sheet, "reason": f"no body rows under the header at "
                                    f"{table.provenance.cell_range} ({table.n_cols} columns): every row read as "
                                    f"header, title or notes"})
                continue
            found += 1
            yield table
    if not found:
        raise SourceError(path, "no sheet holds a grid of cells")


def sheet_tables(path: str, looks: bool = False, apart: bool = True
                 ) -> Iterator[tuple[str, list[tuple[Grid, Table | NoGrid]]]]:
    """Per sheet: its tables, each as (grid, Table), or (grid, NoGrid) where the cells hold none.
    Tables stacked down the sheet are always apart; with `apart`, so are tables set side by side
    (`side_by_side`), and a unit line joins the caption (`grid.caption_and_notes`). The structure
    categories read the sheet as it is laid out (`apart=False`): one header block repeated side by
    side is one of their signs, and so is a unit stated above the table."""
    workbook = open_workbook(path)
    stem = Path(path).stem
    for sheet in workbook.worksheets:
        base = stem if len(workbook.worksheets) == 1 else f"{stem} / {sheet.title}"
        whole = sheet_grid(sheet, looks)
        blocks = side_by_side(whole) if apart else [whole]
        grids = [split_tables(block) for block in blocks]
        count = sum(len(g) for g in grids)
        parts: list[tuple[Grid, Table | NoGrid]] = []
        for stacked in grids:  # each block's stacked tables under its own title
            block: list[tuple[Grid, Table | NoGrid]] = []
            for grid in stacked:
                name = base if count == 1 else f"{base} #{len(parts) + len(block) + 1}"
                try:
                    block.append((grid, grid_to_table(grid, name, Provenance(source="xlsx", path=path, sheet=sheet.title),
                                                       units_in_caption=apart)))
                except NoGrid as e:
                    block.append((grid, e))
            parts += with_the_sheet_title(block)
        yield sheet.title, parts


def with_the_sheet_title(parts: list[tuple[Grid, Table | NoGrid]]) -> list[tuple[Grid, Table | NoGrid]]:
    """Tables stacked on one sheet under one title: a later table with no caption of its own takes the
    first one's, which is the sheet's title (productivity-table01's second and third blocks are
    revisions too, as the title above the first says; without it their figures read as growth)."""
    tables = [t for _, t in parts if isinstance(t, Table)]
    title = tables[0].caption if tables else ""
    if not title:
        return parts
    return [(g, t.replace(caption=title) if isinstance(t, Table) and not t.caption else t) for g, t in parts]


def open_workbook(path: str):  # type: ignore[no-untyped-def]
    """The workbook with the values Excel cached for its formulas, or a SourceError saying why not."""
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    if Path(path).stat().st_size == 0:
        raise SourceError(path, "empty file")
    _check_unpacked_size(path)
    try:
        # data_only: formulas come back as the values Excel cached when it last saved the file
        with warnings.catch_warnings():  # "extension is not supported": formatting we do not use
            warnings.simplefilter("ignore", UserWarning)
            return openpyxl.load_workbook(path, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError, ValueError) as e:
        raise SourceError(path, f"not a readable .xlsx workbook ({type(e).__name__}: {e})") from None


def _check_unpacked_size(path: str) -> None:
    """A workbook is a zip: refuse one that would unpack past the limit (a zip bomb) before opening it."""
    from curate.curation.sources.limits import current, past

    try:
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise SourceError(path, f"not a readable .xlsx workbook ({type(e).__name__}: {e})") from None
    if unpacked > current().max_uncompressed_mb * 1024 * 1024:
        raise SourceError(path, past("its unpacked size (MB)", unpacked / 1024 / 1024, "max_uncompressed_mb"))


def sheet_grids(path: str) -> Iterator[tuple[str, Grid]]:
    """Each sheet's whole used area with merges, shown texts, fills and bold (renderings)."""
    for sheet in open_workbook(path).worksheets:
        yield sheet.title, sheet_grid(sheet, looks=True)


def sheet_grid(sheet, looks: bool = False) -> Grid:  # type: ignore[no-untyped-def]
    """The sheet's cells, indents and bold; with `looks`, how the sheet shows them too: the text
    a number format makes, background colours, comments (structure detection, renderings)."""
    min_row, min_col = sheet.min_row, sheet.min_column
    values: list[list] = []
    indents: dict[tuple[int, int], int] = {}
    fills: dict[tuple[int, int], str] = {}
    bold: set[tuple[int, int]] = set()
    texts: dict[tuple[int, int], str] = {}
    comments: dict[tuple[int, int], str] = {}
    for r, row in enumerate(sheet.iter_rows(min_row=min_row, max_row=sheet.max_row,
                                            min_col=min_col, max_col=sheet.max_column)):
        out = []
        for c, cell in enumerate(row):
            out.append(as_shown_number(as_shown_date(cell.value, cell.number_format), cell.number_format))
            if looks and cell.value is not None and not isinstance(cell.value, str):
                shown = display(cell.value, cell.number_format)
                if shown != cell_text(cell.value):
                    texts[(r, c)] = shown
            if cell.value is not None and cell.alignment is not None and cell.alignment.indent:
                indents[(r, c)] = int(cell.alignment.indent)
            if cell.value is not None and cell.font is not None and cell.font.bold:
                bold.add((r, c))  # bold group rows are a row hierarchy: read always
            if looks and cell.value is not None:
                colour = background(cell)
                if colour:
                    fills[(r, c)] = colour
            if looks and cell.comment is not None and cell.comment.text.strip():
                comments[(r, c)] = cell.comment.text.strip()
        values.append(out)
    merges = []
    for rng in sheet.merged_cells.ranges:
        merges.append((rng.min_row - min_row, rng.min_col - min_col, rng.max_row - min_row, rng.max_col - min_col))
    conditional = conditional_fills(sheet, values, min_row, min_col) if looks else set()
    return Grid(values=values, merges=merges, indents=indents, origin=(min_row - 1, min_col - 1), fills=fills,
                bold=bold, display=texts, comments=comments, conditional=conditional)


TIME_TOKENS = re.compile(r"h|s|am/pm|a/p", re.IGNORECASE)
FORMAT_LITERALS = re.compile(r'"[^"]*"|\\.|\[(?![hms]+\])[^\]]*\]', re.IGNORECASE)  # text, locales, colours; not [h]


def as_shown_date(value: Any, number_format: str | None) -> Any:
    """A stored date-time whose number format shows no time ("mm-dd-yy") is the date the sheet
    shows: the hours a system stored with it (07:00 on some rows, midnight on others) are no part
    of the value a reader sees. Other values are returned as they are."""
    if not isinstance(value, dt.datetime) or not number_format:
        return value
    if number_format.strip().lower() == "general" or TIME_TOKENS.search(FORMAT_LITERALS.sub("", number_format)):
        return value
    return value.date()


def as_shown_number(value: Any, number_format: str | None) -> Any:
    """A stored figure at the precision its number format shows: a sheet that shows 12258.36
    means 12258.36, and the float behind it (12258.3560606061, a formula's average) is no part of
    what a reader sees, nor of a gold computed from it. Rounded as Excel rounds (halves away from
    zero); formats that fix no precision (General, text, thousands) leave the value as it is."""
    if not isinstance(value, float) or value != value or value in (float("inf"), float("-inf")):
        return value
    places = shown_places(number_format)
    if places is None or value == round(value, places):
        return value
    from decimal import ROUND_HALF_UP, Decimal

    shown = float(Decimal(repr(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))
    return int(shown) if places == 0 else shown


def conditional_fills(sheet, values: list[list], min_row: int, min_col: int) -> set[tuple[int, int]]:  # type: ignore[no-untyped-def]
    """The filled cells that a conditional format with a background colour covers: colours a
    person sees on the cells that meet its rule (which ones is the spreadsheet's to compute)."""
    out: set[tuple[int, int]] = set()
    for cf in sheet.conditional_formatting:
        if not any(rule.dxf is not None and rule.dxf.fill is not None and _dxf_coloured(rule.dxf.fill)
                   for rule in cf.rules):
            continue
        for rng in cf.sqref.ranges:
            for row in range(max(rng.min_row, min_row), min(rng.max_row, min_row + len(values) - 1) + 1):
                cells = values[row - min_row]
                for col in range(max(rng.min_col, min_col), min(rng.max_col, min_col + len(cells) - 1) + 1):
                    if cells[col - min_col] is not None:
                        out.add((row - min_row, col - min_col))
    return out


def _dxf_coloured(fill) -> bool:  # type: ignore[no-untyped-def]
    for colour in (getattr(fill, "bgColor", None), getattr(fill, "fgColor", None)):
        if colour is None:
            continue
        if colour.type == "rgb" and isinstance(colour.rgb, str) and colour.rgb.upper() not in WHITE:
            return True
        if colour.type in ("theme", "indexed") and not (colour.type == "indexed" and colour.indexed in (9, 64)):
            return True
    return False


WHITE = ("FFFFFFFF", "00FFFFFF", "00000000")


def background(cell) -> str:  # type: ignore[no-untyped-def]
    """A solid fill's colour ("FFC7CE", "theme 4", "indexed 22"), or "" for none or white."""
    fill = cell.fill
    if fill is None or fill.fill_type != "solid" or fill.fgColor is None:
        return ""
    colour = fill.fgColor
    if colour.type == "rgb":
        return "" if not isinstance(colour.rgb, str) or colour.rgb.upper() in WHITE else colour.rgb[-6:].upper()
    if colour.type == "theme":
        return "" if colour.theme == 0 and not colour.tint else f"theme {colour.theme}"
    if colour.type == "indexed":
        return "" if colour.indexed in (9, 64) else f"indexed {colour.indexed}"
    return ""


def sheet_structures(path: str, thresholds: dict[str, float] | None = None, everything: bool = False) -> list[dict]:
    """Per sheet: the complex structures of its tables, with evidence (`curate inspect`): those of
    the categories whose score over the whole spreadsheet reaches its threshold (structure.THRESHOLDS
    unless given), or with `everything` every sign found, however weak."""
    from curate.curation.sources.structure import Part, categories, sheet_structures as detect

    found = []
    for sheet, tables in sheet_tables(path, looks=True, apart=False):
        parts = [Part(grid, table) for grid, table in tables if not isinstance(table, NoGrid)]
        found.append((sheet, detect(parts) if parts else []))
    kept = set(categories([s for _, structures in found for s in structures], thresholds))
    return [{"sheet": sheet, "structures": [s.as_dict() for s in structures
                                            if everything or s.realhitbench_category in kept]}
            for sheet, structures in found]


def category_scores(path: str) -> dict[str, float]:
    """Each RealHiTBench category's score over a spreadsheet (structure.category_scores)."""
    from curate.curation.sources.structure import Part, category_scores as scores, sheet_structures as detect

    found = []
    for _, tables in sheet_tables(path, looks=True, apart=False):
        parts = [Part(grid, table) for grid, table in tables if not isinstance(table, NoGrid)]
        found += detect(parts) if parts else []
    return scores(found)


def compare_with_labels(folder: str, labels_file: str) -> dict[str, Any]:
    """Precision and recall per RealHiTBench category: the structures detected in each spreadsheet
    of `folder` (its `_swap` variants left out) against the category the authors gave it
    (`CompStrucCata` of the questions in `labels_file`, RealHiTBench's QA JSON)."""
    import json

    from curate.curation.sources.structure import REALHITBENCH_CATEGORIES

    data = json.loads(Path(labels_file).read_text())
    questions = next(iter(data.values())) if isinstance(data, dict) else data
    if not isinstance(questions, list) or not all(isinstance(q, dict) and "FileName" in q and "CompStrucCata" in q
                                                  for q in questions):
        raise ValueError(f"{labels_file}: expected RealHiTBench's questions, each with FileName and CompStrucCata")
    gold = {q["FileName"]: q["CompStrucCata"] for q in questions}
    detected: dict[str, list[str]] = {}
    for path in sorted(Path(folder).glob("*.xlsx")):
        if path.stem in gold:
            detected[path.stem] = sorted({s["realhitbench_category"] for sheet in sheet_structures(str(path))
                                          for s in sheet["structures"]})
    if not detected:
        raise ValueError(f"{folder}: no spreadsheet named in {labels_file}")
    out: dict[str, Any] = {}
    for category in REALHITBENCH_CATEGORIES:
        labelled = [t for t in detected if gold[t] == category]
        found = [t for t in detected if category in detected[t]]
        hits = [t for t in labelled if category in detected[t]]
        out[category] = {"labelled": len(labelled), "detected": len(found), "hits": len(hits),
                         "precision": len(hits) / len(found) if found else None,
                         "recall": len(hits) / len(labelled) if labelled else None,
                         "missed": sorted(set(labelled) - set(hits))}
    return {"folder": folder, "labels": labels_file, "tables": len(detected), "categories": out,
            "detected": detected}

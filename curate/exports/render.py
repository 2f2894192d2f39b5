"""Spreadsheets rendered as they look: HTML, LaTeX and PNG that keep the sheet's structure.

A hierarchical sheet loses meaning when flattened: merged header cells say which columns a
label governs, bold and coloured cells single some out, the title and notes around the grid
qualify the numbers. These renderings keep all of it, for prompts (HTML, LaTeX) and for
multimodal models (PNG): every cell as the sheet shows it (its number format applied: "$1,461.60",
"12.5%"), merged areas as rowspan/colspan (HTML) or \\multirow/\\multicolumn (LaTeX) or one box
(PNG), bold and fills kept, cell comments inside their cell (HTML) or marked (PNG). The flat serializations of a parsed Table are in `curate.exports.serialize`.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curate.curation.sources.grid import filled, is_number, used_width
from curate.exports.serialize import tex

if TYPE_CHECKING:  # pragma: no cover
    from curate.curation.sources.grid import Grid

FORMATS = ("html", "latex", "png")
HEX = re.compile(r"^[0-9A-F]{6}$")


@dataclass(frozen=True)
class Cell:
    """One box of the rendering: a cell, or a merged area from its top-left cell."""

    row: int
    col: int
    text: str
    rowspan: int = 1
    colspan: int = 1
    bold: bool = False
    fill: str = ""  # RRGGBB, when the sheet gives one
    number: bool = False  # right-aligned, as a spreadsheet shows numbers
    comment: str = ""


def layout(grid: "Grid", max_rows: int | None = None) -> tuple[list[list[Cell]], int, int]:
    """(rows of boxes, rows shown, columns): every row of the used area, a merged area once."""
    n_cols = max(used_width(grid.values), 1)
    n_rows = len(grid.values) if max_rows is None else min(len(grid.values), max_rows)
    anchor: dict[tuple[int, int], tuple[int, int]] = {}
    covered: set[tuple[int, int]] = set()
    for r0, c0, r1, c1 in grid.merges:
        if r0 >= n_rows or c0 >= n_cols:
            continue
        r1, c1 = min(r1, n_rows - 1), min(c1, n_cols - 1)
        anchor[(r0, c0)] = (r1 - r0 + 1, c1 - c0 + 1)
        covered |= {(r, c) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)} - {(r0, c0)}
    rows: list[list[Cell]] = []
    for r in range(n_rows):
        out = []
        for c in range(n_cols):
            if (r, c) in covered:
                continue
            rowspan, colspan = anchor.get((r, c), (1, 1))
            value = grid.values[r][c] if c < len(grid.values[r]) else None
            fill = grid.fills.get((r, c), "")
            out.append(Cell(r, c, grid.text(r, c) if filled(value) else "", rowspan, colspan, (r, c) in grid.bold,
                            fill if HEX.match(fill) else "", filled(value) and is_number(value),
                            grid.comments.get((r, c), "")))
        rows.append(out)
    return rows, n_rows, n_cols


# ---------------------------------------------------------------------------- HTML

def to_html(grid: "Grid", title: str = "") -> str:
    rows, _, _ = layout(grid)
    parts = ["<table>"]
    if title:
        parts.append(f"<caption>{html.escape(title)}</caption>")
    for row in rows:
        cells = []
        for cell in row:
            attrs = (f' rowspan="{cell.rowspan}"' if cell.rowspan > 1 else "") + (
                f' colspan="{cell.colspan}"' if cell.colspan > 1 else "")
            style = ";".join(s for s in ("font-weight:bold" if cell.bold else "",
                                         f"background:#{cell.fill}" if cell.fill else "",
                                         "text-align:right" if cell.number else "") if s)
            attrs += f' style="{style}"' if style else ""
            note = f'<div class="comment">{html.escape(cell.comment)}</div>' if cell.comment else ""
            cells.append(f"<td{attrs}>{note}{html.escape(cell.text)}</td>")
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</table>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------- LaTeX

def to_latex(grid: "Grid", title: str = "") -> str:
    """A tabular with \\multirow (package multirow) and \\multicolumn; bold as \\textbf, fills as
    \\cellcolor (package xcolor with the table option)."""
    rows, n_rows, n_cols = layout(grid)
    below: dict[tuple[int, int], int] = {}  # (row, col) under a \multirow: the width to leave empty
    for row in rows:
        for cell in row:
            for r in range(cell.row + 1, cell.row + cell.rowspan):
                below[(r, cell.col)] = cell.colspan
    lines = ["% \\usepackage{multirow} \\usepackage[table]{xcolor}"]
    if title:
        lines.append(f"% {tex(title)}")
    lines += [r"\begin{tabular}{" + "l" * n_cols + "}", r"\hline"]
    for r, row in enumerate(rows):
        by_col = {cell.col: cell for cell in row}
        parts, c = [], 0
        while c < n_cols:
            if (r, c) in below:
                width = below[(r, c)]
                parts.append(rf"\multicolumn{{{width}}}{{l}}{{}}" if width > 1 else "")
                c += width
                continue
            cell = by_col.get(c)
            if cell is None:  # hidden by a merge that layout() clipped at the edge of the used area
                parts.append("")
                c += 1
                continue
            body = tex(cell.text)
            if cell.bold and body:
                body = rf"\textbf{{{body}}}"
            if cell.fill:
                body = rf"\cellcolor[HTML]{{{cell.fill}}}" + body
            if cell.rowspan > 1:
                body = rf"\multirow{{{cell.rowspan}}}{{*}}{{{body}}}"
            if cell.colspan > 1:
                body = rf"\multicolumn{{{cell.colspan}}}{{l}}{{{body}}}"
            parts.append(body)
            c += cell.colspan
        lines.append(" & ".join(parts) + r" \\")
    lines += [r"\hline", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- PNG

PADDING = 6
MAX_CELL_WIDTH = 320  # pixels; longer texts wrap
FONT_SIZE = 14


@dataclass(frozen=True)
class Picture:
    """A PNG rendering and where each box landed, so a reader (or a test) can find a cell."""

    png: bytes
    size: tuple[int, int]
    boxes: dict[tuple[int, int], tuple[int, int, int, int]]  # (row, col) -> (x0, y0, x1, y1)
    rows_shown: int
    rows_total: int


def _fonts() -> tuple[Any, Any]:
    from matplotlib import font_manager
    from PIL import ImageFont

    regular = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"))
    bold = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans", weight="bold"))
    return ImageFont.truetype(regular, FONT_SIZE), ImageFont.truetype(bold, FONT_SIZE)


def _wrap(text: str, font: Any, width: int) -> list[str]:
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if font.getlength(candidate) <= width or not line:
                line = candidate
            else:
                lines.append(line)
                line = word
        lines.append(line)
    return lines


def to_png(grid: "Grid", title: str = "", max_rows: int = 200) -> Picture:
    """The sheet drawn as a spreadsheet shows it: grid lines around each cell and merged area, bold
    and fills kept, numbers right-aligned; `max_rows` rows at most, with a line saying how many more."""
    import io

    from PIL import Image, ImageDraw

    regular, bold = _fonts()
    rows, n_rows, n_cols = layout(grid, max_rows)
    line_height = int(FONT_SIZE * 1.35)
    # a text with empty cells to its right runs over them, as in a spreadsheet: it does not widen its column
    reach: dict[tuple[int, int], int] = {}
    run_over: set[tuple[int, int]] = set()  # empty cells a text runs over: drawn as part of its box
    for row in rows:
        for k, cell in enumerate(row):
            end = cell.col + cell.colspan
            if cell.text and not cell.number and cell.colspan == 1 and cell.rowspan == 1:
                nxt = row[k + 1:]
                while nxt and not nxt[0].text and nxt[0].rowspan == 1 and not nxt[0].fill:
                    end = nxt[0].col + nxt[0].colspan
                    run_over.add((nxt[0].row, nxt[0].col))
                    nxt = nxt[1:]
            reach[(cell.row, cell.col)] = end
    widths = [24] * n_cols
    for row in rows:
        for cell in row:
            if cell.colspan == 1 and cell.text and reach[(cell.row, cell.col)] == cell.col + 1:
                font = bold if cell.bold else regular
                longest = max(font.getlength(t) for t in cell.text.split("\n"))
                widths[cell.col] = max(widths[cell.col], min(math.ceil(longest) + 2 * PADDING, MAX_CELL_WIDTH))
    wrapped: dict[tuple[int, int], list[str]] = {}
    heights = [line_height + 2 * PADDING] * n_rows
    for row in rows:
        for cell in row:
            width = sum(widths[cell.col:reach[(cell.row, cell.col)]]) - 2 * PADDING
            lines = _wrap(cell.text, bold if cell.bold else regular, width) if cell.text else []
            wrapped[(cell.row, cell.col)] = lines
            if cell.rowspan == 1:
                heights[cell.row] = max(heights[cell.row], len(lines) * line_height + 2 * PADDING)
    top = line_height + 2 * PADDING if title else 0
    more = len(grid.values) - n_rows
    footer = line_height + 2 * PADDING if more > 0 else 0
    xs = [0]
    for w in widths:
        xs.append(xs[-1] + w)
    ys = [top]
    for h in heights:
        ys.append(ys[-1] + h)
    size = (xs[-1] + 1, ys[-1] + footer + 1)
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    if title:
        draw.text((PADDING, PADDING), title, fill="black", font=bold)
    boxes = {}
    for row in rows:
        for cell in row:
            x0, y0 = xs[cell.col], ys[cell.row]
            x1, y1 = xs[cell.col + cell.colspan], ys[cell.row + cell.rowspan]
            boxes[(cell.row, cell.col)] = (x0, y0, x1, y1)
            if (cell.row, cell.col) in run_over:
                continue
            draw.rectangle((x0, y0, xs[reach[(cell.row, cell.col)]], y1), fill=f"#{cell.fill}" if cell.fill else "white",
                           outline="#9A9A9A")
            if cell.comment:  # the red corner a spreadsheet shows on a commented cell
                draw.polygon([(x1 - 7, y0), (x1, y0), (x1, y0 + 7)], fill="#D00000")
    for row in rows:  # texts after every box, so one running over empty neighbours stays visible
        for cell in row:
            x0, y0, x1, y1 = boxes[(cell.row, cell.col)]
            x1 = xs[reach[(cell.row, cell.col)]]
            lines = wrapped[(cell.row, cell.col)]
            font = bold if cell.bold else regular
            y = y0 + (y1 - y0 - len(lines) * line_height) // 2
            for text in lines:
                x = x1 - PADDING - font.getlength(text) if cell.number else x0 + PADDING
                draw.text((x, y), text, fill="black", font=font)
                y += line_height
    if more > 0:
        draw.text((PADDING, ys[-1] + PADDING), f"... {more:,} more rows", fill="#555555", font=regular)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return Picture(out.getvalue(), size, boxes, n_rows, len(grid.values))


def contact_sheet(pictures: list[Picture], width: int = 1400) -> bytes:
    """Several renderings (each drawn with its title) on one page, scaled down to fit `width`."""
    import io

    from PIL import Image

    tiles = []
    for picture in pictures:
        image = Image.open(io.BytesIO(picture.png)).convert("RGB")
        if image.width > width:
            image = image.resize((width, max(1, image.height * width // image.width)), Image.LANCZOS)
        tiles.append(image)
    gap = 3 * PADDING
    sheet = Image.new("RGB", (width, sum(t.height + gap for t in tiles)), "white")
    y = 0
    for tile in tiles:
        sheet.paste(tile, (0, y))
        y += tile.height + gap
    out = io.BytesIO()
    sheet.save(out, format="PNG")
    return out.getvalue()


# ---------------------------------------------------------------------------- workbooks

SUFFIXES = {"html": ".html", "latex": ".tex", "png": ".png"}


def _writer(fmt: str, max_rows: int = 200) -> Any:
    """The rendering function for `fmt`, each called as writer(grid, title=...)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown rendering {fmt!r}; known: {', '.join(FORMATS)}")
    if fmt == "png":
        return lambda grid, title="": to_png(grid, title=title, max_rows=max_rows)
    return to_html if fmt == "html" else to_latex


def render_workbook(path: str, fmt: str) -> list[tuple[str, Any]]:
    """(sheet name, rendering) for every sheet of an .xlsx: text for html/latex, a Picture for png."""
    from curate.curation.sources.readers.xlsx import sheet_grids

    writer = _writer(fmt)
    return [(sheet, writer(grid)) for sheet, grid in sheet_grids(path)]


def render_files(files: list[str] | tuple[str, ...], fmt: str, out_dir: str | None = None, contact: str | None = None,
                 max_rows: int = 200) -> dict[str, list[str]]:
    """`curate render`: every sheet of every file, written as FILE[-SHEET].html|tex|png into `out_dir`
    (HTML and LaTeX returned as text without it), PNGs also stacked into `contact`. A workbook that
    cannot be read is skipped with the reason; the others are still rendered."""
    from pathlib import Path

    from curate.curation.sources.errors import SourceError
    from curate.curation.sources.readers.xlsx import sheet_grids

    writer = _writer(fmt, max_rows)
    done: dict[str, list[str]] = {"written": [], "text": [], "skipped": []}
    pictures = []
    for file in files:
        try:
            grids = list(sheet_grids(file))
        except SourceError as e:
            done["skipped"].append(str(e))
            continue
        for sheet, grid in grids:
            name = Path(file).stem if len(grids) == 1 else f"{Path(file).stem}-{sheet}"
            rendering = writer(grid, title=name)
            if isinstance(rendering, Picture):
                pictures.append(rendering)
            output: str | bytes = rendering.png if isinstance(rendering, Picture) else rendering
            if not out_dir:
                if isinstance(output, str):
                    done["text"].append(output)
                continue
            target = Path(out_dir) / (re.sub(r"[^\w.-]+", "_", name) + SUFFIXES[fmt])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(output) if isinstance(output, bytes) else target.write_text(output)
            done["written"].append(str(target))
    if contact and pictures:
        Path(contact).parent.mkdir(parents=True, exist_ok=True)
        Path(contact).write_bytes(contact_sheet(pictures))
        done["written"].append(f"{contact} ({len(pictures)} renderings)")
    return done

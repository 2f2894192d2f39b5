"""HTML tables: rowspan/colspan become merged cells, <thead> and <th> rows become header rows."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Iterator

from curate.curation.sources.errors import SourceError
from curate.curation.sources.grid import Grid, NoGrid, grid_to_table
from curate.curation.sources.readers import reader
from curate.curation.sources.text import read_text
from curate.curation.table import Provenance, Table


class _Cell:
    __slots__ = ("text", "rowspan", "colspan", "header", "indent")

    def __init__(self, header: bool, rowspan: int, colspan: int, indent: int) -> None:
        self.text: list[str] = []
        self.header, self.rowspan, self.colspan, self.indent = header, rowspan, colspan, indent


class _TableParser(HTMLParser):
    """Collects every top-level <table> as rows of cells (a nested table's text joins its cell)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[dict] = []
        self.depth = 0
        self.caption: list[str] | None = None
        self.in_head = False
        self.cell: _Cell | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.depth += 1
            if self.depth == 1:
                self.tables.append({"rows": [], "head_rows": 0, "caption": ""})
            return
        if self.depth != 1:
            return
        t = self.tables[-1]
        if tag == "thead":
            self.in_head = True
        elif tag == "caption":
            self.caption = []
        elif tag == "tr":
            t["rows"].append([])
            if self.in_head:
                t["head_rows"] += 1
        elif tag in ("td", "th"):
            if not t["rows"]:
                t["rows"].append([])
            style = (a.get("style") or "").replace(" ", "")
            indent = 0
            if "padding-left:" in style or "text-indent:" in style:
                indent = 1
            self.cell = _Cell(tag == "th", _span(a.get("rowspan")), _span(a.get("colspan")), indent)
            t["rows"][-1].append(self.cell)
        elif tag == "br" and self.cell is not None:
            self.cell.text.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.depth = max(0, self.depth - 1)  # as a browser does, a stray </table> closes nothing
        elif self.depth == 1:
            if tag == "thead":
                self.in_head = False
            elif tag == "caption" and self.caption is not None:
                self.tables[-1]["caption"] = " ".join("".join(self.caption).split())
                self.caption = None
            elif tag in ("td", "th"):
                self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.text.append(data)
        elif self.caption is not None:
            self.caption.append(data)


def _span(value: str | None) -> int:
    try:
        return max(1, min(int(value or 1), 1000))
    except ValueError:
        return 1


class GridTooLarge(ValueError):
    """A table whose spans or cells are past the limits of [ingest]."""


def to_grid(rows: list[list[_Cell]], head_rows: int) -> Grid:
    """Lay cells out on a grid, honouring rowspan and colspan; spans are checked against the
    limits before any cell is placed (60 cells spanning 1000 x 1000 would be 60 M cells)."""
    from curate.curation.sources.limits import current, past

    limits = current()
    merged = sum(cell.rowspan * cell.colspan for row in rows for cell in row if cell.rowspan * cell.colspan > 1)
    if merged > limits.max_merged_cells:
        raise GridTooLarge(past("the area its merged cells cover", merged, "max_merged_cells"))
    width = max((sum(cell.colspan for cell in row) for row in rows), default=0)
    height = len(rows) + max((cell.rowspan for row in rows for cell in row), default=1)
    if width * height > limits.max_cells:
        raise GridTooLarge(past("its grid's cell count", width * height, "max_cells"))
    occupied: dict[tuple[int, int], bool] = {}
    placed: list[tuple[int, int, _Cell]] = []
    for r, row in enumerate(rows):
        c = 0
        for cell in row:
            while occupied.get((r, c)):
                c += 1
            placed.append((r, c, cell))
            for dr in range(cell.rowspan):
                for dc in range(cell.colspan):
                    occupied[(r + dr, c + dc)] = True
            c += cell.colspan
    n_rows = max((r + cell.rowspan for r, _, cell in placed), default=0)
    n_cols = max((c + cell.colspan for _, c, cell in placed), default=0)
    values: list[list] = [[None] * n_cols for _ in range(n_rows)]
    merges, indents = [], {}
    for r, c, cell in placed:
        text = " ".join("".join(cell.text).split())
        values[r][c] = text or None
        if cell.rowspan > 1 or cell.colspan > 1:
            merges.append((r, c, r + cell.rowspan - 1, c + cell.colspan - 1))
        if cell.indent:
            indents[(r, c)] = cell.indent
    if not head_rows:  # leading rows made only of <th> cells are header rows
        for row in rows:
            if row and all(cell.header for cell in row):
                head_rows += 1
            else:
                break
    return Grid(values=values, merges=merges, indents=indents, header_rows=head_rows or None)


@reader("html", extensions=(".html", ".htm"))
def read(path: str) -> Iterator[Table]:
    text, _ = read_text(path)
    parser = _TableParser()
    parser.feed(text)
    parser.close()
    if not parser.tables:
        raise SourceError(path, "no <table> in the HTML")
    stem = Path(path).stem
    found = 0
    for k, t in enumerate(parser.tables):
        name = stem if len(parser.tables) == 1 else f"{stem} #{k + 1}"
        try:
            table = grid_to_table(to_grid(t["rows"], t["head_rows"]), name,
                                  Provenance(source="html", path=path, sheet=f"table {k + 1}"))
        except NoGrid:
            continue
        except GridTooLarge as e:
            raise SourceError(path, f"table {k + 1}: {e}") from None
        if t["caption"] and not table.caption:
            table = table.replace(caption=t["caption"])
        found += 1
        yield table
    if not found:
        raise SourceError(path, "no <table> in the HTML holds a grid of cells")

"""From a grid of cells (a worksheet, an HTML table) to a Table with its header tree.

Spreadsheets put titles above the grid, notes below it, merged cells in multi-level column
headers, and row hierarchies in indentation, section rows or several stub columns. This
module finds each of these with a few explainable rules:

- the grid is the band of rows with two or more filled cells; single-cell rows above it are
  the caption and notes, single-cell rows below it are notes;
- header rows run from the top of the grid to the first row whose data cells are mostly
  numbers (a row of years counts as a header), extended to the bottom of any merged cell
  that starts in them; a source may declare them instead (HTML <thead>/<th>);
- every filled header cell becomes a column node (axis C) at its row's level, spanning its
  merged columns (or, unmerged, the blank cells right of it over its sub-headings); a leaf
  column's name joins the texts above it;
- row nodes (axis R) come from indentation, section rows (a stub cell with an empty row
  beside it) and bold group labels in the first column, or from leading text columns whose
  first column groups rows (merged, or left blank below a label). A plain first column adds
  no row nodes;
- blocks after blank rows join the table above when they read as more of its body, or as a
  labelled section under its shared header.

The parse of a table does not depend on where its blocks stand: RealHiTBench's `_swap`
sheets read as their originals with two blocks exchanged (tests/test_header_tree.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from curate.curation.body import _parse_number, cell_text, from_rows
from curate.curation.header_tree import flattened_names, grand_total, series_codes, total_of
from curate.curation.sources.evidence import is_header, row_signs
from curate.curation.table import HeaderNode, Provenance, Table, flat_header

Merge = tuple[int, int, int, int]  # r0, c0, r1, c1 inclusive, 0-based


class NoGrid(ValueError):
    """The cells hold no table (nothing filled, or no row with two or more cells)."""


@dataclass
class Grid:
    values: list[list[Any]]  # row-major; None for empty; a merged area keeps its value at top-left only
    merges: list[Merge] = field(default_factory=list)
    indents: dict[tuple[int, int], int] = field(default_factory=dict)
    header_rows: int | None = None  # declared by the source, counted from the grid's first row
    origin: tuple[int, int] = (0, 0)  # sheet row/column of values[0][0], for cell ranges
    fills: dict[tuple[int, int], str] = field(default_factory=dict)  # background colours, when read
    bold: set[tuple[int, int]] = field(default_factory=set)  # bold cells (XLSX always reads them)
    display: dict[tuple[int, int], str] = field(default_factory=dict)  # shown text where a format makes it differ
    comments: dict[tuple[int, int], str] = field(default_factory=dict)  # cell comments, when read
    conditional: set[tuple[int, int]] = field(default_factory=set)  # cells a conditional format fills, when read

    def text(self, r: int, c: int) -> str:
        """A cell as the sheet shows it: its formatted text, else its value as text."""
        shown = self.display.get((r, c))
        if shown is not None:
            return shown
        v = self.values[r][c] if c < len(self.values[r]) else None
        return "" if v is None else cell_text(v)


def filled(v: Any) -> bool:
    return v is not None and not (isinstance(v, str) and not v.strip())


def is_number(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    return isinstance(v, str) and _parse_number(v) is not None


# what statistical tables print in a numeric cell that has no number: suppressed, not available
PLACEHOLDERS = frozenset({"-", "--", "\u2013", "\u2014", "..", "...", "\u2026", "(na)", "(x)", "(d)", "(z)", "n/a"})


def is_numeric(v: Any) -> bool:
    """A number, or a placeholder standing where a number would be (a dash, "..")."""
    return is_number(v) or (isinstance(v, str) and v.strip().lower() in PLACEHOLDERS)


def _is_year(v: Any) -> bool:
    n = v if isinstance(v, (int, float)) and not isinstance(v, bool) else (_parse_number(v) if isinstance(v, str) else None)
    return n is not None and float(n).is_integer() and 1800 <= n <= 2100


def is_grid_row(row: list[Any], n_cols: int) -> bool:
    """Two or more filled cells; on a sheet wider than 3 columns, reaching past column B
    (so "Data owner: | ONS" lines above a wide table read as notes, not as the grid)."""
    used = [c for c, v in enumerate(row) if filled(v)]
    return len(used) >= 2 and (n_cols <= 3 or used[-1] >= 2)


def grid_rows(values: list[list[Any]]) -> set[int]:
    """The rows that belong to a grid: grid rows, less a lone one with just two cells far
    apart ("Table 8: ... | Contents", "Number of tables: | 5" far right): a title line with
    a link or a count beside it, not a table."""
    n_cols = used_width(values)
    rows = {r for r, row in enumerate(values) if is_grid_row(row, n_cols)}
    out = set()
    for r in rows:
        used = [c for c, v in enumerate(values[r]) if filled(v)]
        alone = blank_row(values, r - 1) and blank_row(values, r + 1)
        if not (alone and len(used) == 2 and used[1] - used[0] > 2):
            out.add(r)
    return out


def blank_row(values: list[list[Any]], r: int) -> bool:
    """Row r holds nothing, or lies outside the sheet."""
    return r < 0 or r >= len(values) or not any(filled(v) for v in values[r])


def used_width(values: list[list[Any]]) -> int:
    """Columns up to the last filled one (sheets often report empty trailing columns)."""
    return max((max((c for c, v in enumerate(row) if filled(v)), default=-1) for row in values), default=-1) + 1


def split_tables(grid: Grid) -> list[Grid]:
    """Several tables stacked on one sheet, separated by blank rows, as one Grid each.

    A block of grid rows after blank rows starts a new table when text rows (a title) stand
    between it and the previous table, or when it starts with a header rather than data; a
    table whose grid rows so far hold no data (only headers) always continues.
    """
    values = grid.values
    n_cols = used_width(values)
    in_grid = grid_rows(values)
    blocks: list[tuple[int, int, bool]] = []  # start, end, has grid rows
    r = 0
    while r < len(values):
        if blank_row(values, r):
            r += 1
            continue
        start = r
        while r < len(values) and not blank_row(values, r):
            r += 1
        blocks.append((start, r - 1, any(i in in_grid for i in range(start, r))))

    every_col = list(range(n_cols))
    covered = _covered(grid.merges)

    def data_row(i: int) -> bool:
        """Mostly figures, and not a row of column labels (years merged over their columns)."""
        cells = [v for v in values[i][1:] if filled(v)]
        return bool(cells) and sum(is_numeric(v) for v in cells) * 2 >= len(cells) and not is_header(
            row_signs(values, i, every_col, merges=grid.merges, bold=grid.bold, filled=filled))

    def typed_like(i: int, group: list[int]) -> bool:
        """Row i has numbers and reads like a body row of the group (text-heavy tables: id, group, value)."""
        kinds = _kinds(values, i, every_col, covered)
        return "n" in kinds and any(_kinds(values, j, every_col, covered) == kinds
                                    for j in range(group[0] + 1, group[1] + 1))

    def next_section(start: int, end: int, group: list[int]) -> bool:
        """The block is a label row over rows typed like the group's body, and the group's
        header carries no label of its own right on top of it: the header is shared, and the
        label heads the next section of the same table. (A label sitting on a header names
        that block, and the labels after it name tables of their own.)"""
        used = [c for c, v in enumerate(values[start]) if filled(v)]
        head = next((i for i in range(group[0], group[1] + 1) if i in in_grid), None)
        return (len(used) == 1 and start < end and head is not None
                and (blank_row(values, head - 1) or sectioned(group))
                and used[0] <= min(c for c, v in enumerate(values[head]) if filled(v)) and typed_like(start + 1, group))

    def sectioned(group: list[int]) -> bool:
        """The group's body already opens with a label row between its header and its figures:
        its blocks are sections under that header."""
        first = next((i for i in range(group[0], group[1] + 1) if data_row(i)), None)
        if first is None:
            return False
        above = [i for i in range(group[0], first) if not blank_row(values, i)]
        return (len(above) >= 2 and [c for c, v in enumerate(values[above[-1]]) if filled(v)] == [0]
                and any(i in in_grid for i in above[:-1]))

    groups: list[list[int]] = []  # [first row, last row, has data]
    pending_text: int | None = None
    for start, end, is_grid in blocks:
        if not is_grid:
            pending_text = start if pending_text is None else pending_text
            continue
        has_data = any(data_row(i) for i in range(start, end + 1))
        if groups and pending_text is None and (not groups[-1][2] or data_row(start) or typed_like(start, groups[-1])
                                                or next_section(start, end, groups[-1])):
            groups[-1][1], groups[-1][2] = end, groups[-1][2] or has_data
        else:
            groups.append([pending_text if pending_text is not None else start, end, has_data])
        pending_text = None
    if not groups:
        return [grid]
    if pending_text is not None:  # text after the last table: its notes
        groups[-1][1] = len(values) - 1
    groups[0][0] = 0  # text above the first table belongs to it
    out = []
    for first, last, _ in groups:
        merges = [(m[0] - first, m[1], m[2] - first, m[3]) for m in grid.merges if first <= m[0] and m[2] <= last]
        indents = {(rr - first, c): v for (rr, c), v in grid.indents.items() if first <= rr <= last}
        fills = {(rr - first, c): v for (rr, c), v in grid.fills.items() if first <= rr <= last}
        bold = {(rr - first, c) for rr, c in grid.bold if first <= rr <= last}
        display = {(rr - first, c): v for (rr, c), v in grid.display.items() if first <= rr <= last}
        comments = {(rr - first, c): v for (rr, c), v in grid.comments.items() if first <= rr <= last}
        conditional = {(rr - first, c) for rr, c in grid.conditional if first <= rr <= last}
        out.append(Grid(values=values[first:last + 1], merges=merges, indents=indents,
                        header_rows=grid.header_rows, origin=(grid.origin[0] + first, grid.origin[1]), fills=fills,
                        bold=bold, display=display, comments=comments, conditional=conditional))
    return out


def _covered(merges: list[Merge]) -> dict[tuple[int, int], Merge]:
    """Every cell of a merged area, mapped to its merge."""
    out: dict[tuple[int, int], Merge] = {}
    for m in merges:
        for r in range(m[0], m[2] + 1):
            for c in range(m[1], m[3] + 1):
                out[(r, c)] = m
    return out


def column_letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def grid_to_table(grid: Grid, name: str, provenance: Provenance, units_in_caption: bool = True) -> Table:
    """The grid's table. With `units_in_caption` (questions), a line giving the figures' unit joins
    the caption (`caption_and_notes`); without it the caption is the line nearest the grid, as the
    sheet lays it out (what the structure categories read)."""
    values = grid.values
    n_rows = len(values)
    n_cols = max((len(r) for r in values), default=0)
    cell = lambda r, c: values[r][c] if c < len(values[r]) else None  # noqa: E731
    merged_at = {(m[0], m[1]): m for m in grid.merges}
    covered = _covered(grid.merges)

    def width(r: int) -> int:
        return sum(1 for c in range(n_cols) if filled(cell(r, c)))

    rows_with_text = [r for r in range(n_rows) if width(r)]
    if not rows_with_text:
        raise NoGrid("no filled cells")
    in_grid = grid_rows(values)
    wide = [r for r in rows_with_text if r in in_grid]
    if not wide:
        raise NoGrid("no row with two or more filled cells")
    top, bottom = wide[0], wide[-1]
    # a merged cell spanning several (not all) columns right above the grid is a header level, and
    # so is a row whose every cell is merged that way or merged down into the grid (a stub title)
    while top > 0 and width(top - 1):
        cols_used = [c for c in range(n_cols) if any(filled(cell(r, c)) for r in range(top, bottom + 1))]
        merges = [merged_at.get((top - 1, c)) for c in range(n_cols) if filled(cell(top - 1, c))]
        across = [m for m in merges if m and m[3] > m[1] and not (m[1] <= cols_used[0] and m[3] >= cols_used[-1])]
        if across and all(m in across or (m and m[2] >= top) for m in merges):
            top -= 1
        else:
            break

    def row_text(r: int) -> str:
        return " ".join(cell_text(cell(r, c)) for c in range(n_cols) if filled(cell(r, c)))

    caption, notes = caption_and_notes([row_text(r) for r in rows_with_text if r < top],
                                       [row_text(r) for r in rows_with_text if r > bottom], units_in_caption)

    cols = [c for c in range(n_cols) if any(filled(cell(r, c)) for r in range(top, bottom + 1))]
    first_col = cols[0]

    # ---- header rows
    data_cols = cols[1:] if len(cols) > 1 else cols

    def numeric_row(r: int) -> bool:
        """Mostly numbers (or placeholders) beyond the stub: a body row."""
        cells = [cell(r, c) for c in data_cols if filled(cell(r, c))]
        return bool(cells) and sum(is_numeric(v) for v in cells) * 2 >= len(cells)

    if grid.header_rows is not None:
        first_body = min(max(top + grid.header_rows, top), bottom)
    else:
        first_body = None

        def header_like(r: int) -> bool:
            return is_header(row_signs(values, r, cols, merges=grid.merges, bold=grid.bold, filled=filled))

        for r in range(top, bottom + 1):
            cells = [cell(r, c) for c in data_cols if filled(cell(r, c))]
            m = covered.get((r, first_col))
            if not cells and r > top and filled(cell(r, first_col)) and (m is None or m[0] == m[2] == r):
                if header_like(r):
                    continue  # styled as the header (bold, its blank cells written): the stub's title
                first_body = r  # a label alone in the stub below the header: a section row heading the body
                break
            if numeric_row(r) and r < bottom and header_like(r):
                continue  # numbers that label columns (years, 1..24) above the body: a header
            if cells and r > top and r < bottom and any(is_number(v) for v in cells) and (
                    _kinds(values, r, cols, covered) == _kinds(values, r + 1, cols, covered)):
                first_body = r  # mostly text, but typed like the row below it: a body of categorical columns
                break
            if not numeric_row(r):
                continue
            first_body = r
            break
        if first_body is None:  # text only: the first row names the columns
            first_body = top + 1
        changed = True
        while changed:
            changed = False
            for m in grid.merges:  # a merged cell that starts in the header belongs to the header
                if top <= m[0] < first_body <= m[2] and m[2] < bottom:
                    first_body, changed = m[2] + 1, True
            last = max((r for r in range(top, first_body) if any(filled(cell(r, c)) for c in range(n_cols))), default=None)
            if last is not None and first_body < bottom and not numeric_row(first_body) and any(
                    m[0] == last and m[3] > m[1] and sum(filled(cell(first_body, c)) for c in range(m[1], m[3] + 1)) >= 2
                    for m in grid.merges):  # a group heading has sub-headings (two or more, and not figures)
                first_body, changed = first_body + 1, True
    header_rows = [r for r in range(top, first_body) if any(filled(cell(r, c)) for c in cols)]
    # title and form rows above the real header are no column-path level: "Label: value" pairs
    # (a form's "Project Name: | FACT's Kerala Chemical Plant"), or one text merged along the row
    # from the stub over most of the table (a title); a lone text above such rows is the form's title
    stripped = _title_and_form_rows(header_rows, n_cols, cell, merged_at, first_col)
    if stripped:
        removed = header_rows[:stripped]
        texts = [row_text(r) for r in removed]
        header_rows = header_rows[stripped:]
        top = header_rows[0]
        titles = [t for r, t in zip(removed, texts) if sum(filled(cell(r, c)) for c in range(n_cols)) == 1]
        if not caption and titles:
            caption = titles[0]
            texts.remove(caption)
        notes = tuple(list(notes) + texts)

    # ---- column header tree
    col_index = {c: j for j, c in enumerate(cols)}
    nodes: list[HeaderNode] = []
    for level, r in enumerate(header_rows):
        for c in cols:
            m = covered.get((r, c))
            if m is not None:
                if (m[0], m[1]) != (r, c) and not (m[0] < top and r == top and m[1] == c):
                    continue
                text = cell_text(cell(m[0], m[1]))
                span = [col_index[x] for x in cols if m[1] <= x <= m[3]]
                if text and span:
                    nodes.append(HeaderNode("C", level, span[0], span[-1], text))
            elif filled(cell(r, c)):
                end = _label_span(r, c, header_rows[:level], header_rows[level + 1:], cols, cell, covered)
                nodes.append(HeaderNode("C", level, col_index[c], col_index[end], cell_text(cell(r, c))))
    nodes = _wrapped_labels_joined(nodes, [filled(cell(r, first_col)) for r in header_rows],
                                   {(lv, col_index[c]) for lv, r in enumerate(header_rows) for c in cols if (r, c) in covered})
    nodes = _numbers_named_by_empty_stub(nodes, _text_column([cell(r, first_col) for r in range(first_body, bottom + 1)]))
    nodes, identifiers = _identifier_rows_out(nodes)
    if identifiers:
        notes = tuple(notes) + tuple(identifiers)
    text_columns = {col_index[c] for c in cols if _text_column([cell(r, c) for r in range(first_body, bottom + 1)])}
    nodes, titles = _titles_out(nodes, text_columns)
    if titles and not caption:
        caption, titles = titles[0], titles[1:]
    notes = tuple(notes) + tuple(titles)
    header_levels = len({n.level for n in nodes})
    names = flattened_names(nodes, len(cols))

    # ---- body (merged cells repeat their value over the area they cover)
    body_rows = [r for r in range(first_body, bottom + 1) if any(filled(cell(r, c)) for c in cols)]
    fill: dict[tuple[int, int], Any] = {}
    for m in grid.merges:
        if section_merge(m, first_col, data_cols):
            continue  # a label merged along its row from the stub over the figures: a section heading, said once
        if m[2] >= first_body:
            v = cell(m[0], m[1])
            for r in range(max(m[0], first_body), m[2] + 1):
                for c in range(m[1], m[3] + 1):
                    fill[(r, c)] = v
    rows = [[fill.get((r, c), cell(r, c)) for c in cols] for r in body_rows]
    periods = periods_completed([row[0] for row in rows])
    if periods:
        for row, label in zip(rows, periods):
            row[0] = label
    body_merges = any(m[2] >= first_body and m[0] <= bottom for m in grid.merges)

    vertical = {(r, c) for (r, c), m in covered.items() if m[2] > m[0]}
    depths = stub_indents([cell(r, first_col) for r in body_rows], [grid.indents.get((r, first_col), 0) for r in body_rows])
    for row in rows:  # a bullet is a mark of nesting (counted in the depths), not part of the label
        row[0] = without_bullet(row[0])
    row_nodes, row_structure = _row_header(rows, depths,
                                           [(r, first_col) in vertical for r in body_rows],
                                           [i > 0 and body_rows[i] > body_rows[i - 1] + 1 for i in range(len(body_rows))],
                                           [(r, first_col) in grid.bold for r in body_rows])
    row_nodes, rows = _heads_out_of_body(row_nodes, rows)
    structure = []
    if grid.merges:
        structure.append("merged_cells")
    if header_levels > 1:
        structure.append("multi_level_column_header")
    structure += row_structure
    if caption:
        structure.append("caption")
    if notes:
        structure.append("notes")
    if body_merges and "multi_column_row_header" not in structure:
        structure.append("merged_body_cells")

    body = from_rows(names, rows)
    r0, c0 = grid.origin
    cell_range = f"{column_letter(c0 + cols[0])}{r0 + top + 1}:{column_letter(c0 + cols[-1])}{r0 + bottom + 1}"
    if header_levels > 1 or any(n.end > n.start for n in nodes):  # levels, or a label merged over a group
        header = tuple(nodes) + tuple(row_nodes)
    else:  # one plain header row: the flat header from the (unique) column names
        header = flat_header(body.column_names) + tuple(row_nodes)
    return Table(name=name, caption=caption, body=body, header=header, notes=notes, structure=tuple(structure),
                 provenance=replace(provenance, cell_range=cell_range))


# a line that gives the unit of the figures: "[In thousands]", "(Thousands of dollars)", "Unit: tonnes",
# "In millions of US dollars", "Figures in £m", "Percent"
_MAGNITUDE = r"(?:thousands|millions|billions|hundreds|tens of thousands|percent|per cent|percentages?)"
_UNIT_WORD = (r"(?:[$£€¥]\w*|us\s?\$|(?:current |constant |us |u\.s\. )?dollars|pounds|euros|yen|tonnes|tons|kg|kilograms"
              r"|hectares|acres|km|kilometres|kilometers|metres|meters|litres|liters|gallons|barrels|hours|days|years"
              r"|units|persons|people)")
UNIT_LINE = re.compile(
    r"^\s*[\[(]?\s*(?:units?(?: of measure(?:ment)?)?\s*:\s*[^.;]{1,40}"
    r"|(?:(?:numbers?|figures|amounts|values|data|dollars)\s+(?:are\s+)?)?(?:(?:in|expressed in|shown in)\s+)?"
    rf"{_MAGNITUDE}\b(?:\s+of\s+[^.;()\[\]]{{1,30}})?"
    r"|percent(?:age)? distribution"
    r"|(?:(?:numbers?|figures|amounts|values|data)\s+(?:are\s+)?)?(?:in|expressed in|shown in)\s+"
    rf"{_UNIT_WORD}\b[^.;]{{0,30}})\s*[\])]?\s*\.?\s*$", re.IGNORECASE)


def caption_and_notes(above: list[str], below: list[str], join_units: bool = True) -> tuple[str, tuple[str, ...]]:
    """The caption (the title nearest the grid) and the notes (the other lines above it, then the
    lines below). A line that only gives the figures' unit ("[In thousands]", "Thousands of dollars")
    is no title: it joins the caption ("Employment by industry [In thousands]"), so the unit reaches
    every question and what the model is shown; a line of notes would be read as an aside."""
    if not join_units:
        return (above[-1] if above else ""), tuple(above[:-1] + below)
    units = [t for t in above if UNIT_LINE.match(t)]
    titles = [t for t in above if t not in units]
    caption = titles[-1] if titles else ""
    if units:
        unit = "; ".join(dict.fromkeys(u.strip() for u in units))
        caption = f"{caption} {unit if unit.startswith(('[', '(')) else f'({unit})'}".strip() if caption else unit
    return caption, tuple(titles[:-1] + below)


SUB_PERIOD = (r"(?:Q[1-4]|H[12]|Qtr\s*[1-4]|Quarter\s*[1-4]|Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|"
              r"June?|July?|Aug(?:ust)?|Sep(?:t|tember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
FULL_PERIOD = re.compile(r"^\s*(\d{4})\s+(%s)\s*$" % SUB_PERIOD, re.IGNORECASE)
BARE_PERIOD = re.compile(r"^\s*(%s)\s*$" % SUB_PERIOD, re.IGNORECASE)


def periods_completed(stubs: list[Any]) -> list[Any] | None:
    """A stub of periods that names the year once ("2016 Q3", "Q4", "2017 Q1", "Q2"): each bare
    quarter, half or month completed with the year written above it ("2016 Q4"), as a reader
    reads it; None when the stub is no such run (fewer than two of each, or a bare period with
    no year above it, or other labels among them)."""
    texts = [v.strip() if isinstance(v, str) else None for v in stubs]
    labelled = [t for t in texts if t]
    full = [t for t in labelled if FULL_PERIOD.match(t)]
    bare = [t for t in labelled if BARE_PERIOD.match(t)]
    if len(full) < 2 or len(bare) < 2 or len(full) + len(bare) < len(labelled) or BARE_PERIOD.match(labelled[0]):
        return None
    out, year = list(stubs), ""
    for i, t in enumerate(texts):
        m = FULL_PERIOD.match(t or "")
        if m:
            year = m.group(1)
        elif t and BARE_PERIOD.match(t):
            out[i] = f"{year} {t}"
    return out


def section_merge(m: Merge, first_col: int, data_cols: list[int]) -> bool:
    """A merged cell on one row that starts in the stub and runs over at least half of the data
    columns: a label heading the rows below it ("Time period: 2021"), not a value of each column."""
    spanned = sum(1 for c in data_cols if m[1] <= c <= m[3])
    return m[0] == m[2] and m[1] == first_col and spanned >= 2 and 2 * spanned >= len(data_cols)


OF_WHICH = re.compile(r"^\s*(of which|including|incl\.|thereof)\b", re.IGNORECASE)
BULLET = re.compile(r"^[\s\u00a0\u2007]*[\u00b7\u2022\u2023\u2043\u25aa\u25a0\u25cf\u25e6\u2013\-\*][\s\u00a0\u2007]+(?=\w)")
LEADING = re.compile(r"^[ \u00a0\u2007\u3000]+(?=\S)")


def without_bullet(v: Any) -> Any:
    """A label with its leading bullet ("· India", "• Wales", "- of which exports") taken off: the
    bullet marks the label's depth, it is no part of its name. Numbers ("- 5") are left as they are."""
    if not isinstance(v, str) or not (m := BULLET.match(v)):
        return v
    rest = v[m.end():]
    return v if is_number(rest) else rest


def stub_indents(stubs: list[Any], indents: list[int]) -> list[int]:
    """Each stub label's depth, from every way a sheet indents: the cell's indent, leading spaces
    or a bullet where other labels have none, and "of which" (a part of the row above it, one
    level under it). Depths only need to order labels: the row header ranks them."""
    texts = [v if isinstance(v, str) else "" for v in stubs]
    spaces = [len(m.group(0)) if (m := LEADING.match(t)) else 0 for t in texts]
    bullets = [bool(BULLET.match(t)) for t in texts]
    labelled = [i for i, t in enumerate(texts) if t.strip()]
    use_spaces = any(spaces[i] for i in labelled) and not all(spaces[i] for i in labelled)
    depth = [indents[i] * 100 + (spaces[i] if use_spaces else 0) + (50 if bullets[i] else 0) for i in range(len(texts))]
    for i, t in enumerate(texts):
        if OF_WHICH.match(t):
            parent = next((j for j in range(i - 1, -1, -1) if texts[j].strip() and not OF_WHICH.match(texts[j])), None)
            if parent is not None:
                depth[i] = depth[parent] + 1
    return depth


def _wrapped_labels_joined(nodes: list[HeaderNode], stub_label: list[bool],
                           merged: set[tuple[int, int]]) -> list[HeaderNode]:
    """One label wrapped over several header rows ("Per cent" / "change on" / "previous" /
    "quarter", "Total landings" / "by UK vessels") read as one: an unmerged label right under
    another unmerged label over the same columns continues it, unless its row names the stub
    (a row of series codes under "Date" is a level of its own). Levels are renumbered from 0."""
    unmerged = lambda n: (n.level, n.start) not in merged  # noqa: E731
    out = list(nodes)
    bottom: dict[tuple[int, int], tuple[int, HeaderNode]] = {}  # span -> (lowest header row a label reaches, the label)
    for level in sorted({n.level for n in nodes}):
        for n in [n for n in nodes if n.level == level and unmerged(n)]:
            prev = bottom.get((n.start, n.end))
            if level > 0 and not stub_label[level] and prev is not None and prev[0] == level - 1:
                joined = HeaderNode("C", prev[1].level, n.start, n.end, f"{prev[1].text} {n.text}")
                out[out.index(prev[1])] = joined
                out.remove(n)
                bottom[(n.start, n.end)] = (level, joined)
            else:
                bottom[(n.start, n.end)] = (level, n)
    dense = {v: k for k, v in enumerate(sorted({n.level for n in out}))}
    return [HeaderNode(n.axis, dense[n.level], n.start, n.end, n.text) for n in out]


def _numbers_named_by_empty_stub(nodes: list[HeaderNode], stub_has_labels: bool) -> list[HeaderNode]:
    """A stub label written on a header row of numbers, over a stub column the body leaves
    empty ("Age (months)" beside 3, 6, 3, 6), says what those numbers are: each reads with it
    ("Age (months) 3"), and the empty stub column is named by nothing else."""
    if stub_has_labels:
        return nodes
    out = list(nodes)
    for stub in [n for n in nodes if n.axis == "C" and n.start == n.end == 0]:
        row = [n for n in nodes if n.axis == "C" and n.level == stub.level and n.start > 0]
        if row and all(is_number(n.text) for n in row):
            out = [HeaderNode(n.axis, n.level, n.start, n.end, f"{stub.text} {n.text}") if n in row else n for n in out]
    return out


def _identifier_rows_out(nodes: list[HeaderNode]) -> tuple[list[HeaderNode], list[str]]:
    """A header row whose labels over the figures are all series identifiers ("A4YN", "DJQ3": one
    short code over each column) identifies the series; it names nothing a reader asks about, so it
    is no level of the column paths. Its codes stay readable in a note, column by column, and a
    stub label on that row ("Date") still names the stub. Levels are renumbered from 0."""
    out, kept_notes = list(nodes), []
    for level in sorted({n.level for n in nodes}):
        over_figures = [n for n in nodes if n.level == level and n.start > 0]
        if len(over_figures) >= 2 and all(n.start == n.end for n in over_figures) and series_codes(
                [n.text for n in over_figures]):
            out = [n for n in out if n not in over_figures]
            paths = flattened_names(out, max(n.end for n in nodes) + 1)
            kept_notes.append("Series identifiers: " + "; ".join(f"{paths[n.start]}: {n.text}" for n in over_figures))
    if not kept_notes:
        return nodes, []
    dense = {v: k for k, v in enumerate(sorted({n.level for n in out}))}
    return [HeaderNode(n.axis, dense[n.level], n.start, n.end, n.text) for n in out], kept_notes


def _text_column(values: list[Any]) -> bool:
    """A body column of labels: something written in it, and no figures."""
    written = [v for v in values if filled(v)]
    return bool(written) and not any(is_numeric(v) for v in written)


def _titles_out(nodes: list[HeaderNode], text_columns: set[int]) -> tuple[list[HeaderNode], list[str]]:
    """A label standing alone over a column of labels, above that column's own name ("GREAT
    BRITAIN" over "Reason"), is the table's title (its place, its subject), never a group of
    columns: a column of labels has one name. It leaves the column paths for the caption or the
    notes. Labels over several columns stay: those group the columns under them."""
    titles = [n for n in nodes if n.axis == "C" and n.start == n.end and n.start in text_columns
              and any(o.level > n.level and o.start == n.start for o in nodes if o.axis == "C")]
    if not titles:
        return nodes, []
    out = [n for n in nodes if n not in titles]
    dense = {v: k for k, v in enumerate(sorted({n.level for n in out}))}
    return [HeaderNode(n.axis, dense[n.level], n.start, n.end, n.text) for n in out], [n.text for n in titles]


def _label_span(r: int, c: int, rows_above: list[int], rows_below: list[int], cols: list[int], cell: Any,
                covered: dict[tuple[int, int], Merge]) -> int:
    """The last column a header label stands for. Spreadsheets often leave a group label
    unmerged, left-aligned over the blank cells of its group ("Landings into" over Scotland,
    England, Abroad): it reaches right over blank cells, up to the next label of its row or
    of a row above, when the rows below put two or more sub-headings under it. Stub labels
    (the first column) and the last header row stay one column wide."""
    if not rows_below or c == cols[0]:
        return c
    end = c
    for x in cols[cols.index(c) + 1:]:
        if filled(cell(r, x)) or (r, x) in covered or any(
                filled(cell(a, x)) or (a, x) in covered and covered[(a, x)][1] == x for a in rows_above):
            break
        end = x
    below = [x for x in cols if c <= x <= end and any(filled(cell(r2, x)) for r2 in rows_below)]
    return end if len(below) >= 2 else c


def _row_header(rows: list[list[Any]], indents: list[int], merged_stub: list[bool],
                gap_before: list[bool], bold_stub: list[bool]) -> tuple[list[HeaderNode], list[str]]:
    """Row-header nodes and the structure types found, or nothing for a plain first column.
    `merged_stub`: the stub cell lies in a merged area running down several rows;
    `gap_before`: blank rows stand between this body row and the one before (a section ends there);
    `bold_stub`: the stub cell is bold (a few bold labels with figures of their own head the plain rows below)."""
    if not rows or len(rows[0]) < 2:
        return [], []
    n = len(rows)
    stub = [r[0] for r in rows]

    # several leading text columns, the first grouping rows (merged, or blank below a label)
    label_cols = [c for c in _label_columns(rows) if not _constant(rows, c)]
    text_cols = len(label_cols)
    lead = label_cols[0] if label_cols else 0
    merged_lead = any(merged_stub) and lead == 0
    if text_cols >= 2 or (text_cols == 1 and merged_lead):
        first = [r[lead] for r in rows]
        grouped = merged_lead
        k = next((i for i, v in enumerate(first) if filled(v)), n)  # rows above the first label (a total) stay apart
        if not grouped and text_cols >= 2 and k < n - 1 and any(not filled(v) for v in first[k:]) and all(
                filled(r[label_cols[1]]) or _label_of_its_own(first, i) for i, r in enumerate(rows)):
            grouped = True
            for i in range(k + 1, n):  # a label stands for the rows below it until the next label
                if not filled(first[i]):
                    first[i] = first[i - 1]
                    rows[i][lead] = first[i]
        runs = _runs(first)
        if grouped and any(e > s for s, e, _ in runs):
            nodes = [HeaderNode("R", 0, s, e, cell_text(v)) for s, e, v in runs if filled(v)]
            for level, col in enumerate(label_cols[1:], start=1):
                for s, e in [(s, e) for s, e, _ in runs]:
                    seen = {(n.start, n.end, n.text) for n in nodes}  # a label merged over two stub columns
                    nodes += [HeaderNode("R", level, s + a, s + b, cell_text(v))  # is one node, not its own child
                              for a, b, v in _runs([r[col] for r in rows[s:e + 1]])
                              if filled(v) and (s + a, s + b, cell_text(v)) not in seen]
            return nodes, ["multi_column_row_header"]

    # section rows and indentation in the first column
    section = [filled(r[0]) and not any(filled(v) for v in r[1:]) for r in rows]
    has_sections = any(section) and not all(section) and not section[-1]
    indent_levels = sorted({indents[i] for i in range(n) if filled(stub[i])})
    has_indent = len(indent_levels) > 1
    labelled = [i for i in range(n) if filled(stub[i])]
    bold = [i for i in labelled if bold_stub[i]]
    bold_groups = not has_sections and not has_indent and 2 <= len(bold) and len(bold) * 2 < len(labelled) and any(
        i + 1 < n and filled(stub[i + 1]) and not bold_stub[i + 1] for i in bold)
    if not has_sections and not has_indent and not bold_groups:
        return [], []
    rank = {v: k for k, v in enumerate(indent_levels)}
    labels = [cell_text(v).strip() for v in stub]
    section_labels = [labels[i] for i in range(n) if section[i]]
    for i in range(1, n):  # the same line under every section heading ("Unit: tonnes"): a note, no level
        if section[i] and section[i - 1] and section_labels.count(labels[i]) > 1:
            section[i] = False
    if has_sections and not has_indent:
        for i in _bold_like_the_sections(rows, section, bold_stub):
            section[i] = True
    if bold_groups:
        levels = [0 if bold_stub[i] else 1 for i in range(n)]
        for i in [i for i in range(n) if bold_stub[i] and _figures_not_summed_below(rows, i, bold_stub)]:
            for k in range(i, n):  # not their parent: the row and the rows below it stand side by side
                if k > i and bold_stub[k]:
                    break
                levels[k] = 0
        if not any(bold_stub[i] and i + 1 < n and levels[i + 1] > levels[i] for i in range(n)):  # no group left
            return [], found_types(has_sections, bold_groups, has_indent)
    else:  # a section row heads the rows of its own indent and deeper; indentation nests within
        levels = [2 * (rank[indents[i]] if has_indent and filled(stub[i]) else 0) + (0 if section[i] else 1)
                  for i in range(n)]
    seen: dict[str, int] = {}
    for i in range(n):
        group = total_of(labels[i])
        j = seen.get(group.casefold()) if group else None
        if j is not None and levels[j] == levels[i]:
            levels[i] = levels[j] + 1  # "Africa Total" under "Africa": a child of its group
        seen.setdefault(labels[i].casefold(), i)
    last = max((i for i in range(n) if filled(stub[i])), default=None)
    if last is not None and last > 0 and grand_total(labels[last]):
        levels[last] = min(levels)  # a trailing grand total stands at the root, under no group
    dense = {v: k for k, v in enumerate(sorted(set(levels)))}
    levels = [dense[v] for v in levels]
    nodes = []
    for i in range(n):
        if not filled(stub[i]):
            continue
        end = i
        while end + 1 < n and levels[end + 1] > levels[i] and not gap_before[end + 1]:
            end += 1
        nodes.append(HeaderNode("R", levels[i], i, end, cell_text(stub[i])))
    return nodes, found_types(has_sections, bold_groups, has_indent)


def _bold_like_the_sections(rows: list[list[Any]], section: list[bool], bold_stub: list[bool]) -> list[int]:
    """Rows that head a section as the section rows do, though a stray cell beside them is filled
    ("Expected (Must Haves)" with a formula left in its "% of Total" cell): where every section row
    is bold and the rows they head are not, a bold label at the same indentation with at most one
    filled cell beside it (on a row of four or more) and a plain row below it is a sibling section,
    never a member of the section above it."""
    heads = [i for i in range(len(rows)) if section[i]]
    if not heads or not all(bold_stub[i] for i in heads) or any(bold_stub[i + 1] for i in heads if i + 1 < len(rows)):
        return []
    return [i for i, row in enumerate(rows) if not section[i] and bold_stub[i] and filled(row[0]) and len(row) >= 5
            and sum(filled(v) for v in row[1:]) <= 1 and i + 1 < len(rows) and not bold_stub[i + 1]
            and filled(rows[i + 1][0])]


def _label_columns(rows: list[list[Any]]) -> list[int]:
    """The leading columns that label rows: text columns from the first, and past a column of
    codes (whole numbers, "3370" beside "Chile") when a text column follows it, since figures
    do not stand between labels; the codes identify, they are no level of the row tree."""
    def column(j: int) -> list[Any]:
        return [r[j] for r in rows if j < len(r) and filled(r[j])]

    def text(j: int) -> bool:
        col = column(j)
        return bool(col) and not any(is_number(v) for v in col)

    def codes(j: int) -> bool:
        col = column(j)
        return bool(col) and all(is_number(v) and float(_as_float(v)).is_integer() for v in col)

    out: list[int] = []
    j, width = 0, len(rows[0]) - 1
    while j < width:
        if text(j):
            out.append(j)
        elif not (out and codes(j) and j + 1 < width and text(j + 1)):
            break
        j += 1
    return out


def _constant(rows: list[list[Any]], col: int) -> bool:
    """One label written on every row ("Region: East" down the whole table, a manager's name on
    each line): it says what the whole table is about and groups nothing, so it is no level of the
    row tree. (A label written once above blanks still heads the rows under it.)"""
    values = [r[col] if col < len(r) else None for r in rows]
    return len(values) >= 3 and all(filled(v) for v in values) and len({cell_text(v).strip() for v in values}) == 1


def _label_of_its_own(first: list[Any], i: int) -> bool:
    """A first-column label whose second column is blank and which groups no rows (the next row
    has a label of its own): a row that stands alone at the top of a multi-column row header
    ("Level not applicable / not recorded" after the Low, Intermediate and High groups, or
    "TOTAL"), not a gap in it."""
    return filled(first[i]) and (i + 1 == len(first) or filled(first[i + 1]))


def found_types(has_sections: bool, bold_groups: bool, has_indent: bool) -> list[str]:
    return (["section_rows"] if has_sections or bold_groups else []) + (["indented_row_header"] if has_indent else [])


def _figures_not_summed_below(rows: list[list[Any]], i: int, bold_stub: list[bool]) -> bool:
    """A bold row with figures of its own that are the sum of the plain rows below it (up to the next
    bold row, to within their rounding) in fewer than two of the columns where all of them hold
    numbers (none, where only one can be checked): a line of its own (an income statement's Gross
    Profit above the expenses deducted from it), not the parent of those rows. Bold alone makes no
    nesting certain; the sheet's own figures must confirm it (in its counts, if not in the rates
    beside them). A row below with no figure at all (a heading: "Section | Shed") adds nothing to check."""
    end = i + 1
    while end < len(rows) and not bold_stub[end]:
        end += 1
    below = [row for row in rows[i + 1:end] if any(is_number(v) for v in row[1:])]
    if not below:
        return False
    checked = failed = 0
    for c in range(1, len(rows[i])):
        head, parts = rows[i][c], [row[c] for row in below if c < len(row)]
        if not is_number(head) or len(parts) != len(below) or not all(is_number(v) for v in parts):
            continue
        x, ys = _as_float(head), [_as_float(v) for v in parts]
        checked += 1
        failed += abs(x - sum(ys)) > 0.5 * len(ys) * 10.0 ** -_places(head, *parts)
    return checked > 0 and checked - failed < min(2, checked)


def _as_float(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) else float(_parse_number(v))


def _places(*values: Any) -> int:
    """The most decimals any of these values is written with."""
    out = 0
    for v in values:
        text = repr(float(_as_float(v)))
        out = max(out, 0 if "e" in text or text.endswith(".0") else min(6, len(text.split(".")[1])))
    return out


FORM_LABEL = re.compile(r"\S:\s*$")


def _title_and_form_rows(header_rows: list[int], n_cols: int, cell, merged_at, first_col: int) -> int:
    """How many of the first header rows are a title or a form above the real header (at least one
    header row stays): rows of "Label: value" pairs, a single text merged along its row from the
    stub column (a title over the table), and single texts above those."""
    def texts(r: int) -> list[int]:
        return [c for c in range(n_cols) if filled(cell(r, c))]

    def form(r: int) -> bool:
        return any(isinstance(cell(r, c), str) and FORM_LABEL.search(cell(r, c).strip()) and filled(cell(r, c + 1))
                   for c in texts(r))

    def title(r: int) -> bool:
        used = texts(r)
        m = merged_at.get((r, used[0])) if len(used) == 1 else None
        width = [c for c in range(n_cols) if any(filled(cell(x, c)) for x in header_rows)]
        return m is not None and m[0] == m[2] and m[1] <= first_col < m[3] and 3 * (m[3] - m[1] + 1) >= 2 * len(width)

    count = 0
    for i, r in enumerate(header_rows[:-1]):
        if form(r) or title(r):
            count = i + 1
        elif len(texts(r)) != 1:
            break
    return count


def _heads_out_of_body(nodes: list[HeaderNode], rows: list[list[Any]]) -> tuple[list[HeaderNode], list[list[Any]]]:
    """A row that holds a label and nothing else, heading rows nested under it ("TOTAL" above
    "Total, 16 years and over" and the age bands), is a node of the row tree, not a case: it
    leaves the body, and its node spans the rows under it. A heading with figures of its own (a
    group's subtotal) stays a body row."""
    heads = {i for i, row in enumerate(rows) if row and filled(row[0]) and not any(filled(v) for v in row[1:])
             and any(n.start == i and n.end > i for n in nodes)}
    if not heads or len(heads) == len(rows):
        return nodes, rows
    new = [0] * (len(rows) + 1)
    for i in range(len(rows)):
        new[i + 1] = new[i] + (i not in heads)
    out = []
    for n in nodes:
        start, end = new[n.start], new[n.end + 1] - 1
        if end >= start:
            out.append(HeaderNode(n.axis, n.level, start, end, n.text))
    return out, [row for i, row in enumerate(rows) if i not in heads]


def _runs(values: list[Any]) -> list[tuple[int, int, Any]]:
    out: list[tuple[int, int, Any]] = []
    for i, v in enumerate(values):
        if out and out[-1][2] == v and filled(v):
            out[-1] = (out[-1][0], i, v)
        else:
            out.append((i, i, v))
    return out


def _kinds(values: list[list[Any]], r: int, cols: list[int],
           covered: dict[tuple[int, int], Merge] | None = None) -> tuple[str, ...]:
    """A row's cell types column by column (empty, number, text): a body's rows share them, a header's do not.
    A cell under a merged area takes the type of the merged value ("Orange" merged down a stub column)."""
    def value(c: int) -> Any:
        m = covered.get((r, c)) if covered else None
        at_r, at_c = (m[0], m[1]) if m is not None else (r, c)
        row = values[at_r]
        return row[at_c] if at_c < len(row) else None
    kinds = []
    for c in cols:
        v = value(c)
        kinds.append("" if not filled(v) else "n" if is_numeric(v) else "t")
    return tuple(kinds)

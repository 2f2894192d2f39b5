"""Complex-structure detection on a spreadsheet, with evidence, in RealHiTBench's terms.

RealHiTBench sorts hierarchical tables into complex-structure categories. Each structure found
here names its type, the cell ranges that show it (A1 notation, so a person can look), and the
category RealHiTBench uses for it, so results can be compared with the published labels:

| type | what it looks like | RealHiTBench category |
| --- | --- | --- |
| hierarchical_column_header | two or more header rows (merged or stacked) | ColumnHeaderMerge |
| hierarchical_row_header, `multi_column` | several classifying stub columns, the outer ones merged or blank below a label | MultiColumnClassified |
| hierarchical_row_header, `section_rows` / `indentation` | a row that holds only a label (or a bold group label, or a repeated header row with a new label) and heads the rows below it, a foot row summing the rows, or indented labels (by indent or a stub column deeper) | SingleRowClassified |
| nested_subtables | the body split into blocks (blank rows, repeated header rows, stacked tables of one shape) | ContentCompound |
| multi_table | several grids of different shapes on one sheet, or header blocks repeated side by side | StructureCompound |
| notes | text outside the grid beyond its title, values beside labels, a unit for the table, keyed markers | ExternalSupply |
| background_color | rows coloured by group, coloured bands opening groups, banded rows, cells filled apart from their row | BackgroundColor |

The rules read the sheet as `sources.grid` parsed it (tables, header levels, merges, indents)
and the cell fills; each is a few lines and explainable. A table may show several structures;
RealHiTBench labels each table with one category, so precision against its labels is low by
construction, and recall is the number to watch.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from curate.curation.sources.grid import Grid, column_letter, filled, is_number

CATEGORIES = {
    "hierarchical_column_header": "ColumnHeaderMerge",
    "multi_column": "MultiColumnClassified",
    "section_rows": "SingleRowClassified",
    "indentation": "SingleRowClassified",
    "nested_subtables": "ContentCompound",
    "multi_table": "StructureCompound",
    "notes": "ExternalSupply",
    "background_color": "BackgroundColor",
}
REALHITBENCH_CATEGORIES = ("ColumnHeaderMerge", "MultiColumnClassified", "SingleRowClassified", "ContentCompound",
                           "StructureCompound", "ExternalSupply", "BackgroundColor")
MAX_EVIDENCE = 12  # ranges listed per structure
KEYED_LABEL = re.compile(r"^([A-Za-z][\w ()/-]{1,40}):\s*\S")  # "Reference area: Belgium"
LONG_SECTION = 10  # rows a label row heads, on average, when it titles a sub-table rather than a group

# What each category is, as RealHiTBench's authors define it (README of cspzyy/RealHiTBench: four
# structural categories and a miscellany), said the way a person checks a sheet for it:
DEFINITIONS = {
    "ColumnHeaderMerge": "the column header has several levels: labels merged or stacked over the columns they group",
    "MultiColumnClassified": "rows are classified by several stub columns, the outer ones merged or written once "
                             "over the rows they group",
    "SingleRowClassified": "rows are classified within one stub: a label row (or an indented or bold label, a "
                           "label set a stub column left of its children's, or a summary row closing each group "
                           "or the whole body) heads or closes the rows of its group",
    "ContentCompound": "the body is divided into sub-tables: blocks parted by blank or full-width label rows, label "
                       "rows each heading a long run of rows, or tables stacked on one sheet",
    "StructureCompound": "one grid joins structurally similar tables: the same header block repeated side by side, "
                         "or tables of different shapes set together",
    "ExternalSupply": "the reader needs text outside the table body: statements above the header besides its "
                      "title, notes whose markers the table's cells carry, values given beside a label outside "
                      "the grid, a unit declared once for the whole table, or markers in the body whose key is "
                      "outside it; a source line or a general note below suggests it (the table reads without "
                      "them)",
    "BackgroundColor": "fills that carry meaning: rows coloured by the group they belong to, a coloured band "
                       "across the table opening each group, cells a conditional format fills by its rule, whole "
                       "rows banded in alternating colours (RealHiTBench labels banding so); a figure filled apart "
                       "from its row suggests it (a mark, or decoration). Not a fill uniform over a column, a "
                       "coloured label alone, or shading of the header, the stub and total rows",
}

# Each sign of a category: (category, weight). A sign shows on a sheet with a strength in 0..1;
# a category's score on a spreadsheet is the sum over its distinct signs of weight x strength (the
# strongest showing of each), and the category is reported when the score reaches its threshold.
# Weights are stated: 1.0 for a sign that is the definition itself, 0.5 for one that only
# suggests it. Thresholds are fitted (`fit_threshold`), never set by hand.
SIGNS: dict[str, tuple[str, float]] = {
    "header_levels": ("ColumnHeaderMerge", 1.0),         # two or more column header levels
    "merged_header": ("ColumnHeaderMerge", 1.0),         # header cells merged over columns
    "unmerged_group_labels": ("ColumnHeaderMerge", 1.0),  # upper labels set over the columns they group, unmerged
    "label_over_unlabelled": ("ColumnHeaderMerge", 0.5),  # a one-row header's label also heads the unlabelled
    # column of figures or units right of it ("Average retail price | (blank)" over "1.85 | per pound")
    "grouping_columns": ("MultiColumnClassified", 1.0),  # the reader found several classifying stub columns
    "merged_stub_column": ("MultiColumnClassified", 1.0),  # a stub cell merged down over several rows
    "sparse_stub_column": ("MultiColumnClassified", 1.0),  # outer stub labels written once, blanks below
    "runs_in_stub_column": ("MultiColumnClassified", 1.0),  # outer stub values repeated over runs of rows
    "keyed_label_rows": ("MultiColumnClassified", 1.0),  # label rows naming two variables or more, "Area: Austria"
    "section_rows": ("SingleRowClassified", 1.0),        # rows holding only a label, heading rows below
    "bold_group_rows": ("SingleRowClassified", 1.0),     # bold stub labels among plain ones
    "closing_summaries": ("SingleRowClassified", 1.0),   # total / average rows closing group after group
    "foot_aggregate": ("SingleRowClassified", 1.0),      # under a one-level header, a foot row summing the rows
    "summing_rows": ("SingleRowClassified", 1.0),        # rows the numbers show sum a block of their siblings
    "indentation": ("SingleRowClassified", 1.0),         # indented stub labels
    "stepped_stub": ("SingleRowClassified", 1.0),        # one label a row, set a stub column deeper under its parent
    "blocks_headed_by_label": ("SingleRowClassified", 1.0),  # blocks of one shape, each under a label row
    "stub_heading": ("SingleRowClassified", 1.0),        # one label atop an otherwise blank outer stub column
    "blank_row_blocks": ("ContentCompound", 1.0),        # the body parted into blocks by blank rows
    "full_width_rows": ("ContentCompound", 1.0),         # label rows merged over the table's width
    "stacked_tables": ("ContentCompound", 1.0),          # several tables one under another on one sheet
    "long_sections": ("ContentCompound", 1.0),           # label rows each heading ten rows or more: sub-tables
    "repeated_header_blocks": ("StructureCompound", 1.0),  # one header block repeated side by side
    "tables_of_different_shapes": ("StructureCompound", 0.5),  # tables of different widths and heads together
    "preamble": ("ExternalSupply", 1.0),                 # statements above the header besides its title
    "notes_below": ("ExternalSupply", 0.5),              # notes, sources below the table: it reads without them
    "keyed_notes": ("ExternalSupply", 1.0),              # a note keys a marker a cell of the table carries
    "value_beside_label": ("ExternalSupply", 1.0),       # "Label: value" outside the body
    "unit_statement": ("ExternalSupply", 1.0),           # "in million USD": one unit for the whole table
    "flag_markers": ("ExternalSupply", 1.0),             # letters or symbols among figures, keyed elsewhere
    "conditional_fill": ("BackgroundColor", 1.0),        # a conditional format fills the cells meeting a rule
    "colour_coded_groups": ("BackgroundColor", 1.0),     # runs of rows, each group in its own colour
    "group_bands": ("BackgroundColor", 1.0),             # label rows in a colour of their own open each group
    "highlighted_cells": ("BackgroundColor", 0.5),       # figures filled apart from their row: a mark, or decoration
    "banded_rows": ("BackgroundColor", 1.0),             # body rows filled in two alternating colours
}
# Fitted by `fit_thresholds` (recall first within CLAIMS_BUDGET) on the sheets tuned on: the 105 of
# ../shared/data/realhitbench and the tuning part of realhitbench/more (159 sheets). `python
# benchmarks/hierarchical_holdout.py --more --cross-fit` refits them and measures them on more's
# held-back part; `--cross-fit` alone gives the two-fold figures on the 105.
THRESHOLDS: dict[str, float] = {"ColumnHeaderMerge": 0.5, "MultiColumnClassified": 1.0, "SingleRowClassified": 1.0,
                                "ContentCompound": 1.0, "StructureCompound": 1.0, "ExternalSupply": 0.5,
                                "BackgroundColor": 1.0}
PRIOR_THRESHOLD = 1.0  # one full sign: kept for a category no sheet of the fitting half is labelled with
SUMMARY = re.compile(r"^(sub-?)?totals?\b|\btotals?$|^(weekly|monthly|annual|grand) total|^(avg|average|mean|sum|sd|se|"
                     r"st\.? ?dev|stdv|stdev|sterror|std\.? ?error)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Structure:
    type: str
    evidence: tuple[str, ...]  # cell ranges on the sheet, e.g. "A1:F3"
    kind: str = ""  # for hierarchical_row_header: multi_column, section_rows or indentation
    detail: str = ""
    sign: str = ""  # the evidence it is (a key of SIGNS); its weight there counts towards the category
    strength: float = 1.0  # how fully the sign shows, 0..1

    @property
    def weight(self) -> float:
        return round(SIGNS[self.sign][1] * self.strength, 3) if self.sign else 0.0

    @property
    def realhitbench_category(self) -> str:
        return CATEGORIES[self.kind or self.type]

    def as_dict(self) -> dict[str, Any]:
        out = {"type": self.type, "evidence": list(self.evidence), "realhitbench_category": self.realhitbench_category}
        if self.kind:
            out["kind"] = self.kind
        if self.detail:
            out["detail"] = self.detail
        if self.sign:
            out["sign"], out["weight"] = self.sign, self.weight
        return out


def cell_range(r0: int, c0: int, r1: int, c1: int) -> str:
    """0-based sheet rows and columns, inclusive, as "B3:F9"."""
    return f"{column_letter(c0)}{r0 + 1}:{column_letter(c1)}{r1 + 1}"


@dataclass
class Part:
    """One table of a sheet as the structure rules see it: its grid and the parse of it."""

    grid: Grid
    table: Any  # curation.table.Table

    def top_row(self) -> int:
        """The table's first row (its header's top) in the part grid's coordinates."""
        rng = self.table.provenance.cell_range
        return int("".join(ch for ch in rng.split(":")[0] if ch.isdigit())) - 1 - self.grid.origin[0]

    def body_rows(self) -> tuple[int, int, int, int]:
        """(first body row, last row, first column, last column) in the part grid's coordinates."""
        values = self.grid.values
        rng = self.table.provenance.cell_range  # "B3:F20", sheet coordinates
        top = int("".join(ch for ch in rng.split(":")[0] if ch.isdigit())) - 1 - self.grid.origin[0]
        bottom = int("".join(ch for ch in rng.split(":")[1] if ch.isdigit())) - 1 - self.grid.origin[0]
        cols = [c for c in range(max(len(r) for r in values)) if any(
            c < len(values[r]) and filled(values[r][c]) for r in range(top, bottom + 1))]
        # the body is the table's last n_rows non-blank rows (header levels may join several sheet
        # rows: a wrapped label), so count up from the bottom
        used = [r for r in range(top, bottom + 1) if any(c < len(values[r]) and filled(values[r][c]) for c in cols)]
        n = self.table.n_rows + heading_rows(self.table)
        first = used[-n] if 0 < n <= len(used) else bottom + 1
        return first, bottom, cols[0], cols[-1]


    def body_sheet_rows(self) -> list[int]:
        """Each body row's row number on the sheet, as Excel shows it (1-based): the table's last
        used rows, less the label-only rows the reader took out of the body as row-tree nodes."""
        values = self.grid.values
        rng = self.table.provenance.cell_range
        top = int("".join(ch for ch in rng.split(":")[0] if ch.isdigit())) - 1 - self.grid.origin[0]
        bottom = int("".join(ch for ch in rng.split(":")[1] if ch.isdigit())) - 1 - self.grid.origin[0]
        used = [r for r in range(top, min(bottom, len(values) - 1) + 1) if any(filled(v) for v in values[r])]
        headings: dict[int, int] = {}
        for n in heading_nodes(self.table):
            headings[n.start] = headings.get(n.start, 0) + 1
        sequence = used[len(used) - (self.table.n_rows + sum(headings.values())):] if used else []
        out: list[int] = []
        for r in sequence:
            if headings.get(len(out), 0):
                headings[len(out)] -= 1  # a label-only row heading the rows below it
                continue
            out.append(self.grid.origin[0] + r + 1)
        return out if len(out) == self.table.n_rows else []


def heading_nodes(table: Any) -> list[Any]:
    """Row nodes whose label their first body row does not show: label-only rows of the sheet."""
    from curate.curation.body import cell_text

    out = []
    for n in table.header:
        if n.axis == "R" and 0 <= n.start < table.n_rows:
            shown = {" ".join(cell_text(v).split()) for v in table.body.slice(n.start, 1).to_pylist()[0].values()}
            if " ".join(n.text.split()) not in shown:
                out.append(n)
    return out


def heading_rows(table: Any) -> int:
    """How many label-only rows of the sheet the reader took out of the body as row-tree nodes
    (`grid._heads_out_of_body`): row nodes whose label their first body row does not show."""
    from curate.curation.body import cell_text

    count = 0
    for n in table.header:
        if n.axis == "R" and 0 <= n.start < table.n_rows:
            shown = {" ".join(cell_text(v).split()) for v in table.body.slice(n.start, 1).to_pylist()[0].values()}
            count += " ".join(n.text.split()) not in shown
    return count


def part_structures(part: Part) -> list[Structure]:
    grid, table = part.grid, part.table
    r0, c0 = grid.origin
    out: list[Structure] = []
    first_body, bottom, first_col, last_col = part.body_rows()
    top = min(first_body, part.top_row())  # the table's first row (a blank row may part header and body)
    while top > 0 and any(filled(v) for v in grid.values[top - 1]):
        top -= 1
    merged_header = [m for m in grid.merges if m[0] < first_body and m[2] < first_body and m[3] > m[1]
                     and first_col <= m[1] and m[3] <= last_col and any(filled(v) for v in grid.values[m[0]])]
    if table.column_header_levels <= 1 and merged_header and first_body - min(m[0] for m in merged_header) > 1:
        top_row = min(m[0] for m in merged_header)  # one level after wrapped labels are joined, but cells merged
        out.append(Structure("hierarchical_column_header",  # over columns and header rows: a merged header
                             (cell_range(r0 + top_row, c0 + first_col, r0 + first_body - 1, c0 + last_col),),
                             detail=f"{len(merged_header)} header cells merged over columns and rows",
                             sign="merged_header"))
    if table.column_header_levels > 1:
        header_top, seen = first_body, 0
        while header_top > 0 and seen < table.column_header_levels:
            header_top -= 1
            seen += any(filled(v) for v in grid.values[header_top][first_col:last_col + 1])
        merged = [m for m in grid.merges if m[0] < first_body and m[3] > m[1]]
        where = (cell_range(r0 + header_top, c0 + first_col, r0 + first_body - 1, c0 + last_col),)
        out.append(Structure("hierarchical_column_header", where, detail=f"{table.column_header_levels} header levels"
                             + (f", {len(merged)} merged header cells" if merged else ", stacked"),
                             sign="header_levels"))
        if merged:
            out.append(Structure("hierarchical_column_header", where, sign="merged_header",
                                 detail=f"{len(merged)} header cells merged over columns"))
        else:  # the same grouping drawn without merging: a label written once over its columns' labels
            groups = [n for n in table.header if n.axis == "C" and n.end > n.start]
            if groups:
                out.append(Structure("hierarchical_column_header", where, sign="unmerged_group_labels",
                                     detail=f"{len(groups)} labels each over several columns' labels, unmerged"))
        repeated = _repeated_blocks(table)
        if repeated:
            out.append(Structure("multi_table", tuple(repeated[:MAX_EVIDENCE]),
                                 detail="header blocks repeated side by side", sign="repeated_header_blocks"))
    if table.column_header_levels <= 1 and first_body > 0:
        spans = _labels_over_unlabelled(grid.values, first_body, bottom, first_col, last_col)
        if spans:
            out.append(Structure("hierarchical_column_header", tuple(
                cell_range(r0 + first_body - 1, c0 + a, r0 + first_body - 1, c0 + b) for a, b in spans[:MAX_EVIDENCE]),
                detail=f"{len(spans)} labels each heading the unlabelled column beside them",
                sign="label_over_unlabelled"))
        # one header row: the same run of labels written twice ("ITEM, QTY, TOTAL | ITEM, ...")
        runs = _repeated_label_runs(grid.values[first_body - 1], first_col, last_col)
        if runs:
            out.append(Structure("multi_table", tuple(cell_range(r0 + first_body - 1, c0 + a, r0 + first_body - 1, c0 + b)
                                                      for a, b in runs),
                                 detail="one run of column labels repeated side by side", sign="repeated_header_blocks"))

    raw = grid.values
    rows = range(first_body, bottom + 1)
    stub_end = _stub_end(raw, rows, first_col, last_col)
    data_cols = list(range(stub_end + 1, last_col + 1))
    cell = lambda r, c: raw[r][c] if c < len(raw[r]) else None  # noqa: E731

    # several classifying stub columns: merged or sparse (a label, blank below it) beside another
    stub_area = (cell_range(r0 + first_body, c0 + first_col, r0 + bottom, c0 + max(stub_end, first_col + 1)),)
    heading = _stub_heading(raw, rows, first_col, stub_end)
    stepped = _stepped_parents(raw, rows, first_col, stub_end, data_cols)
    for sign, why, shows in (
            ("grouping_columns", "grouping columns", "multi_column_row_header" in table.structure),
            ("merged_stub_column", "a classifying column merged over several rows",
             _merged_column(grid, first_body, last_col)),
            ("sparse_stub_column", "a sparse stub column beside another",
             not heading and not stepped and _sparse_first_column(raw, rows, first_col, stub_end)),
            ("runs_in_stub_column", "a stub column whose values run over several rows of the next",
             _runs_in_first_column(raw, rows, first_col, stub_end))):
        if shows:
            out.append(Structure("hierarchical_row_header", stub_area, kind="multi_column", detail=why, sign=sign))
    if heading:  # one label atop an outer stub column blank below it: it names the rows, classifies none
        out.append(Structure("hierarchical_row_header", (cell_range(r0 + first_body, c0 + first_col, r0 + first_body,
                                                                    c0 + first_col),),
                             kind="section_rows", detail="one label heading the whole stub", sign="stub_heading"))

    if len(stepped) >= 2:  # indentation drawn with columns: each row's one label, children a column deeper
        out.append(Structure("hierarchical_row_header", tuple(cell_range(r0 + r, c0 + first_col, r0 + r, c0 + last_col)
                                                              for r in stepped[:MAX_EVIDENCE]),
                             kind="indentation", detail=f"{len(stepped)} rows whose label stands a stub column "
                                                        "left of the rows under them", sign="stepped_stub"))

    # rows holding only a label (or a bold group label) that head the rows below them
    sections, bold_groups = [], []
    for r in rows:
        stub = [c for c in range(first_col, stub_end + 1) if filled(cell(r, c))]
        data = [c for c in data_cols if filled(cell(r, c))]
        below = [x for x in range(r + 1, min(r + 4, bottom + 1)) if any(filled(cell(x, c)) for c in data_cols)]
        if stub and not data and below:
            sections.append(cell_range(r0 + r, c0 + first_col, r0 + r, c0 + last_col))
        elif stub and (r, stub[0]) in grid.bold:
            bold_groups.append(r)
    # label rows that each name a variable and its value ("Reference area: Belgium", then "Sector: State
    # government" over the figures): rows classified by several variables, written as rows, not columns
    keys = Counter(m.group(1).strip().lower() for rng in sections for m in [KEYED_LABEL.match(
        " ".join(str(cell(_row_of(rng) - 1 - r0, c)) for c in range(first_col, stub_end + 1)
                 if filled(cell(_row_of(rng) - 1 - r0, c))))] if m)
    if sum(n >= 2 for n in keys.values()) >= 2:
        out.append(Structure("hierarchical_row_header", tuple(sections[:MAX_EVIDENCE]), kind="multi_column",
                             detail=f"label rows naming {len(keys)} variables: " + ", ".join(sorted(keys)),
                             sign="keyed_label_rows"))
    # a few label rows each heading a long run of rows (ten or more on average) part the body into
    # sub-tables; a group's label heads a handful (on the sheets tuned on, sub-tables ran 8 to 42
    # rows a label, groups 1 to 7)
    figures = [r for r in rows if any(filled(cell(r, c)) for c in data_cols)]
    if len(sections) >= 2 and sum(r > _row_of(sections[0]) - 1 - r0 for r in figures) >= LONG_SECTION * len(sections):
        out.append(Structure("nested_subtables", tuple(sections[:MAX_EVIDENCE]), sign="long_sections",
                             detail=f"{len(sections)} label rows heading {len(figures)} rows of figures"))
    # a label-only row at the bottom of the header (the parser took it for a header level) heads the body
    for r in range(first_body - 1, max(first_body - table.column_header_levels, 0), -1):
        if [c for c in range(first_col, last_col + 1) if filled(cell(r, c))] != [first_col]:
            break
        sections.append(cell_range(r0 + r, c0 + first_col, r0 + r, c0 + last_col))
    if sections and data_cols:
        out.append(Structure("hierarchical_row_header", tuple(sorted(sections, key=_row_of)[:MAX_EVIDENCE]),
                             kind="section_rows", detail=f"{len(sections)} section rows", sign="section_rows"))
    # summary rows (average, total, ...) closing group after group: each marks off the rows above it
    closing = [r for r in rows if any(SUMMARY.search(str(cell(r, c)).strip()) for c in range(first_col, stub_end + 1)
                                      if filled(cell(r, c)))]
    if len(closing) >= 2 and closing[-1] - closing[0] > len(closing) and data_cols:
        out.append(Structure("hierarchical_row_header", tuple(cell_range(r0 + r, c0 + first_col, r0 + r, c0 + last_col)
                                                              for r in closing[:MAX_EVIDENCE]),
                             kind="section_rows", detail=f"{len(closing)} summary rows closing groups",
                             sign="closing_summaries"))
    # a row at the foot whose figures are the sum or the mean of the rows above it, read from the
    # numbers (no "Total" needed): under a one-level header, the one grouping the rows have
    foot = _foot_aggregates(raw, rows, data_cols) if table.column_header_levels <= 1 else []
    if foot:
        out.append(Structure("hierarchical_row_header", tuple(cell_range(r0 + r, c0 + first_col, r0 + r, c0 + last_col)
                                                              for r, _ in foot),
                             kind="section_rows", detail=", ".join(f"row {r0 + r + 1} is the {kind} of the rows above"
                                                                   for r, kind in foot), sign="foot_aggregate"))
    # rows that add up a block of their siblings, read from the numbers (curation.arithmetic): a subtotal
    # with its parts is a group in one stub, whatever its label, bold or indent say
    subtotals = _subtotals(table)
    if subtotals:
        out.append(Structure("hierarchical_row_header", (cell_range(r0 + first_body, c0 + first_col, r0 + bottom,
                                                                    c0 + last_col),),
                             kind="section_rows", detail=f"{subtotals} rows summing a block of the rows beside them",
                             sign="summing_rows"))
    stub_rows = [r for r in rows if filled(cell(r, first_col))]
    if 2 <= len(bold_groups) < len(stub_rows) // 2 and data_cols:
        out.append(Structure("hierarchical_row_header", tuple(cell_range(r0 + r, c0 + first_col, r0 + r, c0 + last_col)
                                                              for r in bold_groups[:MAX_EVIDENCE]),
                             kind="section_rows", detail=f"{len(bold_groups)} bold group rows",
                             sign="bold_group_rows"))
    indents = sorted({v for (r, c), v in grid.indents.items() if first_body <= r <= bottom and c <= stub_end})
    if indents:
        at = sorted(r for (r, c), v in grid.indents.items() if first_body <= r <= bottom and c <= stub_end)
        out.append(Structure("hierarchical_row_header", (cell_range(r0 + at[0], c0 + first_col, r0 + at[-1],
                                                                    c0 + stub_end),),
                             kind="indentation", detail=f"indent levels {', '.join(map(str, indents))}",
                             sign="indentation"))

    # the body split into blocks by blank rows
    blocks, start = [], None
    for r in rows:
        if any(filled(v) for v in grid.values[r][first_col:last_col + 1]):
            start = r if start is None else start
        elif start is not None:
            blocks.append((start, r - 1))
            start = None
    if start is not None:
        blocks.append((start, bottom))
    if sum(e > s for s, e in blocks) >= 2:  # two or more blocks of several rows (a lone total row aside)
        out.append(Structure("nested_subtables", tuple(cell_range(r0 + s, c0 + first_col, r0 + e, c0 + last_col)
                                                       for s, e in blocks[:MAX_EVIDENCE]),
                             detail=f"{len(blocks)} blocks separated by blank rows", sign="blank_row_blocks"))
    # label rows merged over (nearly) the table's whole width inside the body: sub-table titles
    width = last_col - first_col + 1
    spanning = sorted({m[0] for m in grid.merges if first_body <= m[0] <= bottom and m[0] == m[2]
                       and m[3] - m[1] + 1 >= max(2, width - 1) and filled(cell(m[0], m[1]))})
    if spanning and width >= 3:
        out.append(Structure("nested_subtables", tuple(cell_range(r0 + r, c0 + first_col, r0 + r, c0 + last_col)
                                                       for r in spanning[:MAX_EVIDENCE]),
                             detail=f"{len(spanning)} label rows merged over the table's width",
                             sign="full_width_rows"))

    # text outside the grid (beyond the title): what the reader is told before the table, and the
    # notes, sources and footnotes after it
    if table.notes:
        text_rows = [r for r in range(len(grid.values)) if any(filled(v) for v in grid.values[r])]
        above = [r for r in text_rows if r < top]
        note_rows = above[:-1] + [r for r in text_rows if r > bottom]  # the nearest line above is the title
        # lines the reader kept as notes, wherever they stand: several lines right on top of the
        # header ("This worksheet contains one table...") are no part of the table (`top` ran over them)
        said = {" ".join(str(n).split()) for n in table.notes}
        note_rows += [r for r in text_rows if r not in note_rows and first_body > r
                      and " ".join(" ".join(str(v) for v in grid.values[r] if filled(v)).split()) in said]
        note_rows.sort()
        line = lambda r: " ".join(" ".join(str(v) for v in grid.values[r] if filled(v)).split())  # noqa: E731
        where = lambda rs: tuple(cell_range(r0 + r, c0, r0 + r, c0 + max(  # noqa: E731
            c for c, v in enumerate(grid.values[r]) if filled(v))) for r in rs[:MAX_EVIDENCE])
        # above the header: a statement, a subtitle or instructions, not the "Label: value" lines
        # (their own sign) and not boilerplate; one such line is often a second title, two say something
        preamble = [r for r in note_rows if r < first_body and _is_note(line(r)) and not any(
            isinstance(v, str) and v.strip().endswith(":") for v in grid.values[r])]
        if preamble:
            out.append(Structure("notes", where(preamble), detail=f"{len(preamble)} lines above the header "
                                 "besides its title", sign="preamble", strength=min(1.0, len(preamble) / 2)))
        footnotes = [r for r in note_rows if r > bottom and _is_note(line(r))]
        if footnotes:
            out.append(Structure("notes", where(footnotes), detail=f"{len(footnotes)} lines of notes or sources "
                                 "below the table", sign="notes_below"))
        # a note that keys a marker one of the table's cells carries ("Shetland Sandeels*" and
        # "* Summary Table only"; "[p] = provisional"): the cell means what the note says
        table_text = [str(v) for r in range(top, bottom + 1) if r not in note_rows
                      for v in grid.values[r] if isinstance(v, str)]
        keyed = [r for r in note_rows if any(any(marker in t for t in table_text) for marker in _keyed_markers(line(r)))]
        if keyed:
            out.append(Structure("notes", where(keyed), detail=f"{len(keyed)} notes keying markers the table's "
                                 "cells carry", sign="keyed_notes"))

    # a value supplied beside a label outside the body ("Cost: | 1720", "Project Name: | Kerala plant"
    # above the header): something the table's reader must take from outside the grid
    supplied = [(r, c, r1, c1) for r in range(0, first_body) for c in range(len(grid.values[r]))
                if isinstance(grid.values[r][c], str) and grid.values[r][c].strip().endswith(":")
                and len(grid.values[r][c].strip()) > 1
                for r1, c1 in [_value_of_label(grid.values, r, c)] if r1 is not None]
    if supplied:
        out.append(Structure("notes", tuple(cell_range(r0 + r, c0 + c, r0 + r1, c0 + c1)
                                            for r, c, r1, c1 in supplied[:MAX_EVIDENCE]),
                             detail=f"{len(supplied)} values given beside a label outside the body",
                             sign="value_beside_label"))
    # one unit or scale declared for the whole table ("in million USD", "Units: tonnes"), not in a label
    units = [(r, c) for r in range(0, bottom + 1) for c in range(len(grid.values[r]))
             if isinstance(grid.values[r][c], str) and UNIT_STATEMENT.match(grid.values[r][c].strip())]
    if units:
        out.append(Structure("notes", tuple(cell_range(r0 + r, c0 + c, r0 + r, c0 + c) for r, c in units[:MAX_EVIDENCE]),
                             detail="a unit declared once for the table", sign="unit_statement"))
    # letters or symbols set among the figures (a flag column, "12.3*"), whose key the reader needs
    marked = [(r, c) for r in rows for c in data_cols if isinstance(cell(r, c), str) and FLAG.match(cell(r, c).strip())
              and cell(r, c).strip().lower() not in NO_INFORMATION]
    if len(marked) >= 2:
        out.append(Structure("notes", tuple(_ranges(sorted(marked), r0, c0)[:MAX_EVIDENCE]),
                             detail=f"{len(marked)} body cells carrying a marker keyed outside the table",
                             sign="flag_markers"))

    # fills that mark some body cells apart from others
    fills = getattr(grid, "fills", {}) or {}
    # a conditional format colours the body cells that meet its rule: some of them, singled out
    flagged = sorted((r, c) for r, c in getattr(grid, "conditional", set()) if first_body <= r <= bottom
                     and first_col <= c <= last_col and (r, c) not in fills)
    if flagged:
        out.append(Structure("background_color", tuple(_ranges(flagged, r0, c0)[:MAX_EVIDENCE]),
                             detail=f"{len(flagged)} body cells under a conditional format that fills them",
                             sign="conditional_fill"))
    # rows coloured by the group they belong to: a fill shared by a run of rows, another by the next run
    groups = _colour_coded_runs(fills, rows, first_col, last_col, stub_end, cell)
    if groups:
        out.append(Structure("background_color", tuple(cell_range(r0 + a, c0 + first_col, r0 + b, c0 + last_col)
                                                        for a, b, _ in groups[:MAX_EVIDENCE]),
                             detail=f"{len(groups)} runs of rows, each in its group's colour "
                                    f"({len({colour for _, _, colour in groups})} colours)",
                             sign="colour_coded_groups"))
    # a coloured band opening each group: label rows in a fill the rows under them do not share
    bands = _group_bands(grid, rows, first_col, last_col, stub_end, data_cols, cell)
    if len(bands) >= 2:
        out.append(Structure("background_color", tuple(cell_range(r0 + r, c0 + first_col, r0 + r, c0 + last_col)
                                                        for r in bands[:MAX_EVIDENCE]),
                             detail=f"{len(bands)} label rows in a colour of their own, each opening a group",
                             sign="group_bands"))
    # rows filled in two alternating colours (RealHiTBench labels such banding BackgroundColor: on the
    # 159 sheets tuned on, the one sheet banded is labelled so)
    banded = _banded_rows(fills, rows, first_col, last_col, cell)
    if banded:
        out.append(Structure("background_color", (cell_range(r0 + banded[0], c0 + first_col, r0 + banded[-1],
                                                             c0 + last_col),),
                             detail=f"{len(banded)} body rows filled in alternating colours", sign="banded_rows"))
    # figures filled apart from their own row: the cell, not the row, is singled out
    telling = _highlighted_columns(fills, rows, first_col, last_col, stub_end, cell)
    if telling:
        coloured = sorted((r, c) for r in rows for c in telling if fills.get((r, c), "")
                          and fills[(r, c)] != _row_fill(fills, r, first_col, stub_end, cell))
        out.append(Structure("background_color", tuple(_ranges(coloured, r0, c0)[:MAX_EVIDENCE]),
                             detail=f"{len(coloured)} cells in {len(telling)} body columns filled apart from their "
                                    f"row ({len({fills[rc] for rc in coloured})} colours), not as banding",
                             sign="highlighted_cells"))
    return out


UNIT_STATEMENT = re.compile(r"^\(?\s*(?:(?:all\s+)?(?:figures|amounts|values|data)\s+(?:are\s+)?in|in|units?\s*:|"
                            r"unit of measure\s*:?)\s+(?:(?:millions?|thousands?|billions?|bn|mn|m|k|'000s?|"
                            r"hundreds?)\b\s*(?:of\s+)?)?(?:usd|us\$|eur|gbp|\$|\u00a3|\u20ac|\u00a5|dollars?|euros?|"
                            r"pounds?|rupees?|yuan|yen|tonnes?|tons?|percent|%|kg|km|hectares?|persons?|people|"
                            r"millions?|thousands?|billions?)\b.{0,30}$", re.IGNORECASE)
FLAG = re.compile(r"^(?:[A-Za-z*\u2020\u2021\u00a7#^]|\(?[a-z]\)|\d[\d.,]*\s*(?:[*\u2020\u2021]+|\([a-z]\)))$")
NO_INFORMATION = ("x",)  # a lone 'x' ticks a cell: it marks, it keys nothing


BOILERPLATE = re.compile(r"^(\u00a9|\(c\)\s|copyright\b)|terms (&|and) conditions|^back to contents\b|^https?://\S+$",
                         re.IGNORECASE)
# a marker a note begins with ("* Summary table only", "(1) Includes...", "1/ Latest data", "a) ...")
# or defines ("[p] = provisional", "NA* = not applicable")
MARKER_LEADS = re.compile(r"^(\(\d{1,2}\)|\d{1,2}/|\(?[a-z]\)|[*+#\u2020\u2021\u00a7]+)\s*[A-Za-z]")
MARKER_DEFINED = re.compile(r"(\[[a-z]{1,2}\]|\b[A-Z]{1,3}\*+|[*\u2020\u2021]+)\s*=\s*\w")


def _value_of_label(values: list[list[Any]], r: int, c: int) -> tuple[int | None, int | None]:
    """Where the value of a "Label:" cell stands: the next filled cell of its row, past the blank
    cells a merged or wide label leaves ("User Name: | | | Anoop"), unless that is another label;
    else the cell under it ("Employee:" over "MBurger", "Dates:" beside it over the dates)."""
    is_label = lambda v: isinstance(v, str) and v.strip().endswith(":")  # noqa: E731
    row = values[r]
    nxt = next((x for x in range(c + 1, len(row)) if filled(row[x])), None)
    if nxt is not None and not is_label(row[nxt]):
        return r, nxt
    under = values[r + 1][c] if r + 1 < len(values) and c < len(values[r + 1]) else None
    return (r + 1, c) if filled(under) and not is_label(under) else (None, None)


def _is_note(text: str) -> bool:
    """A line that tells the reader something: three words or more, not a copyright line, a link
    or a navigation aid, and not a stray figure."""
    words = re.findall(r"[^\W\d_]{2,}", text)
    return len(words) >= 3 and not BOILERPLATE.search(text)


def _keyed_markers(text: str) -> list[str]:
    """The markers a note line keys: the one it begins with, and any it defines ("[r] = revised")."""
    led = MARKER_LEADS.match(text)
    return ([led.group(1)] if led else []) + MARKER_DEFINED.findall(text)


def _row_fill(fills: dict, r: int, first_col: int, stub_end: int, cell: Any) -> str:
    """A body row's colour: the fill of its label (its first filled stub cell), "" when unfilled."""
    label = next((c for c in range(first_col, stub_end + 1) if filled(cell(r, c))), first_col)
    return fills.get((r, label), "") or ""


def _colour_coded_runs(fills: dict, rows: range, first_col: int, last_col: int, stub_end: int,
                       cell: Any) -> list[tuple[int, int, str]]:
    """Runs of body rows (first, last, colour) filled whole in one colour, where the colour changes
    from run to run: two colours or more over runs of two rows or more. Alternate-row banding has
    runs of one; one fill over the whole body is one run."""
    def whole(r: int) -> str:
        colour = _row_fill(fills, r, first_col, stub_end, cell)
        cells = [c for c in range(first_col, last_col + 1) if filled(cell(r, c))]
        return colour if colour and len(cells) >= 2 and all(fills.get((r, c)) == colour for c in cells) else ""

    content = [r for r in rows if any(filled(cell(r, c)) for c in range(first_col, last_col + 1))]
    runs: list[tuple[int, int, str]] = []
    for r in content:
        colour = whole(r)
        if runs and runs[-1][2] == colour:
            runs[-1] = (runs[-1][0], r, colour)
        else:
            runs.append((r, r, colour))
    coloured = [run for run in runs if run[2] and sum(1 for x in content if run[0] <= x <= run[1]) >= 2]
    return coloured if len({colour for _, _, colour in coloured}) >= 2 and len(coloured) >= 2 else []


def _banded_rows(fills: dict, rows: range, first_col: int, last_col: int, cell: Any) -> list[int]:
    """The body rows (six or more, two cells or more filled) when the fill of the whole row
    alternates from row to row, a colour and another (or none), nearly throughout (a total row may
    break it). Shading of the stub alone is not banding: every filled cell of a row has its colour."""
    content = [r for r in rows if sum(filled(cell(r, c)) for c in range(first_col, last_col + 1)) >= 2]
    seq = [{fills.get((r, c), "") or "" for c in range(first_col, last_col + 1) if filled(cell(r, c))}
           for r in content]
    seq = [colours.pop() if len(colours) == 1 else None for colours in seq]
    if len(seq) < 6 or None in seq or len(set(seq)) != 2:
        return []
    return content if sum(a != b for a, b in zip(seq, seq[1:])) >= 0.8 * (len(seq) - 1) else []


def _group_bands(grid: Grid, rows: range, first_col: int, last_col: int, stub_end: int, data_cols: list[int],
                 cell: Any) -> list[int]:
    """Label-only rows (no figures) coloured across the table (the fill reaches its last column, or
    the label is merged over the width) in a colour that the row of figures under them does not
    share: a band that opens a group. A coloured label alone only repeats what the label row says.
    (The reader keeps the fills of cells that hold something, "" included: a band drawn over
    cells left empty shows only through a merge.)"""
    fills, out = grid.fills, []
    for r in rows:
        colour = _row_fill(fills, r, first_col, stub_end, cell)
        across = fills.get((r, last_col)) == colour or any(
            m[0] <= r <= m[2] and m[1] <= first_col + 1 and m[3] >= last_col for m in grid.merges)
        if not colour or not across or any(filled(cell(r, c)) for c in data_cols):
            continue
        below = next((x for x in rows if x > r and any(filled(cell(x, c)) for c in data_cols)), None)
        if below is not None and _row_fill(fills, below, first_col, stub_end, cell) != colour:
            out.append(r)
    return out


def _highlighted_columns(fills: dict, rows: range, first_col: int, last_col: int, stub_end: int,
                         cell: Any) -> list[int]:
    """The body's figure columns where some cells are filled apart from their own row (a colour
    the row's label does not have), in a way that tells rows apart: not one fill down the column,
    not alternate-row banding, and not summary rows, whose shading repeats what the label says."""
    plain = [r for r in rows if not (filled(cell(r, first_col)) and SUMMARY.search(str(cell(r, first_col)).strip()))
             and any(filled(cell(r, c)) for c in range(stub_end + 1, last_col + 1))]
    out = []
    for c in range(stub_end + 1 if stub_end < last_col else first_col, last_col + 1):  # the stub's fills repeat its labels
        seq = [fills.get((r, c), "") if fills.get((r, c), "") != _row_fill(fills, r, first_col, stub_end, cell) else ""
               for r in plain if filled(cell(r, c))]
        if len(set(seq)) < 2:
            continue
        banding = all(a != b for a, b in zip(seq, seq[1:])) and len(set(seq[0::2])) == 1 and len(set(seq[1::2])) == 1
        if not banding:
            out.append(c)
    return out


def _stub_end(raw: list[list[Any]], rows: range, first_col: int, last_col: int) -> int:
    """The last stub column: the leading columns whose filled cells are mostly text (or years)."""
    from curate.curation.sources.grid import _is_year

    end = first_col
    for c in range(first_col, last_col):
        cells = [raw[r][c] for r in rows if c < len(raw[r]) and filled(raw[r][c])]
        numbers = [v for v in cells if is_number(v) and not _is_year(v)]
        if cells and len(numbers) * 2 < len(cells):
            end = c
        elif c > first_col or cells:
            break
    return end


def _row_of(rng: str) -> int:
    return int("".join(ch for ch in rng.split(":")[0] if ch.isdigit()))


MERGED_STUB_WIDTH = 3  # columns a stub label merged down its group may also span; wider, it is a text block


def _merged_column(grid: Grid, first_body: int, last_col: int) -> bool:
    """A merged cell spanning several body rows in a stub column (or a few merged side by side: a
    label centred over "D5:E9"), with columns to its right."""
    return any(m[0] >= first_body and m[2] > m[0] and m[3] - m[1] < MERGED_STUB_WIDTH and m[3] < last_col
               for m in grid.merges)


def _subtotals(table: Any) -> int:
    """How many body rows sum a block of their siblings that is not the whole rest of the body (a
    grand total alone nests nothing: `foot_aggregate` says that much)."""
    from curate.curation.arithmetic import row_relations

    sums = [a for a in row_relations(table) if a.kind == "sum"]
    return sum(len(a.of) < table.n_rows - 1 for a in sums) if sums else 0


def _stub_heading(raw: list[list[Any]], rows: range, first_col: int, stub_end: int) -> bool:
    """One label at the top of the outer stub column and nothing below it, beside a stub column
    that itemises every row ('Microscopic Field #' over 'Field_1', 'Field_2', ...)."""
    if stub_end <= first_col or len(rows) < 3:
        return False
    first = [filled(raw[r][first_col]) if first_col < len(raw[r]) else False for r in rows]
    second = [filled(raw[r][first_col + 1]) if first_col + 1 < len(raw[r]) else False for r in rows]
    return first[0] and sum(first) == 1 and sum(second) >= len(rows) - 1


def _number(v: Any) -> float | None:
    from curate.curation.sources.grid import _parse_number

    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    parsed = _parse_number(v) if isinstance(v, str) else None
    return None if parsed is None else float(parsed)


def _agrees(shown: float, computed: float) -> bool:
    """Equal within the rounding `shown` is written to (half its last decimal, at most 6 read) or 0.1%."""
    text = f"{shown:.6f}".rstrip("0").rstrip(".")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(shown - computed) <= max(0.5 * 10 ** -decimals, 0.001 * abs(computed)) + 1e-9


def _foot_aggregates(raw: list[list[Any]], rows: range, data_cols: list[int]) -> list[tuple[int, str]]:
    """Among the last three rows with figures, those equal to the sum or the mean of all the rows
    with figures above them in most figure columns (three figures or more, not all the same)."""
    value = lambda r, c: _number(raw[r][c]) if c < len(raw[r]) else None  # noqa: E731
    cols = [c for c in data_cols if sum(value(r, c) is not None for r in rows) >= 3]
    body = [r for r in rows if any(value(r, c) is not None for c in cols)]
    out = []
    for r in body[-3:]:
        above = [x for x in body if x < r]
        if len(above) < 3:
            continue
        for kind in ("sum", "mean"):
            agree = tried = 0
            for c in cols:
                shown, parts = value(r, c), [v for v in (value(x, c) for x in above) if v is not None]
                if shown is None or len(parts) < 3 or len(set(parts)) < 2:
                    continue
                tried += 1
                agree += shown != 0 and _agrees(shown, sum(parts) if kind == "sum" else sum(parts) / len(parts))
            if tried and agree * 2 > tried:
                out.append((r, kind))
                break
    return out


def _stepped_parents(raw: list[list[Any]], rows: range, first_col: int, stub_end: int,
                     data_cols: list[int]) -> list[int]:
    """Rows with figures whose one stub label stands left of the next row's: a parent over the rows
    set a column deeper ("Boston" in A, its states in B; "All Services" > "Officers" > "of which
    female" in A, B, C). Only where nearly every labelled row holds one stub label: a row holding
    two (region and state side by side) is several classifying columns, not a tree."""
    if stub_end <= first_col:
        return []
    depth = []
    for r in rows:
        labels = [c for c in range(first_col, stub_end + 1) if c < len(raw[r]) and filled(raw[r][c])]
        if labels:
            depth.append((r, labels[0], len(labels)))
    if len(depth) < 4 or sum(n == 1 for _, _, n in depth) < 0.8 * len(depth) or len({d for _, d, _ in depth}) < 2:
        return []
    has_data = lambda r: any(c < len(raw[r]) and filled(raw[r][c]) for c in data_cols)  # noqa: E731
    return [r for (r, d, n), (_, below, _) in zip(depth, depth[1:]) if n == 1 and below > d and has_data(r)]


def _runs_in_first_column(raw: list[list[Any]], rows: range, first_col: int, stub_end: int) -> bool:
    """The first stub column repeats a value over runs of rows in which the second one varies
    (Year 2012 over quarters Q1-Q4)."""
    if stub_end <= first_col:
        return False
    pairs = [(raw[r][first_col], raw[r][first_col + 1]) for r in rows
             if first_col + 1 < len(raw[r]) and filled(raw[r][first_col]) and filled(raw[r][first_col + 1])]
    runs = _runs_of([a for a, _ in pairs])
    long = [(s, e) for s, e in runs if e > s and len({pairs[i][1] for i in range(s, e + 1)}) == e - s + 1]
    return len(long) >= 2 and sum(e - s + 1 for s, e in long) * 2 >= len(pairs)


def _runs_of(values: list[Any]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for i, v in enumerate(values):
        if out and values[out[-1][0]] == v:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


def _sparse_first_column(raw: list[list[Any]], rows: range, first_col: int, stub_end: int) -> bool:
    """The first stub column labels a run of rows (a label, blanks below) that the next one itemises."""
    if stub_end <= first_col:
        return False
    first = [filled(raw[r][first_col]) if first_col < len(raw[r]) else False for r in rows]
    second = [filled(raw[r][first_col + 1]) if first_col + 1 < len(raw[r]) else False for r in rows]
    runs = sum(1 for i, f in enumerate(first) if f and i + 1 < len(first) and not first[i + 1] and second[i + 1])
    return runs >= 1 and sum(second) >= 2 * max(1, sum(first)) and sum(first) >= 1


def _repeated_blocks(table: Any) -> list[str]:
    """Top-level column groups whose children read the same: one table's columns repeated side by side."""
    top = [n for n in table.header if n.axis == "C" and n.level == 0 and n.end > n.start]
    children = {}
    for n in top:
        texts = tuple(c.text for c in sorted(table.header, key=lambda c: c.start)
                      if c.axis == "C" and c.level == 1 and n.start <= c.start and c.end <= n.end)
        if texts:
            children.setdefault(texts, []).append(n)
    return [f"{n.text} (columns {n.start + 1}-{n.end + 1})" for group in children.values() if len(group) > 1
            for n in group]


def _labels_over_unlabelled(raw: list[list[Any]], first_body: int, bottom: int, first_col: int,
                            last_col: int) -> list[tuple[int, int]]:
    """(label column, last column it heads) for each label of a one-row header followed by columns whose
    header cell is blank but whose body holds something in most rows: the label covers them as a merge would."""
    header, body = raw[first_body - 1], raw[first_body:bottom + 1]
    labelled = lambda c: c < len(header) and filled(header[c])  # noqa: E731
    used = lambda c: sum(c < len(r) and filled(r[c]) for r in body) * 2 > len(body)  # noqa: E731
    out = []
    for c in range(first_col, last_col):
        if labelled(c) and used(c) and not labelled(c + 1) and used(c + 1):
            end = c + 1
            while end + 1 <= last_col and not labelled(end + 1) and used(end + 1):
                end += 1
            out.append((c, end))
    return out


def _repeated_label_runs(header: list[Any], first_col: int, last_col: int) -> list[tuple[int, int]]:
    """The columns (first, last) of a run of two or more text labels that the header row writes again,
    in the same order, further right: one table's columns set twice side by side."""
    labels = [(c, " ".join(header[c].split()).lower()) for c in range(first_col, min(last_col, len(header) - 1) + 1)
              if isinstance(header[c], str) and header[c].strip() and not is_number(header[c])]
    texts = [t for _, t in labels]
    for k in range(len(texts) // 2, 1, -1):
        for i in range(len(texts) - 2 * k + 1):
            for j in range(i + k, len(texts) - k + 1):
                if texts[i:i + k] == texts[j:j + k] and len(set(texts[i:i + k])) == k:
                    return [(labels[i][0], labels[i + k - 1][0]), (labels[j][0], labels[j + k - 1][0])]
    return []


def _ranges(cells: list[tuple[int, int]], r0: int, c0: int) -> list[str]:
    """Cells as row runs: consecutive columns of one row make one range."""
    out: list[str] = []
    run: list[tuple[int, int]] = []
    for r, c in cells:
        if run and r == run[-1][0] and c == run[-1][1] + 1:
            run.append((r, c))
            continue
        if run:
            out.append(cell_range(r0 + run[0][0], c0 + run[0][1], r0 + run[-1][0], c0 + run[-1][1]))
        run = [(r, c)]
    if run:
        out.append(cell_range(r0 + run[0][0], c0 + run[0][1], r0 + run[-1][0], c0 + run[-1][1]))
    return out


def sheet_structures(parts: list[Part]) -> list[Structure]:
    """Every structure of one sheet: those of each table, and the tables' arrangement."""
    out = [s for part in parts for s in part_structures(part)]
    if len(parts) > 1:
        heads = [tuple(n.text for n in p.table.header if n.axis == "C" and n.level == 0) for p in parts]
        labelled = [p for p in parts if p.table.caption]
        if len({p.table.n_cols for p in parts}) == 1 and len(labelled) >= 2 and all(
                len(p.table.caption) <= 60 for p in labelled):
            out.append(Structure("hierarchical_row_header", tuple(
                f"{column_letter(p.grid.origin[1])}{p.grid.origin[0] + 1}" for p in labelled[:MAX_EVIDENCE]),
                kind="section_rows", detail="blocks of one shape, each headed by a label row",
                sign="blocks_headed_by_label"))
        if len({h[1:] for h in heads}) == 1 and len({h[:1] for h in heads}) == len(parts) and len(heads[0]) > 1:
            out.append(Structure("hierarchical_row_header", tuple(p.table.provenance.cell_range.split(":")[0]
                                                                  for p in parts[:MAX_EVIDENCE]),
                                 kind="section_rows", detail="header rows repeated with a new label: each heads a block",
                                 sign="blocks_headed_by_label"))
        shapes = {(p.table.n_cols, tuple(n.text for n in p.table.header if n.axis == "C" and n.level == 0))
                  for p in parts}
        widths = {p.table.n_cols for p in parts}
        ranges = tuple(p.table.provenance.cell_range for p in parts[:MAX_EVIDENCE])
        out.append(Structure("nested_subtables", ranges, detail=f"{len(parts)} tables on one sheet",
                             sign="stacked_tables"))
        if len(widths) > 1 and len(shapes) == len(parts):
            out.append(Structure("multi_table", ranges, detail=f"{len(parts)} tables of different shapes on one sheet",
                                 sign="tables_of_different_shapes"))
    return out


def category_scores(structures: list[Structure]) -> dict[str, float]:
    """Each category's score: its distinct signs' weights, each at its strongest showing, summed."""
    best: dict[str, float] = {}
    for s in structures:
        if s.sign:
            best[s.sign] = max(best.get(s.sign, 0.0), s.weight)
    out = {category: 0.0 for category in REALHITBENCH_CATEGORIES}
    for sign, weight in best.items():
        out[SIGNS[sign][0]] = round(out[SIGNS[sign][0]] + weight, 3)
    return out


def categories(structures: list[Structure], thresholds: dict[str, float] | None = None) -> list[str]:
    """The categories whose score reaches their threshold (the shipped THRESHOLDS by default)."""
    thresholds = THRESHOLDS if thresholds is None else thresholds
    return sorted(c for c, score in category_scores(structures).items() if score > 0 and score >= thresholds[c])


def fit_threshold(scores: list[float], labelled: list[bool]) -> float:
    """The threshold on a category's score that best separates the sheets labelled with it from the
    rest: maximal Youden's J (recall minus the share of other sheets flagged), ties to the lower
    threshold (recall first). Candidates are the scores seen; with no labelled sheet, PRIOR_THRESHOLD.
    RealHiTBench gives each table one category while a table often shows several structures, so the
    other sheets' share is pessimistic; J does not depend on how rare the category is."""
    positives = sum(labelled)
    negatives = len(labelled) - positives
    if not positives:
        return PRIOR_THRESHOLD
    best, best_j = PRIOR_THRESHOLD, -2.0
    for t in sorted({s for s in scores if s > 0}):
        recall = sum(1 for s, y in zip(scores, labelled) if y and s >= t) / positives
        flagged = sum(1 for s, y in zip(scores, labelled) if not y and s >= t) / negatives if negatives else 0.0
        if recall - flagged > best_j + 1e-9:
            best, best_j = t, recall - flagged
    return best


CLAIMS_BUDGET = 2.75  # categories claimed per sheet, on average, that the fit may spend: the bar is 3
# (issue 44), a quarter kept in hand for sheets unlike those fitted on


def fit_thresholds(scores: list[dict[str, float]], labels: list[str], budget: float = CLAIMS_BUDGET) -> dict[str, float]:
    """Every category's threshold, recall first within a claims budget. Each starts at its Youden
    threshold (`fit_threshold`); then, while the sheets' mean number of claimed categories stays
    within `budget`, the threshold whose lowering (to a lower score seen) recalls the most
    labelled sheets per extra claim is lowered. A category missed is a structure the reader of a
    question never hears of; one claimed too many costs a sentence of evidence."""
    n = len(scores)
    thresholds = {c: fit_threshold([s[c] for s in scores], [y == c for y in labels]) for c in REALHITBENCH_CATEGORIES}

    def claims(c: str, t: float) -> int:
        return sum(s[c] > 0 and s[c] >= t for s in scores)

    def recalled(c: str, t: float) -> int:
        return sum(s[c] > 0 and s[c] >= t for s, y in zip(scores, labels) if y == c)

    spent = sum(claims(c, t) for c, t in thresholds.items())
    while n:
        moves = []
        for c, t in thresholds.items():
            for to in {s[c] for s in scores if 0 < s[c] < t}:
                gain, cost = recalled(c, to) - recalled(c, t), claims(c, to) - claims(c, t)
                if gain > 0 and (spent + cost) / n <= budget:
                    moves.append((gain / max(cost, 1), to, c, cost))
        if not moves:
            return thresholds
        _, to, c, cost = max(moves)  # ties: the higher threshold, the fewer claims
        thresholds[c], spent = to, spent + cost
    return thresholds

"""Rule questions that navigate the header tree: RealHiTBench's hierarchical track.

A hierarchical table is read through its header tree (`curate.curation.header_tree`), not its
positions: a cell is named by its row path ("Japan" under "Asia") and its column path ("North /
2019"); a group's parts are the nodes directly under it, leaving out its summary nodes (a Total
first or last among them) and the rows cleaning marked as summaries; a group's total is its own
row (the "Asia" row above the Asian countries) or its summary child. The ops:

- `tree_fact`: a claim about a leaf under a parent path, true or false (FC value matching);
- `tree_sum`: the sum of a group's parts, summaries left out (NR calculation), on rows or columns;
- `tree_total_check`: does a group's total equal the sum of its parts (FC inference-based)?
- `tree_extreme`: which part of a group is highest or lowest (NR comparison): what is asked of
  rates, shares and indexes, which `tree_sum` never adds (`why_not_summed`);
- `tree_chart`: a bar, pie or line chart of a group's parts; the gold is {chart_type, x, y}, the
  values the chart must plot (RealHiTBench's CG, scored by PASS@1 in `curate.evaluation.charts`);
- `tree_swap`: Structure Comprehending. Two sibling blocks of the tree are exchanged in a copy of
  the table (rows or columns move with everything nested under them); questions are then asked
  of the copy, and their gold follows the swap: the order of the blocks changes, the values found
  by path do not.

Every gold is computed here and stored with a DuckDB program over the data view (`rowid` is the
row's position there), which `curate verify` re-runs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from curate.curation.header_tree import (PATH_SEPARATOR, Branch, branches, children_labels, exchanged, flattened_names,
                                  grand_total, row_paths, summary_nodes, total_of, tree_rows, SUMMARY_TEXT)
from curate.curation import semantics as sem
from curate.curation.body import cell_text
from curate.curation.programs.sql import SHEET
from curate.curation.programs.sql import quote_ident as q
from curate.curation.programs.sql import quote_literal as lit
from curate.curation.sources.numfmt import MONTHS
from curate.curation.table import HeaderNode, Table
from curate.generators.rules.ops import op
from curate.generators.rules.profile import ADDITIVE, MEASURE_LABEL, NOT_ADDITIVE, RELATIVE, rounded

if TYPE_CHECKING:  # pragma: no cover
    from curate.generators.rules.engine import Context

# summary nodes that are not sums of their siblings: a total check needs a total
NOT_A_SUM = re.compile(r"\b(average|avg|mean|median|rate|ratio|per|percent|percentage|share)\b|%", re.IGNORECASE)
MAX_CHART_PARTS = 20
SWAP_PURPOSE = "rh.swap"  # one exchange per table, whichever template asks for it
TITLE_CHARS = 50  # a header node this long over most columns is the table's title, not a group
AUTO_NAME = re.compile(r"^column \d+( \(\d+\))?$")  # what the reader names a column without a header


@dataclass(frozen=True)
class Part:
    label: str | None  # None: a row of a group with no labelled children
    pos: int  # body row (axis R) or column (axis C)


@dataclass(frozen=True)
class Group:
    """A header node (or the top level of the row tree) and what a sum over it reads."""

    axis: str
    path: tuple[str, ...]  # labels from the top; () is the top level
    parts: tuple[Part, ...]
    left_out: tuple[str, ...]  # summary nodes among the children
    total: Part | None  # the group's own row, or its summary child that is a sum
    start: int
    end: int
    flat: bool = False  # the named rows of a table whose row header has no tree: compared, never summed


def quoted(path: tuple[str, ...] | list[str]) -> str:
    return PATH_SEPARATOR.join(path)


def under(path: tuple[str, ...]) -> str:
    """'"Japan" under "Asia"': a leaf named by its path."""
    return f'"{path[-1]}"' + (f' under "{quoted(path[:-1])}"' if len(path) > 1 else "")


def numbering_columns(table: Table, roles: dict[str, str] | None = None) -> list[str]:
    """Numeric columns that number the rows (R's row names, a column running 1, 2, 3 ... down the
    rows: `curate.curation.semantics.numbers_the_rows`): no measure a question reads, compares or sums.
    (An id-like name alone is no evidence here: a sheet's "Number" column counts things.)"""
    if roles is None:
        roles = {i.name: i.role for i in table.semantics}
    return [name for j, name in enumerate(table.columns) if roles.get(name) == sem.ROW_INDEX
            or sem.numbers_the_rows(table.body.column(j).to_pylist())]


NOT_MEASURES = (sem.ROW_INDEX, sem.IDENTIFIER, sem.CODE)  # a number that names or codes a row, no quantity
COUNTS_THINGS = re.compile(r"^\s*(number|no\.?|count|n)\s*$", re.IGNORECASE)
KEY_ROLES = (sem.TIME, sem.NAME, sem.IDENTIFIER, sem.CODE, sem.ROW_INDEX)


def _label_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip() if value is not None else ""


def key_columns(table: Table, roles: dict[str, str] | None = None) -> list[str]:
    """Numeric columns that label the rows rather than measure them, never the measure of a
    comparison, a calculation or a count: a code or an id (`curate.curation.semantics` roles code,
    identifier, row index: "Source Code[2]", "Acct#"); the stub, whose values are the row tree's
    labels ("Year" 2012, 2012, ... under the row nodes "2012"); and a period or name column that
    stands before every measure column (a leading "Year" or "Days" key)."""
    if roles is None:
        roles = {i.name: i.role for i in table.semantics}
    out = []
    paths = row_paths(table.header, table.n_rows) if any(n.axis == "R" for n in table.header) else None
    first_measure = next((j for j, c in enumerate(table.columns) if roles.get(c) in sem.QUANTITIES), table.n_cols)
    for j, name in enumerate(table.columns):
        f = table.body.schema.field(j)
        if not (pa.types.is_integer(f.type) or pa.types.is_floating(f.type)):
            continue
        role = roles.get(name)
        if role == sem.IDENTIFIER and COUNTS_THINGS.match(name.rpartition(PATH_SEPARATOR)[2]):
            role = sem.COUNT  # a sheet's "Number" column counts things: an id-like name alone is no id
        if role in NOT_MEASURES or (role in KEY_ROLES and j < first_measure):
            out.append(name)
            continue
        if paths:
            values = table.body.column(j).to_pylist()
            named = [(v, p) for v, p in zip(values, paths) if v is not None and p]
            if named and 5 * sum(_label_text(v) in p for v, p in named) >= 4 * len(named):
                out.append(name)  # the stub: its values are the labels of the rows' nodes
    return out


def group_heads(first: list[str | None], second: list[str | None] | None) -> dict[int, int | None]:
    """The rows whose first-column label heads a group rather than naming the row: a label written
    only on a group's first row, the rows after it left blank in that column while the next column
    labels each of them ("Low" over its reasons, then "Total"). Such a label names the group; the
    row it sits on is only the group's first member, so no question names that row by it. Each
    head -> the group's total row (its last row, labelled a total in the next column), or None."""
    if second is None:
        return {}
    heads: dict[int, int | None] = {}
    for r, v in enumerate(first):
        if v and r + 1 < len(first) and not first[r + 1] and second[r] and second[r + 1]:
            end = r + 1
            while end + 1 < len(first) and not first[end + 1] and second[end + 1]:
                end += 1
            heads[r] = end if TOTAL_LABEL.match(str(second[end])) else None
    return heads


TOTAL_LABEL = re.compile(r"^\s*(sub-?)?totals?\s*$", re.IGNORECASE)


class TreeView:
    """One hierarchical table as the tree ops read it: paths, groups, numeric columns, data-view rows."""

    def __init__(self, table: Table, roles: dict[str, str] | None = None, like: Table | None = None) -> None:
        """`like`: the table this one is a copy of (blocks exchanged): its columns keep their meaning."""
        self.table = table
        # rows cleaning left out of the data view: ordinary questions skip them; tree questions
        # read a group's own row and a Total node of the row tree (as totals), through `sheet`
        # (every body row, `rowid` its position), and skip only the other marked rows (a Mean, an SD)
        # a group labelled only on its first row is named by its total row ("Low" -> Low's Total)
        self.group_totals = {total: head for head, total in self._group_heads.items() if total is not None}
        marked = set(table.summary_rows) - set(tree_rows(table.header, table.n_rows)) - set(self.group_totals)
        self.src = SHEET if table.summary_rows else "t"
        self.view_row: list[int | None] = [None if r in marked else r for r in range(table.n_rows)]
        numbering = set(numbering_columns(like or table, roles)) | set(key_columns(like or table, roles))
        skip = set(table.empty_columns) | set(table.constant_columns) | {j for j, c in enumerate(table.columns) if c in numbering}
        if self.dated_stub:
            skip.add(0)  # the years that name the rows are no measure
        self.numeric = [j for j, f in enumerate(table.body.schema) if j not in skip and not pa.types.is_boolean(f.type)
                        and (pa.types.is_integer(f.type) or pa.types.is_floating(f.type))]
        self.integer = {j for j in self.numeric if pa.types.is_integer(table.body.schema.field(j).type)}
        self.summary = set(summary_nodes(table.header))
        self._values: dict[int, np.ndarray] = {}

    @cached_property
    def _group_heads(self) -> dict[int, int | None]:
        """Group labels written only on their group's first row (`group_heads`), in a table whose
        row header is no tree."""
        table = self.table
        if any(n.axis == "R" for n in table.header) or table.n_cols < 2 \
                or not all(pa.types.is_string(table.body.schema.field(j).type) for j in (0, 1)):
            return {}
        return group_heads(table.body.column(0).to_pylist(), table.body.column(1).to_pylist())

    def values(self, j: int) -> np.ndarray:
        if j not in self._values:
            self._values[j] = np.asarray(self.table.body.column(j).to_numpy(zero_copy_only=False), dtype=float)
        return self._values[j]

    def cell(self, r: int, j: int) -> int | float:
        value = self.values(j)[r]
        return int(value) if j in self.integer else float(value)

    def present(self, r: int, j: int) -> bool:
        return not np.isnan(self.values(j)[r]) and self.view_row[r] is not None

    def column_label(self, j: int) -> str:
        """The column's path without a title read into the header (a node spanning every column,
        or a long text over most of them); "" for a column with no name of its own ("column 6"),
        or one whose path another column shows too (four "Mouse 1 / Basal" columns, a day apart in
        a level read as the title): a question naming it could mean any of them."""
        label = self._column_paths[j] or self.table.columns[j]
        if AUTO_NAME.match(label.rpartition(PATH_SEPARATOR)[2]) or self._shown_labels.count(label) > 1:
            return ""
        return label

    @cached_property
    def _shown_labels(self) -> list[str]:
        return [path or name for path, name in zip(self._column_paths, self.table.columns)]

    @cached_property
    def _column_paths(self) -> list[str]:
        return flattened_names([n for n in self.table.header if not self.is_title(n)], self.table.n_cols)

    def is_title(self, n: HeaderNode) -> bool:
        """A column node that is the table's title read into the header: it spans every column,
        or it is long text over most of them."""
        span, n_cols = n.end - n.start + 1, self.table.n_cols
        return n.axis == "C" and n_cols > 1 and (span >= n_cols or (len(n.text) > TITLE_CHARS and 2 * span > n_cols))

    @cached_property
    def labelled(self) -> list[int]:
        """The numeric columns a question can name."""
        return [j for j in self.numeric if self.column_label(j)]

    @cached_property
    def row_names(self) -> list[tuple[str, ...] | None]:
        """Each row's path when it names that row alone (else None); without row nodes, the
        first column's text when it is unique."""
        if any(n.axis == "R" for n in self.table.header):
            paths = row_paths(self.table.header, self.table.n_rows)
        elif self.dated_stub:
            paths = [(cell_text(v),) for v in self.table.body.column(0).to_pylist()]
        elif self.table.n_cols and pa.types.is_string(self.table.body.schema.field(0).type):
            first = self.table.body.column(0).to_pylist()
            paths = [(v,) if v and r not in self._group_heads else () for r, v in enumerate(first)]
            second = self.table.body.column(1).to_pylist()
            for total, head in self.group_totals.items():  # Low's Total row: '"Total" under "Low"', never "Low"
                paths[total] = (first[head], str(second[total]).strip())
        else:
            return [None] * self.table.n_rows
        counts: dict[tuple[str, ...], int] = {}
        for p in paths:
            counts[p] = counts.get(p, 0) + 1
        return [p if p and counts[p] == 1 else None for p in paths]

    @cached_property
    def dated_stub(self) -> bool:
        """Whether the rows of a table with a column tree and no row tree are named by the dates or
        years of its first column ("2017-01-30", 1988, 1989 ...), each once: the row a reader names
        ("On 2017-01-30, which unit ...") when the stub holds no text."""
        table = self.table
        if any(n.axis == "R" for n in table.header) or table.n_cols < 3:
            return False
        f = table.body.schema.field(0)
        values = table.body.column(0).to_pylist()
        if None in values or len(set(values)) < len(values) or len(values) < 3:
            return False
        if pa.types.is_timestamp(f.type) or pa.types.is_date(f.type):
            return True
        return pa.types.is_integer(f.type) and all(1800 <= v <= 2100 for v in values)

    def groups(self, axis: str) -> list[Group]:
        """Every node whose parts can be summed, and the top level of the row tree."""
        out: list[Group] = []
        forest = branches(self.table.header, axis)  # type: ignore[arg-type]

        def visit(level: tuple[Branch, ...], path: tuple[str, ...], addressable: bool) -> None:
            labels = [b.node.text for b in level]
            for b in level:
                here = addressable and labels.count(b.node.text) == 1
                if self.is_title(b.node):  # not a group: what lies under it is named without it
                    visit(b.children, path, here)
                    continue
                group = self._group(axis, b, path + (b.node.text,)) if here else None
                if group:
                    out.append(group)
                visit(b.children, path + (b.node.text,), here)

        visit(forest, (), True)
        if axis == "R" and len(forest) > 1 and len({b.node.text for b in forest}) == len(forest):
            top = self._parts(axis, forest)
            if top:
                parts, left_out, total = top
                out.append(Group(axis, (), parts, left_out, total, 0, self.table.n_rows - 1))
        return out

    def _own_row(self, b: Branch) -> int | None:
        """A row node's own row: its first row, when no child covers it (the group's subtotal)."""
        if b.children and b.node.start < b.children[0].node.start:
            return b.node.start
        return None

    def _value_position(self, axis: str, b: Branch) -> int | None:
        if b.node.start == b.node.end and not b.children:
            return b.node.start
        return self._own_row(b) if axis == "R" else None

    def _parts(self, axis: str, children: tuple[Branch, ...]):
        """(parts, summary labels left out, the summary child that is a total), or None when
        fewer than two parts have a row (or a numeric column) of their own."""
        parts, left_out, total = [], [], None
        for c in children:
            pos = self._value_position(axis, c)
            if pos is None:
                return None  # a part with no row (or column) of its own: nothing to add up
            if c.node in self.summary:
                left_out.append(c.node.text)
                if total is None and not NOT_A_SUM.search(c.node.text) and self._reachable(axis, pos):
                    total = Part(c.node.text, pos)
            elif axis == "R" and self.view_row[pos] is None:
                left_out.append(c.node.text)  # cleaning marked it a summary
            else:
                parts.append(Part(c.node.text, pos))
        if len(parts) < 2 or (axis == "C" and any(p.pos not in self.numeric for p in parts)):
            return None
        return tuple(parts), tuple(left_out), total

    def _reachable(self, axis: str, pos: int) -> bool:
        return axis == "C" or self.view_row[pos] is not None

    def _group(self, axis: str, b: Branch, path: tuple[str, ...]) -> Group | None:
        if not b.children:
            if axis != "R" or b.node.end <= b.node.start:
                return None
            rows = [r for r in range(b.node.start, b.node.end + 1) if self.view_row[r] is not None]
            if len(rows) < 2:
                return None
            return Group(axis, path, tuple(Part(None, r) for r in rows), (), None, b.node.start, b.node.end)
        found = self._parts(axis, b.children)
        if not found:
            return None
        parts, left_out, total = found
        own = self._own_row(b) if axis == "R" else None
        if own is not None and self.view_row[own] is not None:
            total = Part(b.node.text, own)
        return Group(axis, path, parts, left_out, total, b.node.start, b.node.end)

    @cached_property
    def flat_rows(self) -> Group | None:
        """The rows of a table whose row header is no tree, each named by its first column's text
        (unique), summary rows left out: a table with a column tree still compares its rows."""
        if any(n.axis == "R" for n in self.table.header):
            return None
        rows = [r for r, name in enumerate(self.row_names) if name and self.view_row[r] is not None]
        labelled = sum(1 for r in range(self.table.n_rows) if self.view_row[r] is not None
                       and pa.types.is_string(self.table.body.schema.field(0).type) and self.table.body.column(0)[r].as_py())
        if len(rows) < 3 or len(rows) < labelled:
            return None  # labels repeated block by block: the unique ones are the blocks' heads, not members
        if any(SUMMARY_TEXT.search(self.row_names[r][-1]) for r in rows):
            rows = [r for r in rows if not SUMMARY_TEXT.search(self.row_names[r][-1])]
            if len(rows) < 3:
                return None
        return Group("R", (), tuple(Part(self.row_names[r][-1], r) for r in rows), (), None, 0,
                     self.table.n_rows - 1, flat=True)

    @cached_property
    def row_units(self) -> list[str] | None:
        """Each row's unit, where a column named "Unit" gives one per row (a nutrient table)."""
        for j, f in enumerate(self.table.body.schema):
            if pa.types.is_string(f.type) and UNIT_NAME.match(self.table.columns[j].rpartition(PATH_SEPARATOR)[2]):
                return [str(v or "").strip().casefold() for v in self.table.body.column(j).to_pylist()]
        return None

    @cached_property
    def families(self) -> list[tuple[str, tuple[Part, ...]]]:
        """Labelled numeric columns that are siblings under one parent path (the column's path
        without its last label), in the order shown: one measure in several periods, places or
        kinds ("2019", "2020" under "Employed"). (parent, parts labelled by their last label.)"""
        by_parent: dict[str, list[Part]] = {}
        summary = set(self.table.summary_columns) | {j for n in self.summary if n.axis == "C"
                                                       for j in range(n.start, n.end + 1)}
        for j in self.labelled:
            label = self.column_label(j)
            parent, _, last = label.rpartition(PATH_SEPARATOR)
            if j in summary or SUMMARY_TEXT.search(last) or grand_total(last):
                continue  # a Total column is no member of its siblings' series
            by_parent.setdefault(parent, []).append(Part(last, j))
        out = []
        for parent, parts in by_parent.items():
            labels = [p.label for p in parts]
            if len(parts) >= 2 and len(set(labels)) == len(labels) and not _parts_say_nothing_labels(labels) \
                    and not columns_are_measures(labels):
                out.append((parent, tuple(parts)))
        return out

    # -- SQL --------------------------------------------------------------------------------
    def rowid(self, r: int) -> int:
        row = self.view_row[r]
        assert row is not None
        return row

    def rowids(self, rows: list[int]) -> str:
        return ", ".join(str(self.rowid(r)) for r in rows)

    def sum_sql(self, group: Group, other: int) -> str:
        """The sum of the group's parts: down column `other` (rows), or along row `other` (columns)."""
        if group.axis == "R":
            rows = self.rowids([p.pos for p in group.parts])
            return f"SELECT sum({q(self.table.columns[other])}) FROM {self.src} WHERE rowid IN ({rows})"
        return (f"SELECT {' + '.join(q(self.table.columns[p.pos]) for p in group.parts)} FROM {self.src} "
                f"WHERE rowid = {self.rowid(other)}")


TOP_ROWS = "that are not nested under another row"  # the top level of the row tree, as a reader says it


def _place(group: Group) -> str:
    if group.flat:
        return "in the table"
    return f'under "{quoted(group.path)}"' if group.path else TOP_ROWS


def _sum_candidates(view: TreeView, axis: str, flat: bool = False) -> list[tuple[Group, int]]:
    """(group, column) for row groups, (group, row) for column groups, with every part present.
    `flat`: also the named rows of a table whose row header has no tree (to compare, not to sum)."""
    out = []
    for group in view.groups(axis) + ([g for g in [view.flat_rows] if g] if flat and axis == "R" else []):
        others = view.labelled if axis == "R" else [r for r, name in enumerate(view.row_names)
                                                  if name and view.view_row[r] is not None]
        for other in others:
            cells = [(p.pos, other) if axis == "R" else (other, p.pos) for p in group.parts]
            if all(view.present(r, j) for r, j in cells):
                out.append((group, other))
    return out


def _cells(group: Group, other: int) -> list[tuple[int, int]]:
    return [(p.pos, other) if group.axis == "R" else (other, p.pos) for p in group.parts]


def _tolerance(view: TreeView, cells: list[tuple[int, int]]) -> float:
    """How far a sum of these cells may stand from a total and still be the same figure rounded."""
    return 0.5 * 10.0 ** -max(_decimals(view.cell(r, j)) for r, j in cells) * len(cells)


PERIOD = re.compile(r"^\s*((1[6-9]|20)\d\d-[01]\d(-[0-3]\d)?|(1[6-9]|20)\d\d([/-]\d{2,4})?|q[1-4]|(19|20)\d\d\s*q[1-4]|jan|feb|mar|apr|may|jun|jul|aug|sep|"
                    r"oct|nov|dec|january|february|march|april|june|july|august|september|october|november|december)"
                    r"(\s+(outturn|plans?|estimates?|provisional))?\s*$", re.IGNORECASE)
_LIMIT_WORDS = r"confidence (limit|interval)|lower|upper|bound|limit|ci|margin of error|standard error"
# a bound or a margin of an estimate, not the estimate itself: no change, difference or count of it
LIMIT = re.compile(rf"\b({_LIMIT_WORDS})\b|\+/-|\u00b1", re.IGNORECASE)
BOUND = re.compile(rf"\b({_LIMIT_WORDS}|estimate)\b|\+/-|\u00b1", re.IGNORECASE)  # also the estimate beside its bounds
PER_UNIT = re.compile(r"[^\s/]/[^\s/]")  # a ratio of units ("Mg/$", "kg/ha"): a rate, whose change is no growth


def _per_unit(label: str) -> bool:
    """Whether a column's own label is a ratio of units ("Mg/$"), not a period ("2010/11")."""
    last = label.rpartition(PATH_SEPARATOR)[2]
    return bool(PER_UNIT.search(last)) and not PERIOD.match(last)


UNIT_NAME = re.compile(r"^\s*units?\s*$", re.IGNORECASE)


def _parts_say_nothing(group: Group) -> str | None:
    """Parts that are no things of the table: an estimate with its confidence limits."""
    return _parts_say_nothing_labels([p.label or "" for p in group.parts])


def _parts_say_nothing_labels(labels: list[str | None]) -> str | None:
    if sum(bool(BOUND.search(label or "")) for label in labels) >= 2:
        return "bounds"
    return None


def _adds(ctx: "Context", view: TreeView, j: int) -> bool:
    """Whether column j holds a measure whose parts add up to a whole (counts, amounts), by the
    column semantics (`TableProfile.additive`), or, for a column named only by a year or a
    place, by the table's caption ("Live weight, Tonnes"; not "Unemployment rates")."""
    name, label, caption = view.table.columns[j], view.column_label(j), view.table.caption
    if NOT_ADDITIVE.search(label) or (label != name and NOT_ADDITIVE.search(name)) or NOT_ADDITIVE.search(caption):
        return False  # a rate in the column's path, or a table of rates ("Total" of rates is a rate)
    if name in ctx.profile.role and ctx.profile.additive(name):
        return True
    return bool(ADDITIVE.search(caption))


def why_not_summed(ctx: "Context", view: TreeView, group: Group, other: int) -> str | None:
    """None when the sum of a group's parts means something; else the reason it does not.
    A sum is asked only over measures that add (not rates, shares, medians, indexes, bounds,
    ids or positions), of one unit, and only where the sheet's own total confirms that the parts
    add up, or, with no total, where the nesting is certain (not read from indentation alone)."""
    columns = [other] if group.axis == "R" else [p.pos for p in group.parts]
    if not all(_adds(ctx, view, j) for j in columns):
        return "not_additive"
    units = {ctx.profile.info[view.table.columns[j]].unit if view.table.columns[j] in ctx.profile.info else ""
             for j in columns}
    if len(units) > 1:
        return "mixed_units"
    labels = [p.label or "" for p in group.parts] if group.axis == "R" else list(view.row_names[other] or ())
    if any(NOT_ADDITIVE.search(label) for label in labels):
        return "not_additive"  # a "% change" row, a "Mean" part
    if group.parts and all(PERIOD.match(p.label or "") for p in group.parts):
        return "over_time"  # 2022 + 2023: a level summed over periods is no quantity
    if _parts_say_nothing(group):
        return "bounds"
    if ranges_overlap([p.label for p in group.parts]):
        return "overlapping_parts"
    if group.total is not None:
        total_cell = (group.total.pos, other) if group.axis == "R" else (other, group.total.pos)
        if not view.present(*total_cell):
            return "total_missing"
        cells = _cells(group, other) + [total_cell]
        if abs(float(view.cell(*total_cell)) - float(sum_of_parts(view, group, other))) > _tolerance(view, cells):
            return "parts_do_not_add_up"  # the sheet itself says these are not the parts of that whole
        return None
    if group.axis == "R" and "indented_row_header" in view.table.structure:
        return "nesting_uncertain"
    return None


def summable(ctx: "Context", view: TreeView, axis: str) -> list[tuple[Group, int]]:
    """The (group, other) sums worth asking; every other candidate is rejected with its reason."""
    out = []
    for group, other in _sum_candidates(view, axis):
        reason = why_not_summed(ctx, view, group, other)
        if reason:
            ctx.reject(reason)
        else:
            out.append((group, other))
    return out


def sum_of_parts(view: TreeView, group: Group, other: int) -> int | float:
    cells = [(p.pos, other) if group.axis == "R" else (other, p.pos) for p in group.parts]
    return whole_if_counted(sum(float(view.cell(r, j)) for r, j in cells), [view.cell(r, j) for r, j in cells])


def whole_if_counted(result: float, values: list[int | float]) -> int | float:
    """A sum or difference of whole numbers is a whole number (580 fields counted, not 580.0 to be
    rounded to 2 decimals), even where the column is stored as floats (a blank cell among counts)."""
    if all(float(v).is_integer() for v in values) and abs(result) < 2 ** 53:
        return int(round(result))
    return float(result)


def has_totals(view: TreeView, group: Group) -> bool:
    """Whether a group has a total or summary entry to leave out: a summary child, its own
    (subtotal) row, a marked row among its rows, or, for the rows of a table without a row tree, a
    summary row. Only then does a question say it leaves totals out."""
    if group.left_out or group.total is not None:
        return True
    if group.axis != "R":
        return False
    if group.flat:
        return bool(view.table.summary_rows) or any(
            name and SUMMARY_TEXT.search(name[-1]) for name in view.row_names) or bool(view.group_totals)
    return any(view.view_row[r] is None for r in range(group.start, group.end + 1))


def _sum_slots(view: TreeView, group: Group, other: int) -> dict[str, Any]:
    entries = "rows" if group.axis == "R" else "columns"
    where = f"column \"{view.column_label(other)}\"" if group.axis == "R" else f"row {under(view.row_names[other])}"
    totals = has_totals(view, group)
    kind = "row" if group.axis == "R" else "column"
    return {"place": _place(group), "n": len(group.parts), "entries": entries, "other": where,
            "leaving_out": ", leaving out totals" if totals else "", "no_totals": " (no totals)" if totals else "",
            "skip_totals": f", leaving out any total or summary {kind}" if totals else "",
            "skip_entries": ", leaving out any total or summary entry" if totals else "",
            "aside": " (totals and averages aside)" if totals else "",
            "not_counting": " (not counting totals or averages)" if totals else "",
            "not_counting_totals": ", not counting totals" if totals else "",
            "leave_out": " Leave out any total or summary row." if totals else "",
            "column": view.column_label(other) if group.axis == "R" else "",
            "row": under(view.row_names[other]) if group.axis == "C" else ""}


def _view(ctx: "Context") -> TreeView | None:
    table = ctx.profile.table
    if not table.is_hierarchical:
        ctx.reject("not_hierarchical")
        return None
    return TreeView(table, ctx.profile.role)


# ------------------------------------------------------------------------------ ops

@op("tree_sum", params=("axis",), tree=True)
def op_tree_sum(ctx: "Context") -> None:
    """The sum of a group's parts in one column (or, for a column group, along one row)."""
    view = _view(ctx)
    if view is None:
        return
    axis = ctx.template.params.get("axis", "R")
    cands = summable(ctx, view, axis)
    ctx.considered(len(cands))
    if not cands:
        return ctx.reject("no_group_to_sum")
    for i in ctx.pick(list(range(len(cands)))):
        group, other = cands[i]
        ctx.emit(_sum_slots(view, group, other), sum_of_parts(view, group, other),
                 program=("sql", view.sum_sql(group, other)), answer_type="number")


@op("tree_extreme", params=("axis", "extreme"), tree=True)
def op_tree_extreme(ctx: "Context") -> None:
    """The part of a group with the highest (or lowest) value in one column, or, for a column
    group, the sub-column highest along one row: what a reader asks of rates and shares that must
    not be summed. Totals and summary rows are no parts; a tie has no single answer; the parts of
    a column group must measure one thing (not a count beside its percentage change)."""
    view = _view(ctx)
    if view is None:
        return
    axis, extreme = ctx.template.params.get("axis", "R"), ctx.template.params.get("extreme", "max")
    cands = []
    for group, other in _sum_candidates(view, axis, flat=True):
        if any(p.label is None for p in group.parts):
            ctx.reject("unnamed_parts")
        elif axis == "R" and not_parts(view, group):
            ctx.reject(not_parts(view, group) or "")
        elif axis == "R" and BOUND.search(view.column_label(other)):
            ctx.reject("bounds")
        elif _parts_say_nothing(group):
            ctx.reject("bounds")
        elif sem.numbered_labels(p.label for p in group.parts):
            ctx.reject("numbered_labels")  # Field_1 .. Field_30: the answer would be a sample's number
        elif axis == "C" and len({bool(NOT_ADDITIVE.search(view.column_label(p.pos))) for p in group.parts}) > 1:
            ctx.reject("mixed_measures")
        elif axis == "C" and columns_are_measures([p.label for p in group.parts]):
            ctx.reject("columns_are_measures")
        else:
            cands.append((group, other))
    ctx.considered(len(cands))
    if not cands:
        return ctx.reject("no_group_to_compare")
    emitted = 0
    for i in ctx.pick(list(range(len(cands))), cap=len(cands)):
        if emitted >= ctx.cap:
            break
        group, other = cands[i]
        values = [float(view.cell(r, j)) for r, j in _cells(group, other)]
        best = max(values) if extreme == "max" else min(values)
        if values.count(best) > 1:
            ctx.reject("tie")
            continue
        label = group.parts[values.index(best)].label
        order = "DESC" if extreme == "max" else "ASC"
        if axis == "R":
            case = " ".join(f"WHEN {view.rowid(p.pos)} THEN {lit(p.label)}" for p in group.parts)
            program = (f"SELECT CASE rowid {case} END FROM {view.src} WHERE rowid IN ({view.rowids([p.pos for p in group.parts])}) "
                       f"ORDER BY {q(view.table.columns[other])} {order} LIMIT 1")
        else:
            names = "[" + ", ".join(lit(p.label) for p in group.parts) + "]"
            cells = "[" + ", ".join(f"CAST({q(view.table.columns[p.pos])} AS DOUBLE)" for p in group.parts) + "]"
            program = (f"SELECT name FROM (SELECT unnest({names}) AS name, unnest({cells}) AS v FROM {view.src} "
                       f"WHERE rowid = {view.rowid(other)}) ORDER BY v {order} LIMIT 1")
        ctx.emit(_sum_slots(view, group, other), label, program=("sql", program), answer_type="text")
        emitted += 1


def _decimals(value: float) -> int:
    text = repr(float(value))
    return 0 if "e" in text or text.endswith(".0") else min(6, len(text.split(".")[1]))


@op("tree_total_check", params=("axis",), tree=True)
def op_tree_total_check(ctx: "Context") -> None:
    """Is a group's total (its own row, or its Total child) the sum of its parts, to within
    the rounding of the values? Differences just beyond rounding are left out as ambiguous."""
    view = _view(ctx)
    if view is None:
        return
    axis = ctx.template.params.get("axis", "R")
    cands = [(g, o) for g, o in _sum_candidates(view, axis) if g.total is not None
             and view.present(*((g.total.pos, o) if axis == "R" else (o, g.total.pos)))
             and all(_adds(ctx, view, j) for j in ([o] if axis == "R" else [p.pos for p in g.parts]))]
    ctx.considered(len(cands))
    if not cands:
        return ctx.reject("no_group_with_a_total")
    emitted = 0
    for i in ctx.pick(list(range(len(cands))), cap=len(cands)):
        if emitted >= ctx.cap:
            break
        group, other = cands[i]
        total_cell = (group.total.pos, other) if axis == "R" else (other, group.total.pos)
        total = view.cell(*total_cell)
        parts = sum_of_parts(view, group, other)
        tolerance = _tolerance(view, _cells(group, other) + [total_cell])
        difference = abs(float(total) - float(parts))
        if tolerance < difference <= 10 * tolerance:
            ctx.reject("near_rounding")
            continue
        if axis == "R":
            total_sql = f"(SELECT {q(view.table.columns[other])} FROM {view.src} WHERE rowid = {view.rowid(group.total.pos)})"
        else:
            total_sql = f"(SELECT {q(view.table.columns[group.total.pos])} FROM {view.src} WHERE rowid = {view.rowid(other)})"
        program = f"SELECT abs({total_sql} - ({view.sum_sql(group, other)})) <= {lit(float(tolerance))}"
        own = group.path and group.total.label == group.path[-1] and group.total.pos == group.start
        named = f'the "{group.total.label}" row itself' if own else f'"{group.total.label}"'
        slots = {**_sum_slots(view, group, other), "total": named}
        ctx.emit(slots, bool(difference <= tolerance), program=("sql", program), answer_type="bool")
        emitted += 1


def _named_cells(view: TreeView, moved: set[int] | None = None, axis: str = "R") -> list[tuple[int, int]]:
    """(row, column) cells named by a path that goes through the tree: the row under a parent,
    or the column under a column group. `moved`: only cells whose row (or column) moved."""
    out = []
    for r, name in enumerate(view.row_names):
        if not name or view.view_row[r] is None:
            continue
        for j in view.labelled:
            if moved is not None and (r if axis == "R" else j) not in moved:
                continue
            if (len(name) > 1 or PATH_SEPARATOR in view.column_label(j)) and view.present(r, j) and written(view.cell(r, j)):
                out.append((r, j))
    return out


@op("tree_fact", params=(), tree=True)
def op_tree_fact(ctx: "Context") -> None:
    """A claim about one leaf found by its paths, half true; a false claim reads the wrong row
    (another row's value in the same column), the confusion a flattened reading makes."""
    view = _view(ctx)
    if view is None:
        return
    cands = _named_cells(view)
    ctx.considered(len(cands))
    for i, idx in enumerate(ctx.pick(list(range(len(cands))))):
        r, j = cands[idx]
        value = view.cell(r, j)
        truth = i % 2 == 0
        claim: int | float = value
        if not truth:
            others = sorted({view.cell(o, j) for o in range(view.table.n_rows) if o != r and view.present(o, j)
                             and _show(view.cell(o, j)) != _show(value) and written(view.cell(o, j))})
            if not others:
                ctx.reject("no_false_variant")
                continue
            claim = others[int(ctx.rng.integers(len(others)))]
        program = f"SELECT {q(view.table.columns[j])} = {lit(claim)} FROM {view.src} WHERE rowid = {view.rowid(r)}"
        slots = {"row": under(view.row_names[r]), "column": view.column_label(j), "claim": _show(claim)}
        ctx.emit(slots, truth, program=("sql", program), answer_type="bool")


def written(value: int | float) -> bool:
    """A value as a sheet writes it (at most 4 decimals), not a computed float the sheet shows
    rounded (20.4295339312698 shown as 20.4): a claim about that is about the float's noise."""
    return _decimals(value) <= 4


def _show(value: int | float) -> str:
    """A number as a person writes it: 1072.4, not 1072.3999999999999; 12, not 12.0. (The rules'
    `show` keeps every digit of repr: its claims are rounded already, these are stored cells.)"""
    return str(value) if isinstance(value, int) else f"{float(value):.10g}"


def _is_whole(view: TreeView, group: Group, other: int) -> bool:
    if group.total is None or not view.present(group.total.pos, other):
        return False
    total = float(view.cell(group.total.pos, other))
    return abs(total - float(sum_of_parts(view, group, other))) <= 0.01 * abs(total)


@op("tree_chart", params=("chart",), tree=True)
def op_tree_chart(ctx: "Context") -> None:
    """A chart of a group's labelled parts: bars or a pie down a column, a line along a row
    across a column group. Gold: {chart_type, x (the labels), y (the values to plot)}."""
    view = _view(ctx)
    if view is None:
        return
    chart = ctx.template.params.get("chart", "bar")
    axis = "C" if chart == "line" else "R"
    cands = [(g, o) for g, o in _sum_candidates(view, axis)
             if all(p.label for p in g.parts) and len(g.parts) <= MAX_CHART_PARTS
             and (axis == "R" or len(g.parts) >= 3) and not _parts_say_nothing(g)
             and not (axis == "R" and not_parts(view, g))
             and not (axis == "C" and len({bool(NOT_ADDITIVE.search(view.column_label(p.pos))) for p in g.parts}) > 1)
             and len({view.cell(r, j) for r, j in _cells(g, o)}) > 1]  # one value merged over the group: no chart
    if chart == "pie":  # shares of a whole: positive parts that add up to the group's total
        cands = [(g, o) for g, o in cands if all(view.cell(p.pos, o) > 0 for p in g.parts) and _is_whole(view, g, o)]
    ctx.considered(len(cands))
    if not cands:
        return ctx.reject("no_labelled_group")
    for i in ctx.pick(list(range(len(cands)))):
        group, other = cands[i]
        x = [p.label for p in group.parts]
        labels = "[" + ", ".join(lit(v) for v in x) + "]"
        if axis == "R":
            y = [float(view.cell(p.pos, other)) for p in group.parts]
            values = f"list(CAST({q(view.table.columns[other])} AS DOUBLE) ORDER BY rowid)"
            where = f"rowid IN ({view.rowids([p.pos for p in group.parts])})"
        else:
            y = [float(view.cell(other, p.pos)) for p in group.parts]
            values = "[" + ", ".join(f"CAST({q(view.table.columns[p.pos])} AS DOUBLE)" for p in group.parts) + "]"
            where = f"rowid = {view.rowid(other)}"
        program = f"SELECT {{'chart_type': {lit(chart)}, 'x': {labels}, 'y': {values}}} FROM {view.src} WHERE {where}"
        ctx.emit(_sum_slots(view, group, other), {"chart_type": chart, "x": x, "y": y}, program=("sql", program),
                 answer_type="chart")


# ------------------------------------------------------------------------------ Structure Comprehending

@dataclass(frozen=True)
class Swap:
    table: Table  # the copy with the two blocks exchanged
    axis: str
    parent: tuple[str, ...]  # the path of the blocks' parent, as the header holds it
    shown: tuple[str, ...]  # that path as a question names it (a title read into the header left out)
    first: tuple[str, ...]  # the labels of the block that stood first
    second: tuple[str, ...]
    moved: frozenset[int]  # the copy's rows (or columns) that changed place
    order: tuple[int, ...]  # the copy's row (or column) -> the original's

    @property
    def description(self) -> str:
        where = f'under "{quoted(self.shown)}"' if self.shown else "at the top level"
        return f"{self.axis}: {quoted(self.first)} <-> {quoted(self.second)} {where}"


def swap_candidates(view: TreeView) -> list[tuple[str, tuple[str, ...], tuple[str, ...], Branch, Branch]]:
    """Adjacent sibling blocks that can change places, among siblings with distinct labels; for
    columns, blocks of numeric columns only (a stub column moved into the data is not a structure
    question); never a total or a subtotal ("Africa Total" beside "Africa"), which is no sibling."""
    numeric = set(view.numeric)
    out = []
    for axis in ("R", "C"):
        def visit(level: tuple[Branch, ...], path: tuple[str, ...], shown: tuple[str, ...]) -> None:
            labels = [x.node.text for x in level]
            if len(set(labels)) < len(labels):
                return  # repeated labels: neither the blocks nor what lies under them has a path of its own
            for a, b in zip(level, level[1:]):
                if axis == "C" and not all(j in numeric for j in range(a.node.start, b.node.end + 1)):
                    continue
                if any(x.node in view.summary or grand_total(x.node.text) or total_of(x.node.text) for x in (a, b)):
                    continue  # a group with its subtotal, or a total: no sibling blocks to exchange
                out.append((axis, path, shown, a, b))
            for x in level:
                visit(x.children, path + (x.node.text,), shown if view.is_title(x.node) else shown + (x.node.text,))
        visit(branches(view.table.header, axis), (), ())  # type: ignore[arg-type]
    return out


def swapped(table: Table, axis: str, parent: tuple[str, ...], shown: tuple[str, ...], first: Branch,
            second: Branch) -> Swap:
    """A copy of the table with two sibling blocks exchanged, rows or columns moving with them."""
    size = table.n_rows if axis == "R" else table.n_cols
    header, order = exchanged(table.header, axis, first, second, size)  # type: ignore[arg-type]
    new_of = {old: new for new, old in enumerate(order)}
    remap = lambda marks: tuple(sorted(new_of[m] for m in marks if m in new_of))  # noqa: E731
    if axis == "R":
        body = table.body.take(order)
        changes = {"summary_rows": remap(table.summary_rows)}
    else:
        body = table.body.select(order)
        changes = {"summary_columns": remap(table.summary_columns), "empty_columns": remap(table.empty_columns),
                   "constant_columns": remap(table.constant_columns)}
    copy = table.replace(name=f"{table.name} (blocks exchanged)", body=body, header=header,
                         flags=tuple(dict.fromkeys((*table.flags, "swapped"))), **changes)
    moved = frozenset(new for new, old in enumerate(order) if new != old)
    return Swap(copy, axis, parent, shown, (first.node.text,), (second.node.text,), moved, tuple(order))


def _order_unasked(swap: Swap) -> str:
    """Why "in what order are the entries under P shown?" asks nothing of this swap, or "":
    some entries under P have no label (a gold of the labelled ones only leaves out the columns a
    reader sees as "column 1"), the top level of an axis whose entries nest nothing (the question
    is then the header read out), or labels that are running numbers (row numbers, not names)."""
    level = branches(swap.table.header, swap.axis)  # type: ignore[arg-type]
    span = (0, (swap.table.n_rows if swap.axis == "R" else swap.table.n_cols) - 1)
    for label in swap.parent:
        found = next(b for b in level if b.node.text == label)
        level, span = found.children, (found.node.start, found.node.end)
    covered = sorted(i for b in level for i in range(b.node.start, b.node.end + 1))
    if covered != list(range(span[0], span[1] + 1)):
        return "unnamed_siblings"
    if not swap.parent and not any(b.children for b in level):
        return "flat_level"
    labels = [b.node.text for b in level]
    if all(re.fullmatch(r"\s*\d+\s*", x) and not PERIOD.match(x) for x in labels):
        return "numbered_siblings"
    return ""


def table_swap(ctx: "Context") -> Swap | None:
    """The one exchange drawn for this table (the same for every SC template)."""
    from curate.curation.pipeline.rng import record_rng

    table = ctx.profile.table
    cands = swap_candidates(TreeView(table, ctx.profile.role))
    if not cands:
        return None
    rng = record_rng(ctx.seed, table.id, SWAP_PURPOSE)
    axis, parent, shown, a, b = cands[int(rng.integers(len(cands)))]
    try:
        return swapped(table, axis, parent, shown, a, b)
    except ValueError:
        return None


@op("tree_swap", params=("ask",), tree=True)
def op_tree_swap(ctx: "Context") -> None:
    """Questions about a copy of the table with two sibling blocks exchanged. `ask`: "order"
    (the labels under the blocks' parent, in the order shown: the gold follows the swap),
    "value" (a moved cell found by its paths: the gold is the value, wherever it moved) or
    "sum" (a group's parts summed, the moved ones among them). Each sample's provenance keeps
    `gold_before_swap`: the same question's answer on the original table."""
    if not ctx.profile.table.is_hierarchical:
        return ctx.reject("not_hierarchical")
    swap = table_swap(ctx)
    if swap is None:
        ctx.considered(1)
        return ctx.reject("no_sibling_blocks")
    ctx.derived.append(swap.table)
    view, original = TreeView(swap.table, ctx.profile.role, like=ctx.profile.table), TreeView(ctx.profile.table, ctx.profile.role)
    ids = (swap.table.id,)

    def provenance(before: Any) -> dict[str, str]:
        return {"swapped_from": ctx.profile.table.id, "exchange": swap.description,
                "gold_before_swap": json.dumps(before, ensure_ascii=False)}

    def before(r: int, j: int) -> int | float:  # the original's cell at the copy's (r, j)
        return original.cell(swap.order[r], j) if swap.axis == "R" else original.cell(r, swap.order[j])

    ask = ctx.template.params.get("ask", "order")
    if ask == "order":
        ctx.considered(1)
        unasked = _order_unasked(swap)
        if unasked:
            return ctx.reject(unasked)
        labels = children_labels(swap.table.header, swap.axis, swap.parent)  # type: ignore[arg-type]
        program = json.dumps({"table": swap.table.id, "field": "children", "axis": swap.axis,
                              "path": list(swap.parent)})
        slots = {"entries": "rows" if swap.axis == "R" else "columns",
                 "place": f'directly under "{quoted(swap.shown)}"' if swap.shown
                 else f"that are not nested under another {'row' if swap.axis == 'R' else 'column'}"}
        ctx.emit(slots, labels, program=("metadata", program), answer_type="list", table_ids=ids,
                 provenance=provenance(children_labels(ctx.profile.table.header, swap.axis, swap.parent)))
    elif ask == "value":
        cands = _named_cells(view, set(swap.moved), swap.axis)
        ctx.considered(len(cands))
        for idx in ctx.pick(list(range(len(cands)))):
            r, j = cands[idx]
            program = f"SELECT {q(swap.table.columns[j])} FROM {view.src} WHERE rowid = {view.rowid(r)}"
            ctx.emit({"row": under(view.row_names[r]), "column": view.column_label(j)}, view.cell(r, j),
                     program=("sql", program), answer_type="number", table_ids=ids, provenance=provenance(before(r, j)))
    else:
        cands = [(g, o) for g, o in summable(ctx, view, swap.axis) if any(p.pos in swap.moved for p in g.parts)]
        ctx.considered(len(cands))
        for idx in ctx.pick(list(range(len(cands)))):
            group, other = cands[idx]
            cells = [(p.pos, other) if swap.axis == "R" else (other, p.pos) for p in group.parts]
            ctx.emit(_sum_slots(view, group, other), sum_of_parts(view, group, other),
                     program=("sql", view.sum_sql(group, other)), answer_type="number", table_ids=ids,
                     provenance=provenance(sum(before(r, j) for r, j in cells)))

# ------------------------------------------------------------------------------ what a reader of the sheet asks
# RealHiTBench's authors ask of a group named by the tree: conditional counts, differences and
# changes between two cells or periods, percentage increases, the first period past a threshold,
# scatter and two-series charts. Parts are a group's members (totals, summaries and group rows
# left out); a series is a family of sibling columns whose labels are periods, or a row group
# whose labels are periods, in the order shown.

def _is_period_labels(labels: list[str | None]) -> bool:
    return len(labels) >= 2 and all(PERIOD.match(label or "") for label in labels)


def _threshold(values: list[float]) -> int | float | None:
    """A round threshold (1, then 2, then 3 significant figures) that 20-80% of the values pass,
    equal to none of them (so "above" never hangs on a tie)."""
    xs = sorted(values)
    n = len(xs)
    middle = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    for significant in (1, 2, 3):
        t = rounded(middle, significant)
        if isinstance(t, float) and t.is_integer() and abs(t) < 2 ** 53:
            t = int(t)
        above = sum(v > t for v in xs)
        if t not in xs and 0 < above < n and 0.2 * n <= above <= 0.8 * n:
            return t
    return None


RELATIVE_LABEL = re.compile(r"%|\b(percent(age)?|rate|ratio|share|per)\b", re.IGNORECASE)
CODE_LABEL = re.compile(r"^\s*([A-Za-z]{0,4}[-_ ]?\d+[A-Za-z]?|\d+(\.\d+)*)\s*$")  # "EM2058", "11", "3.2"


RANGE = re.compile(r"(\d+)\s*(?:to|-|\u2013)\s*(\d+)|(\d+)\s*(?:years?\s*)?(?:and|or)\s*(?:over|older|more|above)|"
                   r"(?:under|less than|below)\s*(\d+)", re.IGNORECASE)


def _interval(label: str) -> tuple[float, float] | None:
    m = RANGE.search(label.replace(",", ""))
    if not m:
        return None
    if m.group(1):
        return float(m.group(1)), float(m.group(2))
    if m.group(3):
        return float(m.group(3)), float("inf")
    return float("-inf"), float(m.group(4)) - 1e-9


def ranges_overlap(labels: list[str | None]) -> bool:
    """Members whose labels are ranges ("16 to 24 years", "20 to 24 years", "25 years and over")
    that overlap: one holds another, so they are no disjoint parts (an indented nesting read flat)."""
    spans = [(x, _interval(x or "")) for x in labels]
    spans = [(x, i) for x, i in spans if i is not None]
    for k, (a, i) in enumerate(spans):
        for b, j in spans[k + 1:]:
            if i != j and i[0] <= j[1] and j[0] <= i[1] and not (i[1] == j[0] or j[1] == i[0]):
                return True
    return False


def rows_are_measures(group: Group) -> bool:
    """Members that are no cases to compare: two or more labelled as measures (the rows are
    variables, not cases), one relative measure among counts ("Percent of total employed" among
    occupations), or most labelled by a code or a number (row numbers, ids: nothing a reader names)."""
    labels = [p.label or "" for p in group.parts]
    if sum(bool(MEASURE_LABEL.search(x)) for x in labels) >= 2 or any(RELATIVE_LABEL.search(x) for x in labels):
        return True
    if ranges_overlap(labels):
        return True  # "16 to 24 years" beside "20 to 24 years": not parts of one whole
    return 2 * sum(bool(CODE_LABEL.match(x)) and not PERIOD.match(x) for x in labels) > len(labels)


# a column labelled by an amount ("100g", "114g", "(85 g)"): one measure per portion, each the others scaled
PORTION = re.compile(r"^\s*\(?\s*\d+(\.\d+)?\s*(g|kg|mg|mcg|\u00b5g|ml|l|oz|lb|cup|tbsp|tsp)s?\s*\)?\s*$", re.IGNORECASE)


def columns_are_measures(labels: list[str | None]) -> bool:
    """Sibling columns that measure different things ("No. of total DCs", "No. of infected DCs",
    "% infected"), overlapping ranges, or portions ("100g", "114g": the larger portion always
    holds more): which of them is highest compares unlike figures."""
    labels = [x or "" for x in labels]
    return sum(bool(MEASURE_LABEL.search(x)) for x in labels) >= 2 or ranges_overlap(labels) \
        or all(PORTION.match(x) for x in labels)


def subtotals_among(view: TreeView, group: Group) -> bool:
    """A member whose row is the sum of the next two or more members' rows, in at least two
    columns: a subtotal with its own parts beside it (a nesting by indentation read flat)."""
    if group.axis != "R" or len(group.parts) < 3:
        return False
    columns = [j for j in view.labelled if all(view.present(p.pos, j) for p in group.parts)]
    if len(columns) < 2:
        return False
    rows = [[float(view.cell(p.pos, j)) for j in columns] for p in group.parts]
    for i in (0, len(rows) - 1):  # a first or last member holding the sum of all the others: their total
        others = [m for m in range(len(rows)) if m != i]
        hits = 0
        for c in range(len(columns)):
            difference = abs(rows[i][c] - sum(rows[m][c] for m in others))
            rounding = 0.5 * len(rows) * 10.0 ** -max(_decimals(rows[m][c]) for m in range(len(rows)))
            hits += rows[i][c] != 0 and (difference == 0 or difference <= min(rounding, 0.005 * abs(rows[i][c])))
        if hits >= 2 and hits * 2 > len(columns):
            return True

    def adds_up(i: int, k: int, c: int) -> bool:  # row i is rows i+1..k-1 summed, to within rounding
        difference = abs(rows[i][c] - sum(rows[m][c] for m in range(i + 1, k)))
        rounding = 0.5 * (k - i) * 10.0 ** -max(_decimals(rows[m][c]) for m in range(i, k))
        return rows[i][c] != 0 and (difference == 0 or difference <= min(rounding, 0.005 * abs(rows[i][c])))

    for i in range(len(rows) - 2):
        for k in range(i + 3, len(rows) + 1):
            hits = sum(1 for c in range(len(columns)) if adds_up(i, k, c))
            if hits >= 2 and hits * 2 > len(columns):
                return True
    return False


def not_parts(view: TreeView, group: Group) -> str | None:
    """Why a row group's members cannot be compared, counted or charted as cases (None: they can)."""
    if group.axis != "R":
        return None
    cache = view.__dict__.setdefault("_not_parts", {})
    key = (group.path, group.flat, group.start, group.end)
    if key not in cache:
        cache[key] = _not_parts(view, group)
    return cache[key]


def _not_parts(view: TreeView, group: Group) -> str | None:
    labels = [p.label for p in group.parts]
    if len(set(labels)) < len(labels):
        return "repeated_labels"  # "Women" under White and under Asian, read flat: which one?
    if rows_are_measures(group):
        return "rows_are_measures"
    if subtotals_among(view, group):
        return "subtotals_among_members"
    units = view.row_units
    if units and len({units[p.pos] for p in group.parts}) > 1:
        return "mixed_units"  # grams beside milligrams ("Unit": g, mg, kcal): unlike figures
    return None


def _labelled_groups(view: TreeView) -> list[Group]:
    """Row groups whose members each have a label and are cases, not measures (and the flat rows
    of a table without a row tree)."""
    out = [g for g in view.groups("R") if all(p.label for p in g.parts) and not _parts_say_nothing(g)]
    out += [view.flat_rows] if view.flat_rows else []
    return [g for g in out if not not_parts(view, g)]


def _named_rows(view: TreeView) -> list[int]:
    return [r for r, name in enumerate(view.row_names) if name and view.view_row[r] is not None]


def _measure_words(view: TreeView, columns: list[int]) -> str:
    return " ".join([view.table.caption] + [view.column_label(j) for j in columns])


@op("tree_count", params=(), tree=True)
def op_tree_count(ctx: "Context") -> None:
    """How many members of a row group pass a round threshold in one column (NR counting)."""
    view = _view(ctx)
    if view is None:
        return
    cands = []
    for group, j in _sum_candidates(view, "R", flat=True):
        if len(group.parts) < 4 or any(p.label is None for p in group.parts) or not_parts(view, group) \
                or BOUND.search(view.column_label(j)):
            continue
        values = [float(view.cell(p.pos, j)) for p in group.parts]
        t = _threshold(values)
        if t is None:
            ctx.reject("no_round_threshold")
            continue
        cands.append((group, j, t, sum(v > t for v in values)))
    ctx.considered(len(cands))
    if not cands:
        return ctx.reject("no_group_to_count")
    for i in ctx.pick(list(range(len(cands)))):
        group, j, t, count = cands[i]
        program = (f"SELECT count(*) FROM {view.src} WHERE rowid IN ({view.rowids([p.pos for p in group.parts])}) "
                   f"AND {q(view.table.columns[j])} > {lit(t)}")
        ctx.emit({**_sum_slots(view, group, j), "threshold": _show(t)}, count, program=("sql", program),
                 answer_type="number")


def _cell_sql(view: TreeView, r: int, j: int) -> str:
    return f"(SELECT {q(view.table.columns[j])} FROM {view.src} WHERE rowid = {view.rowid(r)})"


def _pairs(n: int) -> list[tuple[int, int]]:
    """Neighbours, and the first with the last: the comparisons a reader makes along a series."""
    pairs = [(i, i + 1) for i in range(n - 1)]
    return pairs + ([(0, n - 1)] if n > 2 else [])


def _series(view: TreeView, axis: str, periods: bool) -> list[tuple[str, tuple[Part, ...], int]]:
    """(how the series is named, its members, the row or column it runs along): sibling columns
    along a named row (axis C), or a row group's members down a column (axis R); `periods`: only
    those whose labels are all periods, else only those whose labels are none."""
    out = []
    if axis == "C":
        rows = [r for r in _named_rows(view) if not LIMIT.search((view.row_names[r] or ("",))[-1])]
        for parent, parts in view.families:
            if _is_period_labels([p.label for p in parts]) != periods:
                continue
            if not periods and any(PERIOD.match(p.label or "") for p in parts):
                continue
            if not periods and not parent:
                continue  # columns that share no parent measure different things ("N" beside "Raw")
            if len({bool(NOT_ADDITIVE.search(view.column_label(p.pos))) for p in parts}) > 1:
                continue  # a count beside its percentage change: not one measure
            for r in rows:
                if all(view.present(r, p.pos) for p in parts):
                    out.append((parent, parts, r))
    else:
        for group in _labelled_groups(view):
            labels = [p.label for p in group.parts]
            if _is_period_labels(labels) != periods or (not periods and any(PERIOD.match(x or "") for x in labels)):
                continue
            for j in view.labelled:
                if not BOUND.search(view.column_label(j)) and all(view.present(p.pos, j) for p in group.parts):
                    out.append((quoted(group.path) if not group.flat else "", group.parts, j))
    return out


_MONTHS = {m[:3].lower(): i for i, m in enumerate(MONTHS, 1)}  # "jan": 1, as a period label abbreviates it


def _when(label: str) -> tuple[int, int, int] | None:
    """(year, month, day) of a dated period label: "2022-04-23", "2019 Q3" (its last month), "2020 Jan",
    "2019/20" and "2019" (the year); None for one without a year or in another form."""
    m = re.match(r"^\s*((?:1[6-9]|20)\d\d)\s*(.*?)\s*$", label or "")
    if m is None:
        return None
    year, rest = int(m.group(1)), m.group(2).lower()
    if not rest or re.fullmatch(r"[/-]\d{2}(\d{2})?", rest) and not re.fullmatch(r"-(0[1-9]|1[0-2])", rest):
        return year, 0, 0  # a year, or a fiscal year "2019/20"
    if d := re.fullmatch(r"-(0[1-9]|1[0-2])(?:-([0-3]\d))?", rest):
        return year, int(d.group(1)), int(d.group(2) or 0)
    if q := re.fullmatch(r"q([1-4])", rest):
        return year, 3 * int(q.group(1)), 0
    if rest[:3] in _MONTHS and rest.isalpha():
        return year, _MONTHS[rest[:3]], 0
    return None


def _forward_in_time(parts: tuple[Part, ...]) -> tuple[Part, ...] | None:
    """A series of periods from earliest to latest, so "from a to b, the later minus the earlier"
    has one reading: as shown, reversed where the table lists the latest first, and None where dated
    labels are in no order (a fixture list's match days: one row is no later state of another) or two
    fall on one date. Periods without a year ("Q1", "Jan", "2020 outturn") stay as shown."""
    keys = [_when(part.label or "") for part in parts]
    if any(k is None for k in keys):
        return parts
    if all(a < b for a, b in zip(keys, keys[1:])):
        return parts
    if all(a > b for a, b in zip(keys, keys[1:])):
        return parts[::-1]
    return None


def _changes(view: TreeView, axis: str) -> list[tuple[str, tuple[Part, ...], int]]:
    """The series a change from one period to another is asked of, each earliest first."""
    out = []
    for name, parts, other in _series(view, axis, True):
        forward = _forward_in_time(parts)
        if forward is not None:
            out.append((name, forward, other))
    return out


def _series_slots(view: TreeView, axis: str, name: str, other: int) -> dict[str, Any]:
    if axis == "C":
        what = f'the "{name}" figure' if name else "the value"
        return {"row": under(view.row_names[other]), "what": what, "where": f"for {under(view.row_names[other])}",
                "column": "", "other": f"row {under(view.row_names[other])}"}
    column = view.column_label(other)
    return {"row": "", "what": f'"{column}"', "where": f'under "{name}"' if name else "in the table",
            "within": f' (both under "{name}")' if name else "", "under_group": f' under "{name}"' if name else "",
            "column": column, "other": f'column "{column}"'}


def _value(view: TreeView, axis: str, part: Part, other: int) -> int | float:
    return view.cell(other, part.pos) if axis == "C" else view.cell(part.pos, other)


def _value_sql(view: TreeView, axis: str, part: Part, other: int) -> str:
    return _cell_sql(view, other, part.pos) if axis == "C" else _cell_sql(view, part.pos, other)


@op("tree_difference", params=("axis", "between"), tree=True)
def op_tree_difference(ctx: "Context") -> None:
    """The difference between two members of one series: a change from one period to another
    (`between = "periods"`), or how much one member exceeds another (`between = "members"`,
    the larger first). Differences are asked of any measure, rates included (points)."""
    view = _view(ctx)
    if view is None:
        return
    axis, periods = ctx.template.params.get("axis", "C"), ctx.template.params.get("between", "periods") == "periods"
    series = _changes(view, axis) if periods else _series(view, axis, False)
    cands = [(name, parts, other, a, b) for name, parts, other in series
             if not sem.numbered_labels(p.label for p in parts)  # Field_5 minus Field_6: which sample, no thing
             for a, b in _pairs(len(parts))]
    cands = [c for c in cands if _value(view, axis, c[1][c[3]], c[2]) != _value(view, axis, c[1][c[4]], c[2])]
    ctx.considered(len(cands))
    if not cands:
        return ctx.reject("no_series")
    for i in ctx.pick(list(range(len(cands)))):
        name, parts, other, a, b = cands[i]
        first, second = parts[a], parts[b]
        if not periods and _value(view, axis, first, other) < _value(view, axis, second, other):
            first, second = second, first  # "how much greater is A than B": A the larger
        x, y = _value(view, axis, first, other), _value(view, axis, second, other)
        answer = whole_if_counted((y - x) if periods else (x - y), [x, y])
        program = (f"SELECT {_value_sql(view, axis, second, other)} - {_value_sql(view, axis, first, other)}" if periods
                   else f"SELECT {_value_sql(view, axis, first, other)} - {_value_sql(view, axis, second, other)}")
        slots = {**_series_slots(view, axis, name, other), "a": first.label, "b": second.label}
        ctx.emit(slots, answer, program=("sql", program), answer_type="number")


@op("tree_change", params=("axis",), tree=True)
def op_tree_change(ctx: "Context") -> None:
    """The percentage change of a level from one period to another: asked only of positive
    levels (not of rates, shares or indexes, whose change is in points)."""
    view = _view(ctx)
    if view is None:
        return
    axis = ctx.template.params.get("axis", "C")
    cands = []
    for name, parts, other in _changes(view, axis):
        columns = [p.pos for p in parts] if axis == "C" else [other]
        words = _measure_words(view, columns) + " " + name
        if RELATIVE.search(words) or NOT_ADDITIVE.search(" ".join(view.column_label(j) for j in columns)) \
                or any(_per_unit(view.column_label(j)) for j in columns):
            ctx.reject("relative_measure")
            continue
        for a, b in _pairs(len(parts)):
            x, y = _value(view, axis, parts[a], other), _value(view, axis, parts[b], other)
            if x > 0 and y >= 0 and x != y:
                cands.append((name, parts, other, a, b))
    ctx.considered(len(cands))
    if not cands:
        return ctx.reject("no_series")
    for i in ctx.pick(list(range(len(cands)))):
        name, parts, other, a, b = cands[i]
        x, y = float(_value(view, axis, parts[a], other)), float(_value(view, axis, parts[b], other))
        first, second = _value_sql(view, axis, parts[a], other), _value_sql(view, axis, parts[b], other)
        program = f"SELECT ({second} - {first}) * 100.0 / {first}"
        slots = {**_series_slots(view, axis, name, other), "a": parts[a].label, "b": parts[b].label}
        ctx.emit(slots, (y - x) * 100.0 / x, program=("sql", program), answer_type="number")


@op("tree_first_past", params=("axis",), tree=True)
def op_tree_first_past(ctx: "Context") -> None:
    """The first period, in the order shown, in which a series rises above (or falls below) a
    round threshold it did not start past (NR comparison)."""
    view = _view(ctx)
    if view is None:
        return
    axis = ctx.template.params.get("axis", "C")
    cands = []
    for name, parts, other in _series(view, axis, True):
        if len(parts) < 4:
            continue
        values = [float(_value(view, axis, p, other)) for p in parts]
        t = _threshold(values)
        if t is None:
            continue
        if values[0] < t:
            rise = True
        elif values[0] > t:
            rise = False
        else:
            continue
        hit = next((k for k, v in enumerate(values) if (v > t if rise else v < t)), None)
        if hit is not None:
            cands.append((name, parts, other, t, rise, hit))
    ctx.considered(len(cands))
    if not cands:
        return ctx.reject("no_series_crossing")
    for i in ctx.pick(list(range(len(cands)))):
        name, parts, other, t, rise, hit = cands[i]
        labels = "[" + ", ".join(lit(p.label) for p in parts) + "]"
        cells = "[" + ", ".join(f"CAST({_value_sql(view, axis, p, other)} AS DOUBLE)" for p in parts) + "]"
        program = (f"SELECT name FROM (SELECT unnest({labels}) AS name, unnest({cells}) AS v, "
                   f"unnest(range({len(parts)})) AS i) WHERE v {'>' if rise else '<'} {lit(t)} ORDER BY i LIMIT 1")
        slots = {**_series_slots(view, axis, name, other), "threshold": _show(t), "n": len(parts),
                 "verb": "rise to more than" if rise else "fall to less than",
                 "verb_is": "more than" if rise else "less than", "first": parts[0].label, "last": parts[-1].label}
        ctx.emit(slots, parts[hit].label, program=("sql", program), answer_type="text")


def _related(a: str, b: str) -> bool:
    """Two columns a scatter may set against each other: two measures of one group or period
    (the same parent path), or one measure in two groups or periods (the same own label); not a
    percentage of one year against a count of respondents of another."""
    parent_a, _, last_a = a.rpartition(PATH_SEPARATOR)
    parent_b, _, last_b = b.rpartition(PATH_SEPARATOR)
    return parent_a == parent_b or last_a.casefold() == last_b.casefold()


def computed_from(table: Table, a: int, b: int) -> bool:
    """Whether one column is computed from the other (a product, a difference, a total of its
    siblings: `curation.arithmetic`): set against each other they restate a definition."""
    if len(table.semantics) != table.n_cols:
        return False
    x, y = table.semantics[a], table.semantics[b]
    return y.name in x.inputs or x.name in y.inputs


@op("tree_chart2", params=("chart",), tree=True)
def op_tree_chart2(ctx: "Context") -> None:
    """Charts of two series: a scatter of two columns over a row group's members (`chart =
    "scatter"`), bars of two sibling columns over them (`"bars"`), or lines of two sibling rows
    across a series of periods (`"lines"`). Gold {chart_type, x, y}: y holds both series."""
    view = _view(ctx)
    if view is None:
        return
    chart = ctx.template.params.get("chart", "scatter")
    cands: list[tuple[Any, ...]] = []
    if chart in ("scatter", "bars"):
        pairs: list[tuple[int, int]] = []
        measured = [j for j in view.labelled if not BOUND.search(view.column_label(j))]
        if chart == "bars":
            for _, parts in view.families:
                pairs += [(parts[k].pos, parts[k + 1].pos) for k in range(len(parts) - 1)
                          if parts[k].pos in measured and parts[k + 1].pos in measured]  # never a value beside its margin
        else:
            pairs = [(a, b) for k, a in enumerate(measured) for b in measured[k + 1:]
                     if _related(view.column_label(a), view.column_label(b)) and not computed_from(view.table, a, b)]
        for group in _labelled_groups(view):
            if not 3 <= len(group.parts) <= MAX_CHART_PARTS:
                continue
            rows = [p.pos for p in group.parts]
            for a, b in pairs:
                xs, ys = [view.cell(r, a) for r in rows if view.present(r, a)], [view.cell(r, b) for r in rows if view.present(r, b)]
                if len(xs) == len(ys) == len(rows) and len(set(xs)) > 1 and len(set(ys)) > 1 and xs != ys:
                    cands.append((group, a, b))
    else:
        for parent, parts in view.families:
            if not _is_period_labels([p.label for p in parts]) or len(parts) < 3:
                continue
            for group in _labelled_groups(view):
                rows = [p for p in group.parts if all(view.present(p.pos, c.pos) for c in parts)]
                for k in range(len(rows) - 1):
                    cands.append((parent, parts, rows[k], rows[k + 1]))
    ctx.considered(len(cands))
    if not cands:
        return ctx.reject("no_two_series")
    for i in ctx.pick(list(range(len(cands)))):
        if chart in ("scatter", "bars"):
            group, a, b = cands[i]
            rows = [p.pos for p in group.parts]
            first = [float(view.cell(r, a)) for r in rows]
            second = [float(view.cell(r, b)) for r in rows]
            ca, cb = q(view.table.columns[a]), q(view.table.columns[b])
            where = f"rowid IN ({view.rowids(rows)})"
            if chart == "scatter":
                gold = {"chart_type": "scatter", "x": first, "y": second}
                program = (f"SELECT {{'chart_type': 'scatter', 'x': list(CAST({ca} AS DOUBLE) ORDER BY rowid), "
                           f"'y': list(CAST({cb} AS DOUBLE) ORDER BY rowid)}} FROM {view.src} WHERE {where}")
            else:
                labels = [p.label for p in group.parts]
                gold = {"chart_type": "bar", "x": labels + labels, "y": first + second}
                names = "[" + ", ".join(lit(x) for x in labels + labels) + "]"
                program = (f"SELECT {{'chart_type': 'bar', 'x': {names}, 'y': list_concat(list(CAST({ca} AS DOUBLE) "
                           f"ORDER BY rowid), list(CAST({cb} AS DOUBLE) ORDER BY rowid))}} FROM {view.src} WHERE {where}")
            slots = {**_sum_slots(view, group, a), "x": view.column_label(a), "y": view.column_label(b)}
        else:
            parent, parts, ra, rb = cands[i]
            labels = [p.label for p in parts]
            first = [float(view.cell(ra.pos, p.pos)) for p in parts]
            second = [float(view.cell(rb.pos, p.pos)) for p in parts]
            gold = {"chart_type": "line", "x": labels + labels, "y": first + second}
            names = "[" + ", ".join(lit(x) for x in labels + labels) + "]"
            cells = ", ".join(f"CAST({q(view.table.columns[p.pos])} AS DOUBLE)" for p in parts)
            program = (f"SELECT {{'chart_type': 'line', 'x': {names}, 'y': list_concat("
                       f"(SELECT [{cells}] FROM {view.src} WHERE rowid = {view.rowid(ra.pos)}), "
                       f"(SELECT [{cells}] FROM {view.src} WHERE rowid = {view.rowid(rb.pos)}))}}")
            slots = {"a": under(view.row_names[ra.pos]), "b": under(view.row_names[rb.pos]), "n": len(parts),
                     "what": f'"{parent}"' if parent else "the values", "first": labels[0], "last": labels[-1]}
        ctx.emit(slots, gold, program=("sql", program), answer_type="chart")

"""Rule questions that navigate the header tree: RealHiTBench's hierarchical track.

A hierarchical table is read through its header tree (`curation.header_tree`), not its
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
  values the chart must plot (RealHiTBench's CG, scored by PASS@1 in `evaluation.charts`);
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

from curation.header_tree import (Branch, branches, children_labels, exchanged, flattened_names, grand_total,
                                  row_paths, summary_nodes, total_of)
from curation.programs.sql import quote_ident as q
from curation.programs.sql import quote_literal as lit
from curation.table import HeaderNode, Table
from generators.rules.profile import ADDITIVE, NOT_ADDITIVE

if TYPE_CHECKING:  # pragma: no cover
    from generators.rules.engine import Context

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


def quoted(path: tuple[str, ...] | list[str]) -> str:
    return " / ".join(path)


def under(path: tuple[str, ...]) -> str:
    """'"Japan" under "Asia"': a leaf named by its path."""
    return f'"{path[-1]}"' + (f' under "{quoted(path[:-1])}"' if len(path) > 1 else "")


class TreeView:
    """One hierarchical table as the tree ops read it: paths, groups, numeric columns, data-view rows."""

    def __init__(self, table: Table) -> None:
        self.table = table
        marked = set(table.summary_rows)
        self.view_row: list[int | None] = []
        k = 0
        for r in range(table.n_rows):
            self.view_row.append(None if r in marked else k)
            k += r not in marked
        skip = set(table.empty_columns) | set(table.constant_columns)
        self.numeric = [j for j, f in enumerate(table.body.schema) if j not in skip and not pa.types.is_boolean(f.type)
                        and (pa.types.is_integer(f.type) or pa.types.is_floating(f.type))]
        self.integer = {j for j in self.numeric if pa.types.is_integer(table.body.schema.field(j).type)}
        self.summary = set(summary_nodes(table.header))
        self._values: dict[int, np.ndarray] = {}

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
        or a long text over most of them); "" for a column with no name of its own ("column 6")."""
        return self._column_paths[j] or ("" if AUTO_NAME.match(self.table.columns[j]) else self.table.columns[j])

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
        elif self.table.n_cols and pa.types.is_string(self.table.body.schema.field(0).type):
            paths = [(v,) if v else () for v in self.table.body.column(0).to_pylist()]
        else:
            return [None] * self.table.n_rows
        counts: dict[tuple[str, ...], int] = {}
        for p in paths:
            counts[p] = counts.get(p, 0) + 1
        return [p if p and counts[p] == 1 else None for p in paths]

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
            return f"SELECT sum({q(self.table.columns[other])}) FROM t WHERE rowid IN ({rows})"
        return (f"SELECT {' + '.join(q(self.table.columns[p.pos]) for p in group.parts)} FROM t "
                f"WHERE rowid = {self.rowid(other)}")


def _place(group: Group) -> str:
    return f'under "{quoted(group.path)}"' if group.path else "at the top level of the row header"


def _sum_candidates(view: TreeView, axis: str) -> list[tuple[Group, int]]:
    """(group, column) for row groups, (group, row) for column groups, with every part present."""
    out = []
    for group in view.groups(axis):
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


PERIOD = re.compile(r"^\s*((1[6-9]|20)\d\d([/-]\d{2,4})?|q[1-4]|(19|20)\d\d\s*q[1-4]|jan|feb|mar|apr|may|jun|jul|aug|sep|"
                    r"oct|nov|dec|january|february|march|april|june|july|august|september|october|november|december)"
                    r"(\s+(outturn|plans?|estimates?|provisional))?\s*$", re.IGNORECASE)
BOUND = re.compile(r"\b(confidence (limit|interval)|lower|upper|bound|limit|estimate|ci)\b", re.IGNORECASE)


def _parts_say_nothing(group: Group) -> str | None:
    """Parts that are no things of the table: an estimate with its confidence limits."""
    labels = [p.label or "" for p in group.parts]
    if sum(bool(BOUND.search(label)) for label in labels) >= 2:
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
    if all(j in view.integer for _, j in cells):
        return int(sum(int(view.cell(r, j)) for r, j in cells))
    return float(sum(float(view.cell(r, j)) for r, j in cells))


def _sum_slots(view: TreeView, group: Group, other: int) -> dict[str, Any]:
    entries = "rows" if group.axis == "R" else "columns"
    where = f"column \"{view.column_label(other)}\"" if group.axis == "R" else f"row {under(view.row_names[other])}"
    return {"place": _place(group), "n": len(group.parts), "entries": entries, "other": where,
            "column": view.column_label(other) if group.axis == "R" else "",
            "row": under(view.row_names[other]) if group.axis == "C" else ""}


def _view(ctx: "Context") -> TreeView | None:
    table = ctx.profile.table
    if not table.is_hierarchical:
        ctx.reject("not_hierarchical")
        return None
    return TreeView(table)


# ------------------------------------------------------------------------------ ops

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
    for group, other in _sum_candidates(view, axis):
        if any(p.label is None for p in group.parts):
            ctx.reject("unnamed_parts")
        elif _parts_say_nothing(group):
            ctx.reject("bounds")
        elif axis == "C" and len({bool(NOT_ADDITIVE.search(view.column_label(p.pos))) for p in group.parts}) > 1:
            ctx.reject("mixed_measures")
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
            program = (f"SELECT CASE rowid {case} END FROM t WHERE rowid IN ({view.rowids([p.pos for p in group.parts])}) "
                       f"ORDER BY {q(view.table.columns[other])} {order} LIMIT 1")
        else:
            names = "[" + ", ".join(lit(p.label) for p in group.parts) + "]"
            cells = "[" + ", ".join(f"CAST({q(view.table.columns[p.pos])} AS DOUBLE)" for p in group.parts) + "]"
            program = (f"SELECT name FROM (SELECT unnest({names}) AS name, unnest({cells}) AS v FROM t "
                       f"WHERE rowid = {view.rowid(other)}) ORDER BY v {order} LIMIT 1")
        ctx.emit(_sum_slots(view, group, other), label, program=("sql", program), answer_type="text")
        emitted += 1


def _decimals(value: float) -> int:
    text = repr(float(value))
    return 0 if "e" in text or text.endswith(".0") else min(6, len(text.split(".")[1]))


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
            total_sql = f"(SELECT {q(view.table.columns[other])} FROM t WHERE rowid = {view.rowid(group.total.pos)})"
        else:
            total_sql = f"(SELECT {q(view.table.columns[group.total.pos])} FROM t WHERE rowid = {view.rowid(other)})"
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
            if (len(name) > 1 or " / " in view.column_label(j)) and view.present(r, j) and written(view.cell(r, j)):
                out.append((r, j))
    return out


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
        program = f"SELECT {q(view.table.columns[j])} = {lit(claim)} FROM t WHERE rowid = {view.rowid(r)}"
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
        program = f"SELECT {{'chart_type': {lit(chart)}, 'x': {labels}, 'y': {values}}} FROM t WHERE {where}"
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


def table_swap(ctx: "Context") -> Swap | None:
    """The one exchange drawn for this table (the same for every SC template)."""
    from curation.pipeline.rng import record_rng

    table = ctx.profile.table
    cands = swap_candidates(TreeView(table))
    if not cands:
        return None
    rng = record_rng(ctx.seed, table.id, SWAP_PURPOSE)
    axis, parent, shown, a, b = cands[int(rng.integers(len(cands)))]
    try:
        return swapped(table, axis, parent, shown, a, b)
    except ValueError:
        return None


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
    view, original = TreeView(swap.table), TreeView(ctx.profile.table)
    ids = (swap.table.id,)

    def provenance(before: Any) -> dict[str, str]:
        return {"swapped_from": ctx.profile.table.id, "exchange": swap.description,
                "gold_before_swap": json.dumps(before, ensure_ascii=False)}

    def before(r: int, j: int) -> int | float:  # the original's cell at the copy's (r, j)
        return original.cell(swap.order[r], j) if swap.axis == "R" else original.cell(r, swap.order[j])

    ask = ctx.template.params.get("ask", "order")
    if ask == "order":
        ctx.considered(1)
        labels = children_labels(swap.table.header, swap.axis, swap.parent)  # type: ignore[arg-type]
        program = json.dumps({"table": swap.table.id, "field": "children", "axis": swap.axis,
                              "path": list(swap.parent)})
        slots = {"entries": "rows" if swap.axis == "R" else "columns",
                 "place": f'under "{quoted(swap.shown)}"' if swap.shown
                 else f"at the top level of the {'row' if swap.axis == 'R' else 'column'} header"}
        ctx.emit(slots, labels, program=("metadata", program), answer_type="list", table_ids=ids,
                 provenance=provenance(children_labels(ctx.profile.table.header, swap.axis, swap.parent)))
    elif ask == "value":
        cands = _named_cells(view, set(swap.moved), swap.axis)
        ctx.considered(len(cands))
        for idx in ctx.pick(list(range(len(cands)))):
            r, j = cands[idx]
            program = f"SELECT {q(swap.table.columns[j])} FROM t WHERE rowid = {view.rowid(r)}"
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


TREE_OPS = {"tree_sum": op_tree_sum, "tree_total_check": op_tree_total_check, "tree_fact": op_tree_fact,
            "tree_chart": op_tree_chart, "tree_swap": op_tree_swap, "tree_extreme": op_tree_extreme}
TREE_OP_PARAMS = {"tree_sum": {"axis"}, "tree_total_check": {"axis"}, "tree_fact": set(), "tree_chart": {"chart"},
                  "tree_swap": {"ask"}, "tree_extreme": {"axis", "extreme"}}

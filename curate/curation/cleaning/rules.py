"""TReB's table-cleaning rules and a few more. Each rule looks at one table and returns a Verdict.

Rules are pure and cheap (vectorised over Arrow columns; the text-length rule stops as soon as
the limit is passed), so cleaning the whole corpus costs seconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curate.curation.arithmetic import MAX_ROWS, aggregate_rows, rows_under_grand_total
from curate.curation.header_tree import PATH_SEPARATOR, STATISTIC_ROW, SUMMARY_WORDS, tree_rows
from curate.curation.semantics import infer as infer_semantics
from curate.curation.table import Table

Action = Literal["keep", "drop", "flag"]


@dataclass(frozen=True)
class CleaningConfig:
    """Thresholds (TReB's defaults). Every field can be set in the build config's [clean] table."""

    max_total_chars: int = 30_000  # drop when the cells' text is longer than this
    max_empty_ratio: float = 0.7  # drop when more than this share of cells is empty
    min_rows: int = 2
    min_cols: int = 2
    keep_hierarchical: bool = True  # nested headers: keep (flagged) for the hierarchical track
    max_unnamed_ratio: float = 0.5  # more unnamed columns than this: a non-standard header
    drop_duplicates: bool = True
    summary_keywords: tuple[str, ...] = SUMMARY_WORDS

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "CleaningConfig":
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown [clean] setting(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        values = dict(values)
        if "summary_keywords" in values:
            values["summary_keywords"] = tuple(values["summary_keywords"])
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return {f: (list(v) if isinstance(v, tuple) else v) for f, v in self.__dict__.items()}


@dataclass(frozen=True)
class Verdict:
    rule: str
    action: Action
    reason: str = ""
    score: float = 0.0  # the measured quantity the rule compared with its threshold
    marks: dict[str, tuple[int, ...]] = field(default_factory=dict)  # e.g. {"summary_rows": (12,)}


Rule = Callable[[Table, CleaningConfig], Verdict]


def _string_view(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return column
    return pc.cast(column, pa.string())


def total_chars(table: Table, limit: int | None = None) -> int:
    """Characters in all cells as text; counting stops soon after `limit` is passed."""
    total = 0
    step = 256
    start = 0
    n = table.n_rows
    while start < n:
        part = table.body.slice(start, step)
        for column in part.columns:
            try:
                lengths = pc.utf8_length(_string_view(column))
            except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
                lengths = pa.array([len(str(v)) for v in column.to_pylist() if v is not None])
            total += int(pc.sum(lengths).as_py() or 0)
        if limit is not None and total > limit:
            return total
        start += step
        step *= 2
    return total


def empty_mask(column: pa.ChunkedArray) -> pa.Array:
    """True where a cell is null, NaN or blank text."""
    mask = pc.is_null(column, nan_is_null=True) if pa.types.is_floating(column.type) else pc.is_null(column)
    if pa.types.is_string(column.type):
        mask = pc.or_(mask, pc.fill_null(pc.equal(pc.utf8_trim_whitespace(column), ""), False))
    return mask


def rule_size(table: Table, config: CleaningConfig) -> Verdict:
    chars = total_chars(table, config.max_total_chars)
    if chars > config.max_total_chars:
        if table.provenance.database:  # SQL reads it; a prompt never holds it whole
            return Verdict("too_long", "flag", f"cell text over {config.max_total_chars:,} characters; kept as a "
                           f"table of database {table.provenance.database}", chars)
        return Verdict("too_long", "drop", f"cell text over {config.max_total_chars:,} characters", chars)
    return Verdict("too_long", "keep", score=chars)


def rule_empty(table: Table, config: CleaningConfig) -> Verdict:
    cells = table.n_rows * table.n_cols
    if cells == 0:
        return Verdict("too_empty", "drop", "no cells", 1.0)
    empty = sum(int(pc.sum(empty_mask(c)).as_py() or 0) for c in table.body.columns)
    ratio = empty / cells
    if ratio > config.max_empty_ratio:
        return Verdict("too_empty", "drop", f"{ratio:.0%} of cells empty (limit {config.max_empty_ratio:.0%})", ratio)
    return Verdict("too_empty", "keep", score=ratio)


def rule_degenerate(table: Table, config: CleaningConfig) -> Verdict:
    if table.n_rows < config.min_rows or table.n_cols < config.min_cols:
        return Verdict("degenerate", "drop", f"{table.n_rows} rows x {table.n_cols} columns "
                       f"(need {config.min_rows} x {config.min_cols})", float(min(table.n_rows, table.n_cols)))
    return Verdict("degenerate", "keep", score=float(min(table.n_rows, table.n_cols)))


_AUTO_NAME = re.compile(r"^(column \d+|unnamed: ?\d+|v\d+)$", re.I)


def rule_header(table: Table, config: CleaningConfig) -> Verdict:
    """Nested header: hierarchical track only. Unnamed or auto-named columns: a non-standard header."""
    if table.is_hierarchical:
        if config.keep_hierarchical:
            return Verdict("header", "flag", "nested header: kept for the hierarchical track", 1.0)
        return Verdict("header", "drop", "nested header", 1.0)
    unnamed = sum(1 for c in table.columns if _AUTO_NAME.match(c.strip()))
    ratio = unnamed / max(1, table.n_cols)
    if ratio > config.max_unnamed_ratio:
        return Verdict("header", "drop", f"non-standard header: {unnamed} of {table.n_cols} columns unnamed", ratio)
    return Verdict("header", "keep", score=ratio)


def _numeric_matrix(table: Table) -> tuple[list[int], np.ndarray]:
    cols = [j for j, c in enumerate(table.body.columns)
            if (pa.types.is_integer(c.type) or pa.types.is_floating(c.type))]
    if not cols:
        return [], np.empty((table.n_rows, 0))
    matrix = np.column_stack([table.body.column(j).to_numpy(zero_copy_only=False).astype(float) for j in cols])
    return cols, matrix


def rule_summary(table: Table, config: CleaningConfig) -> Verdict:
    """Summary rows/columns ("Total", "Average", ... or equal to the sum of the others): flagged."""
    words = "|".join(re.escape(w) for w in sorted(config.summary_keywords, key=len, reverse=True))
    keyword = re.compile(rf"^\s*({words})\b", re.I)
    rows: set[int] = set()
    cols: set[int] = set()
    for j, name in enumerate(table.columns):
        if keyword.match(name.split(PATH_SEPARATOR)[-1]):
            cols.add(j)
    # the text columns among the first three: "Mean" and "SD" rows often stand in column B, and a "world"
    # row after the ranked countries has a blank rank before it
    label_columns = [table.body.column(j) for j in range(min(3, table.n_cols) if table.n_rows else 0)
                     if pa.types.is_string(table.body.column(j).type)]
    for first in label_columns:
        # the whole label is a keyword ("Total", "All:") or a statistic ("SD", "Maximum marks"), or a
        # keyword starts a label, or "total" ends one, in the first or the last two rows ("Total 2019",
        # "isaf exact total"); "All-Bran" and a cereal called "Total Raisin Bran" are data
        whole = pc.match_substring_regex(first, rf"(?i)^\s*({words})\s*[:.]?\s*$")
        statistic = pc.match_substring_regex(first, STATISTIC_ROW.pattern, ignore_case=True)
        leading = pc.match_substring_regex(first, rf"(?i)^\s*({words})(\s|:|$)")
        # or a total ends the label there ("isaf exact total", "Africa Total" under its countries), or the
        # label is the world the rows are part of ("world" under the countries of a table)
        leading = pc.or_(pc.fill_null(leading, False), pc.fill_null(pc.match_substring_regex(
            first, r"(?i)\b(sub-?)?totals?\s*[:.]?\s*$|^\s*(the )?(world|worldwide|global)\s*[:.]?\s*$"), False))
        edge = np.zeros(table.n_rows, dtype=bool)
        edge[[0, *range(max(0, table.n_rows - 2), table.n_rows)]] = True
        tail = np.zeros(table.n_rows, dtype=bool)  # where statistics stand: the first row, the last four
        tail[[0, *range(max(0, table.n_rows - 4), table.n_rows)]] = True  # ("SD" in row 41 is South Dakota)
        hits = pc.fill_null(whole, False).to_numpy(zero_copy_only=False) | (
            pc.fill_null(statistic, False).to_numpy(zero_copy_only=False) & tail) | (
            pc.fill_null(leading, False).to_numpy(zero_copy_only=False) & edge)
        labels = first.to_pylist()
        found = [int(i) for i in np.flatnonzero(hits)]
        factor = len(set(labels)) <= 0.5 * table.n_rows  # the first column repeats its values
        level = {v for v in {labels[i] for i in found}  # "Average" on 38 of 114 rows: a level of a factor
                 if factor and labels.count(v) > 1}
        if len(found) * 2 <= table.n_rows:  # statistics on most rows are the table's subject ("Mean", "SD", "Max")
            rows.update(i for i in found if labels[i] not in level)
    rows.update(_off_the_echo(table))  # "OFFICIAL FINAL SCORES" where column 8 repeats each player's name
    rows.update(tree_rows(table.header, table.n_rows))  # a group's own row, a Total node of the row tree
    rows.update(aggregate_rows(table))  # a row the numbers show to be a sum, share or ratio of others
    numeric_cols, m = _numeric_matrix(table)
    complete = ~np.isnan(m).any(axis=0) if m.size else np.zeros(0, bool)
    if complete.sum() >= 2 and m.shape[0] >= 3:  # a row equal to the sum of the rows above/below it
        c = m[:, complete]
        with np.errstate(invalid="ignore"):
            close = np.isclose(2 * c, c.sum(axis=0), rtol=1e-6, atol=1e-9) & (np.abs(c) > 0)
        rows.update(int(i) for i in np.flatnonzero(close.all(axis=1)))
    if m.shape[1] >= 3 and m.shape[0] >= 1:
        with np.errstate(invalid="ignore"):
            row_totals = np.nansum(m, axis=1)
            close = np.isclose(2 * m, row_totals[:, None], rtol=1e-6, atol=1e-9) & (np.abs(m) > 0)
            cols.update(numeric_cols[k] for k in np.flatnonzero(close.all(axis=0)))
    rows.update(rows_under_grand_total(table, rows))  # "voter turnout in %" under the parties' total
    if rows or cols:
        return Verdict("summary", "flag", f"{len(rows)} summary rows, {len(cols)} summary columns",
                       float(len(rows) + len(cols)),
                       {"summary_rows": tuple(sorted(rows)), "summary_columns": tuple(sorted(cols))})
    return Verdict("summary", "keep")


MOST_FOOT_ROWS = 2  # rows at a table's foot that a repeated label column may leave


def _off_the_echo(table: Table) -> set[int]:
    """The last rows where a column that repeats the row labels for the reader's eye (a pool's players
    named again beside their points) stops repeating them: every row above agrees and these do not
    ("OFFICIAL FINAL SCORES" beside "WEEK 3 PRIZE POT IS"), so they are the sheet's foot, not one more
    row of data. Read from the values: the labels need not say "Total"."""
    n = table.n_rows
    texts = [j for j in range(table.n_cols) if pa.types.is_string(table.body.column(j).type)][:10]
    if not 6 <= n <= MAX_ROWS or len(texts) < 2:  # a longer table is records, not a report with a foot
        return set()
    columns = {j: [" ".join(str(v).split()).casefold() if v is not None else "" for v in table.body.column(j).to_pylist()]
               for j in texts}
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            same = [x == y and x != "" for x, y in zip(columns[a], columns[b])]
            foot = [r for r in range(n) if not same[r]]
            if foot and min(foot) >= n - MOST_FOOT_ROWS:
                return set(foot)
    return set()


def rule_columns(table: Table, config: CleaningConfig) -> Verdict:
    """Empty or constant columns: flagged so generators skip them; a table of nothing else: dropped."""
    empty, constant = [], []
    for j, column in enumerate(table.body.columns):
        mask = empty_mask(column)
        n_empty = int(pc.sum(mask).as_py() or 0)
        if n_empty == len(column):
            empty.append(j)
        elif pc.count_distinct(pc.filter(column, pc.invert(mask))).as_py() == 1:
            constant.append(j)
    marks = {"empty_columns": tuple(empty), "constant_columns": tuple(constant)}
    if table.n_cols and len(empty) + len(constant) == table.n_cols:
        return Verdict("uninformative_columns", "drop", "every column is empty or constant", 1.0, marks)
    if empty or constant:
        return Verdict("uninformative_columns", "flag", f"{len(empty)} empty, {len(constant)} constant columns",
                       (len(empty) + len(constant)) / table.n_cols, marks)
    return Verdict("uninformative_columns", "keep")


RULES: dict[str, Rule] = {  # cheapest first
    "degenerate": rule_degenerate,
    "too_long": rule_size,
    "too_empty": rule_empty,
    "header": rule_header,
    "uninformative_columns": rule_columns,
    "summary": rule_summary,
}


def apply_rules(table: Table, config: CleaningConfig) -> tuple[Table | None, list[Verdict]]:
    """Run every rule. Returns (the annotated table, or None if a rule dropped it; all verdicts).

    A dropped table still gets every cheap verdict so the report counts each rule's effect; the
    content rules (columns, summaries) are skipped once a table is dropped.
    """
    verdicts: list[Verdict] = []
    for name, rule in RULES.items():
        if name in ("uninformative_columns", "summary") and any(v.action == "drop" for v in verdicts):
            continue
        verdicts.append(rule(table, config))
    if any(v.action == "drop" for v in verdicts):
        return None, verdicts
    marks: dict[str, tuple[int, ...]] = {}
    flags = list(table.flags)
    for v in verdicts:
        marks.update(v.marks)
        if v.action == "flag" and v.rule == "header":
            flags.append("hierarchical")
        if v.action == "flag" and v.rule == "too_long":
            flags.append("too_long")  # single-table generators skip it
    marked = table.replace(flags=tuple(dict.fromkeys(flags)), **marks)
    return marked.replace(semantics=infer_semantics(marked)), verdicts

"""A table's structure read from its numbers: the rows that add up others, and the columns computed from others.

A person who reads "Manufacturing 15,570", then "Durable goods 10,065" and "Nondurable goods 5,506", sees that
the first is the sum of the two below it, with no indent, bold or "Total" to say so. This module does the same
arithmetic: a row that equals the sum (or the mean) of a contiguous block of its siblings, within the rounding
the values are written with, in most numeric columns, aggregates that block; a row that is the ratio of two
others (a "% infected" under the counts it divides) is a share or ratio; a column that is the product, the
difference, the sum or the ratio of two others is derived from them. Questions then read the leaves, or the
siblings of one level, never a mix, and never correlate a column with its own inputs.

Evidence is weighed as the chance of a coincidence: a match within a tolerance `tol` on a total of size `T`
counts log10(T / 2 tol) digits; a claim needs MIN_DIGITS in all, in at least two columns and most of those that
can be checked, so that a short column of small numbers never makes one by accident.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

MAX_BLOCK = 40  # children of one aggregate, at most
MAX_ROWS = 1500  # longer tables are records, not reports with totals
MAX_COLUMNS = 200
MIN_DIGITS = 4.0  # about one chance in ten thousand that the matches are coincidences
MOST = 0.6  # share of the checkable columns that must agree
RATIO_WINDOW = 4  # a share or ratio row divides rows at most this far above or below it
FACTORS = np.array([1.0, 100.0, 1000.0, 10000.0, 100000.0])


@dataclass(frozen=True)
class Aggregate:
    """Row (or column) `at` of the body is the `kind` (sum, mean, share, ratio) of the rows (columns) `of`."""

    axis: str
    at: int
    of: tuple[int, ...]
    kind: str
    confirmed_by: int  # how many columns (rows) agree

    def as_dict(self) -> dict[str, Any]:
        return {"axis": self.axis, "at": self.at, "of": list(self.of), "kind": self.kind,
                "confirmed_by": self.confirmed_by}


@dataclass(frozen=True)
class Derived:
    """Column `column` is `kind` (product, difference, sum, ratio) of the columns `of` in (almost) every row."""

    column: int
    of: tuple[int, ...]
    kind: str
    factor: float = 1.0
    rows: int = 0

    def as_dict(self) -> dict[str, Any]:
        out = {"column": self.column, "of": list(self.of), "kind": self.kind, "rows": self.rows}
        if self.factor != 1.0:
            out["factor"] = self.factor
        return out


def half_unit(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(half a unit of the last digit each value is written with, the step between values so written). A
    column of whole numbers that are all multiples of 10 (100, 1000) was rounded to tens (hundreds, thousands).
    A value written with more than six decimals was computed, not rounded: its error and step are the float's."""
    half = np.full(values.shape, np.nan)
    finite = np.isfinite(values) & (np.abs(values) < 1e15)  # past 15 digits no decimal is written
    for d in range(7):
        step = 10.0 ** -d
        with np.errstate(invalid="ignore", over="ignore"):  # infinities and blanks are left out by `finite`
            hit = finite & np.isnan(half) & (np.abs(np.round(values, d) - values) <= 1e-9 * np.maximum(np.abs(values), step))
        half[hit] = 0.5 * step
    computed = finite & np.isnan(half)
    half[computed] = 1e-9 * np.abs(values[computed])
    half[~finite] = 0.0
    whole = values[finite & (values != 0)]
    if len(whole) >= 5 and np.all(half[finite] == 0.5):
        for power in (1000.0, 100.0, 10.0):
            if np.all(np.mod(whole, power) == 0):
                half[finite] = 0.5 * power
                break
    step = np.where(computed, 1e-9 * np.maximum(np.abs(values), 1e-12), 2 * half)
    return half, np.where(step > 0, step, 1.0)


_memo: tuple[Any, dict[Any, Any]] = (None, {})


def _of_body(table: Any, key: Any, compute: Any) -> Any:
    """`compute()`, remembered for the last body read: the clean stage's summary rule (the rows) and the
    column roles (the columns) read one table's numbers in turn, and reading them is most of the cost.
    The body is held, so no other can take its id while it is remembered."""
    global _memo
    body, found = _memo  # read once: another thread may replace it meanwhile, never this pair
    if body is not table.body:
        found = {}
        _memo = (table.body, found)
    if key not in found:
        found[key] = compute()
    return found[key]


def numeric_columns(table: Any) -> list[int]:
    """The body's numeric columns that hold quantities: not years, not a column numbering the rows, not constant."""
    return list(_of_body(table, "numeric_columns", lambda: _numeric_columns(table)))


def _numeric_columns(table: Any) -> list[int]:
    import pyarrow as pa

    from curate.curation.row_numbers import numbers_the_rows

    out = []
    for j, field in enumerate(table.body.schema):
        if pa.types.is_boolean(field.type) or not (pa.types.is_integer(field.type) or pa.types.is_floating(field.type)):
            continue
        values = [v for v in table.body.column(j).to_pylist() if v is not None and v == v]
        if len(set(values)) < 2 or numbers_the_rows(table.body.column(j).to_pylist()):
            continue
        if all(float(v).is_integer() and 1800 <= v <= 2100 for v in values):
            continue  # years label rows; they add up to nothing
        out.append(j)
    return out


@dataclass
class Numbers:
    """A block of numbers with how precisely each is written: values (NaN where blank), half a unit of the
    last decimal (the rounding error), and the step between values so written (what a coincidence must hit)."""

    values: np.ndarray
    half: np.ndarray
    step: np.ndarray
    cluster: np.ndarray | None = None  # per column: columns that are constant multiples of each other share one

    def __post_init__(self) -> None:
        if self.cluster is None:
            self.cluster = np.arange(self.values.shape[1])

    @property
    def T(self) -> "Numbers":
        return Numbers(self.values.T.copy(), self.half.T.copy(), self.step.T.copy())


def proportional_clusters(values: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Columns that are one constant multiple of another in every row (an employee's take, 23% of the amount
    billed): one piece of evidence, however many of them agree with a sum."""
    m = values.shape[1]
    cluster = np.arange(m)
    for j in range(m):
        for i in range(j):
            if cluster[i] == i and proportional(values[:, i], values[:, j], half[:, i], half[:, j]):
                cluster[j] = i
                break
    return cluster


def proportional(x: np.ndarray, y: np.ndarray, hx: np.ndarray, hy: np.ndarray, min_rows: int = 3) -> bool:
    """Is `x` one constant multiple of `y` in every row both fill, within the rounding of each?"""
    both = np.isfinite(x) & np.isfinite(y)
    x, y, hx, hy = x[both], y[both], hx[both], hy[both]
    if both.sum() < min_rows or not np.array_equal(x == 0, y == 0) or not (y != 0).any():
        return False
    ratio = float(np.median(x[y != 0] / y[y != 0]))
    return bool(np.all(np.abs(x - ratio * y) <= hx + abs(ratio) * hy + 1e-9 * np.abs(x)))


def local_clusters(values: np.ndarray, half: np.ndarray, agree: np.ndarray, weight: np.ndarray,
                   cluster: np.ndarray) -> np.ndarray:
    """`cluster`, with each agreeing column joined to a more telling one it is a multiple of over these rows
    alone (a candidate aggregate and its block). Child mortality by year and sex rises and falls together:
    where Jordan's 36 is Jamaica's 30 + Japan's 6, its 27 = 22 + 5 says nothing more. Columns are taken
    from the most telling match down, and each joins only such a column: a column of small figures (a
    sector's 12 = 1 + 11) is a multiple of almost anything within its rounding, and must not tie the
    telling columns together. The table's own `cluster` is returned when no column joins."""
    columns = sorted(np.flatnonzero(agree), key=lambda j: -weight[j])
    if len(columns) < 2:
        return cluster
    out, leads, joined = cluster.copy(), [], False
    for j in columns:
        lead = next((i for i in leads if proportional(values[:, i], values[:, j], half[:, i], half[:, j], 2)), None)
        if lead is None:
            leads.append(j)
        elif out[j] != out[lead]:
            out[out == out[j]] = out[lead]
            joined = True
    return out if joined else cluster


def numbers(table: Any, columns: Sequence[int]) -> Numbers:
    """The numbers of `columns` (remembered for the last body read: callers only read them)."""
    return _of_body(table, ("numbers", tuple(columns)), lambda: _numbers(table, columns))


def _numbers(table: Any, columns: Sequence[int]) -> Numbers:
    n = table.n_rows
    if not columns:
        return Numbers(np.zeros((n, 0)), np.zeros((n, 0)), np.ones((n, 0)))
    cols, halves, steps = [], [], []
    for j in columns:
        x = np.asarray(table.body.column(j).to_numpy(zero_copy_only=False), dtype=np.float64)
        h, s = half_unit(x)
        cols.append(x)
        halves.append(h)
        steps.append(s)
    values, half = np.column_stack(cols), np.column_stack(halves)
    return Numbers(values, half, np.column_stack(steps), proportional_clusters(values, half))


def digits(total: np.ndarray, miss: np.ndarray, step: np.ndarray) -> np.ndarray:
    """How unlikely a match is by chance, in decimal digits: the size of the total over the width a
    coincidence would have to hit, twice the amount it misses by but at least one step of the values
    (3 = 1 + 2 among small counts is cheap; 15,570 = 10,065 + 5,506 to within the rounding is not)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log10(np.abs(total) / np.maximum(2 * np.abs(miss), step))
    return np.clip(np.nan_to_num(out, nan=0.0, posinf=6.0, neginf=0.0), 0.0, 6.0)


def claim(match: np.ndarray, checkable: np.ndarray, weight: np.ndarray, cluster: np.ndarray, tried: int,
          at_least: int = 2, most: float = MOST) -> np.ndarray:
    """Per candidate (rows of the arrays; columns the evidence): at least `at_least` columns agree, most of
    those that can be checked, with MIN_DIGITS of evidence beyond what trying `tried` candidates buys by
    chance. Columns that are multiples of one another count once."""
    if len(np.unique(cluster)) == len(cluster):
        evidence = np.where(match, weight, 0.0).sum(axis=1)
        n_match, n_check = match.sum(axis=1), checkable.sum(axis=1)
    else:
        evidence = np.zeros(match.shape[0])
        n_match = np.zeros(match.shape[0])
        n_check = np.zeros(match.shape[0])
        for c in np.unique(cluster):
            members = cluster == c
            evidence += np.where(match[:, members], weight[:, members], 0.0).max(axis=1)
            n_match += match[:, members].any(axis=1)
            n_check += checkable[:, members].any(axis=1)
    need = MIN_DIGITS + np.log10(max(tried, 1))
    return (n_match >= at_least) & (n_match >= most * n_check) & (evidence >= need)


def row_aggregates(grid: Numbers, axis: str = "R", idle: np.ndarray | None = None,
                   repeats: frozenset[int] = frozenset()) -> list[Aggregate]:
    """Rows that are the sum of a contiguous block of their siblings, read bottom-up: the smallest blocks
    first, each then standing as one unit (its aggregate) for the level above. `idle`: the columns that
    add up nowhere (found here for rows when not given); `repeats`: rows that enter a sum once, as the
    row they repeat (see `repeated_rows`)."""
    n, m = grid.values.shape
    if n < 3 or m == 0 or n > MAX_ROWS or m > MAX_COLUMNS:
        return []
    present = np.isfinite(grid.values)
    units = [r for r in range(n) if present[r].any() and r not in repeats]
    if idle is None and axis == "R":
        idle = idle_columns(grid, present, units)
    found: list[Aggregate] = []
    while True:
        new = [a for a, _, _ in _one_level(grid, present, units, axis, idle)]
        if not new:
            return found
        found += new
        children = {c for a in new for c in a.of}
        units = [u for u in units if u not in children]


def idle_columns(grid: Numbers, present: np.ndarray, units: list[int]) -> np.ndarray | None:
    """Columns that add up in none of the sums the other columns show, though they could be checked in two
    or more: a median, a standard error or a ratio beside the counts ("Total, 16 years and older" is the sum
    of its age groups in the three columns of workers, not in their median earnings). They are left out of
    the "most columns" a sum must hold in, so a table of counts and medians keeps its totals; a column that
    adds up anywhere is not idle."""
    m = grid.values.shape[1]
    checked, agreed = np.zeros(m, dtype=int), np.zeros(m, dtype=int)
    for _, match, checkable in _one_level(grid, present, units, "R", most=0.0):
        checked += checkable
        agreed += match
    idle = (checked >= 2) & (agreed == 0)
    return idle if idle.any() else None


def _one_level(grid: Numbers, present: np.ndarray, units: list[int], axis: str, idle: np.ndarray | None = None,
               most: float = MOST) -> list[tuple[Aggregate, np.ndarray, np.ndarray]]:
    """The aggregates of one level, each with the columns that agree with it and those that could be checked.
    `idle` columns (see `idle_columns`) are never counted as checkable."""
    if len(units) < 3:
        return []
    V, H, G, P = grid.values[units], grid.half[units], grid.step[units], present[units]
    zero = np.zeros((1, V.shape[1]))
    sums = np.vstack([zero, np.cumsum(np.where(P, V, 0.0), axis=0)])
    tols = np.vstack([zero, np.cumsum(np.where(P, H, 0.0), axis=0)])
    missing = np.vstack([zero, np.cumsum(~P, axis=0)])
    nonzero = np.vstack([zero, np.cumsum(P & (V != 0), axis=0)])
    u = len(units)
    tried = u * min(MAX_BLOCK, u)  # about 2 directions x blocks x heads, halved: most are absurd
    candidates: list[tuple[int, float, Aggregate, np.ndarray, np.ndarray]] = []
    # blocks of up to MAX_BLOCK units, and a grand total of all the others however many (a "Grand Total"
    # under 81 sizes of a product)
    for k in [*range(2, min(MAX_BLOCK, u - 1) + 1), *([u - 1] if u - 1 > MAX_BLOCK else [])]:
        for direction in (1, -1):  # the block below its aggregate, or above it
            heads = np.arange(0, u - k) if direction == 1 else np.arange(k, u)
            lo = heads + 1 if direction == 1 else heads - k
            hi = lo + k
            T = V[heads]
            # a total of every other unit, first or last, is one hypothesis, not one of `tried`; it adds a
            # blank as nothing, as a spreadsheet's SUM does (a "Grand Total" over a column with gaps)
            grand = (k == u - 1) & np.ones(len(heads), dtype=bool)
            complete = ((missing[hi] - missing[lo]) == 0) | grand[:, None]
            checkable = complete & P[heads] & ((nonzero[hi] - nonzero[lo]) >= 2)
            if idle is not None:
                checkable &= ~idle
            tol = H[heads] + (tols[hi] - tols[lo]) + 1e-9 * np.maximum(np.abs(T), 1.0)
            with np.errstate(invalid="ignore"):
                match = checkable & (np.abs(T - (sums[hi] - sums[lo])) <= tol) & (T != 0)
            weight = digits(T, T - (sums[hi] - sums[lo]), G[heads])
            accept = claim(match, checkable, weight, grid.cluster, tried, most=most) | (
                grand & claim(match, checkable, weight, grid.cluster, 1, most=most))
            for i in np.flatnonzero(accept):
                rows = [int(heads[i])] + list(range(int(lo[i]), int(hi[i])))
                cluster = local_clusters(V[rows], H[rows], match[i], weight[i], grid.cluster) if axis == "R" \
                    else grid.cluster  # a column's sum is checked row by row, over many rows
                if cluster is not grid.cluster and not claim(
                        match[i:i + 1], checkable[i:i + 1], weight[i:i + 1], cluster, 1 if grand[i] else tried,
                        most=most)[0]:
                    continue  # its columns move together over these rows: one coincidence, counted once
                block = tuple(units[x] for x in range(int(lo[i]), int(hi[i])))
                candidates.append((k, -float(weight[i][match[i]].sum()),
                                   Aggregate(axis, units[int(heads[i])], block, "sum", int(match[i].sum())),
                                   match[i], checkable[i]))
    candidates.sort(key=lambda c: (c[0], c[1]))
    # a block holding the head of another block waits for the next level: "41 hours and over" first sums
    # its three parts, then stands as one part of "35 hours and over"
    heads = {c[2].at for c in candidates}
    ready = [c for c in candidates if not heads & set(c[2].of)] or candidates
    used: set[int] = set()
    parents: set[int] = set()
    out = []
    for _, _, a, agreeing, checkable in ready:
        if a.at in used or a.at in parents or any(c in used or c in parents for c in a.of):
            continue
        out.append((a, agreeing, checkable))
        parents.add(a.at)
        used.update(a.of)
    return out


def ratio_rows(grid: Numbers, skip: set[int], axis: str = "R") -> list[Aggregate]:
    """Rows that divide one nearby row by another (times 1, 100, 1000 ...) in most columns: a share ("%
    infected" under the counts it divides) or a rate ("per 1000"), which no sum may count with the counts."""
    V, H, G = grid.values, grid.half, grid.step
    n, m = V.shape
    if n < 3 or m < 2 or n > MAX_ROWS or m > MAX_COLUMNS:
        return []
    P = np.isfinite(V)
    best: dict[int, tuple[float, Aggregate]] = {}
    offsets = [d for d in range(-RATIO_WINDOW, RATIO_WINDOW + 1) if d]
    rows = np.arange(n)
    for da in offsets:
        for db in offsets:
            if da == db:
                continue
            r = rows[(rows + da >= 0) & (rows + da < n) & (rows + db >= 0) & (rows + db < n)]
            if not len(r):
                continue
            R, A, B = V[r], V[r + da], V[r + db]
            with np.errstate(divide="ignore", invalid="ignore"):
                q = A / B
                base_tol = H[r + da] / np.abs(B) + np.abs(A) * H[r + db] / B ** 2
            checkable = P[r] & P[r + da] & P[r + db] & (B != 0) & (R != 0) & (R != A) & (A != B)
            with np.errstate(divide="ignore", invalid="ignore"):  # a 1 or a 2 divides too coarsely to tell a ratio
                checkable &= (H[r + db] <= 0.005 * np.abs(B)) & (H[r + da] <= 0.005 * np.abs(A))
            if checkable.sum(axis=1).max(initial=0) < 3:
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                factor = FACTORS[np.argmin(np.abs(np.log10(np.abs(R / q))[:, :, None] - np.log10(FACTORS)), axis=2)]
                target = factor * q
                tol = H[r] + factor * base_tol + 1e-9 * np.abs(target)
                match = checkable & (np.abs(R - target) <= tol)
            if not match.any():
                continue
            weight = digits(R, R - target, G[r])
            tried = n * len(offsets) ** 2
            for i in np.flatnonzero(claim(match, checkable, weight, grid.cluster, tried, 3)):
                row = int(r[i])
                if row in skip:
                    continue
                three = [row, row + da, row + db]
                cluster = local_clusters(V[three], H[three], match[i], weight[i], grid.cluster)
                if cluster is not grid.cluster and not claim(
                        match[i:i + 1], checkable[i:i + 1], weight[i:i + 1], cluster, tried, 3)[0]:
                    continue  # columns equal over these three rows (a patient's t1, t2 and ta): one coincidence
                used = factor[i][match[i]]
                score = float(weight[i][match[i]].sum())
                if len(set(used.tolist())) == 1 and (row not in best or score > best[row][0]):
                    part = bool(np.all(np.abs(A[i][match[i]]) <= np.abs(B[i][match[i]])))
                    kind = "share" if part and used[0] in (1.0, 100.0) else "ratio"
                    best[row] = (score, Aggregate(axis, row, (row + da, row + db), kind, int(match[i].sum())))
    return [best[r][1] for r in sorted(best)]


def repeated_rows(table: Any, grid: Numbers) -> frozenset[int]:
    """Rows that repeat an earlier row: the same label in the first text column and the same numbers in
    most columns (a country entered twice, one figure changed). A total counts that country once: the
    "ec6 (1958)" row is the sum of its six members however often one is listed."""
    import pyarrow as pa

    text = next((c for c in table.body.columns if pa.types.is_string(c.type) or pa.types.is_large_string(c.type)), None)
    if text is None:
        return frozenset()
    seen: dict[str, int] = {}
    out = set()
    for r, label in enumerate(text.to_pylist()):
        key = label.strip().lower() if isinstance(label, str) else ""
        if not key:
            continue
        if key in seen:
            first, now = grid.values[seen[key]], grid.values[r]
            both = np.isfinite(first) & np.isfinite(now)
            if both.sum() >= 2 and (first[both] == now[both]).sum() >= MOST * both.sum():
                out.add(r)
                continue
        seen.setdefault(key, r)
    return frozenset(out)


def row_relations(table: Any) -> list[Aggregate]:
    """Rows summing blocks of rows, then share and ratio rows (axis "R", body rows)."""
    if not 3 <= table.n_rows <= MAX_ROWS:
        return []
    grid = numbers(table, numeric_columns(table))
    present = np.isfinite(grid.values)
    repeats = repeated_rows(table, grid)
    idle = idle_columns(grid, present, [r for r in range(table.n_rows) if present[r].any() and r not in repeats])
    rows = row_aggregates(grid, "R", idle, repeats)
    rows += parallel_sections(grid, rows, idle)
    return rows + ratio_rows(grid, {a.at for a in rows}, "R")


def parallel_sections(grid: Numbers, found: list[Aggregate], idle: np.ndarray | None) -> list[Aggregate]:
    """Rows of a section that is the sum of its sibling sections, row by row. A BLS table lists "Total, 16
    years and over" with its age groups, then Men's and Women's the same way: the total row is the sum of
    the two section heads (a sum `found` already), and so is each age group of the Total section (its
    "16 to 17 years" is Men's plus Women's), though no block of rows next to it adds up to it. Sections are
    the blocks `found` below (or above) their heads; they must be equally long, and most of their rows
    must add up in most of the columns that can be checked, or none is taken."""
    span: dict[int, tuple[int, int]] = {}
    for a in found:
        low, high = min(a.of), max(a.of)
        if low == a.at + 1 or high == a.at - 1:  # a contiguous block next to its head: the head's section
            if a.at not in span or high - low > span[a.at][1] - span[a.at][0]:
                span[a.at] = (low, high)
    V, H = grid.values, grid.half
    usable = np.isfinite(V) & (True if idle is None else ~idle)
    out: list[Aggregate] = []
    for a in found:
        heads = (a.at, *a.of)
        if len(a.of) < 2 or not all(h in span for h in heads):
            continue
        lengths = {span[h][1] - span[h][0] for h in heads}
        if len(lengths) != 1:
            continue
        rows = [(span[a.at][0] + i, tuple(span[c][0] + i for c in a.of)) for i in range(lengths.pop() + 1)]
        adds = []
        for total, parts in rows:
            checkable = usable[total] & usable[list(parts)].all(axis=0)
            tol = H[total] + H[list(parts)].sum(axis=0) + 1e-9 * np.maximum(np.abs(V[total]), 1.0)
            with np.errstate(invalid="ignore"):
                match = checkable & (np.abs(V[total] - V[list(parts)].sum(axis=0)) <= tol)
            adds.append(int(match.sum()) if checkable.any() and match.sum() >= MOST * checkable.sum() else 0)
        if len(rows) >= 2 and sum(map(bool, adds)) >= 0.8 * len(rows):
            out += [Aggregate("R", total, parts, "sum", n) for (total, parts), n in zip(rows, adds) if n]
    return out


def aggregate_rows(table: Any) -> set[int]:
    """The body rows that aggregate others: no case of the table, never a part of a sum over its rows."""
    return {a.at for a in row_relations(table)}


MOST_UNDER_TOTAL = 3  # rows under a grand total at a table's foot: turnout, registered voters, "of which"


def rows_under_grand_total(table: Any, summary: set[int] | Sequence[int]) -> set[int]:
    """The few rows below a grand total at a table's foot: the parties' "total" (100) closes their list,
    and "voter turnout in %" under it measures something else, never one more party. A summary row
    that equals the sum of every other row above it (blanks adding nothing), within the rounding the
    values are written with, in most columns where it holds a number, is such a total; the rows under
    it are at most MOST_UNDER_TOTAL and fewer than its parts. Read from the numbers: a total with no
    label closes the list as well."""
    n = table.n_rows
    if not 3 <= n <= MAX_ROWS:
        return set()
    summary = set(summary)
    grid = numbers(table, numeric_columns(table))
    for total in sorted((r for r in summary if n - MOST_UNDER_TOTAL - 1 <= r < n - 1), reverse=True):
        parts = [r for r in range(total) if r not in summary]
        under = list(range(total + 1, n))
        if len(parts) < 2 or len(under) >= len(parts):
            continue
        values, half = grid.values[parts], grid.half[parts]
        present = ~np.isnan(grid.values[total]) & (grid.values[total] != 0) & (~np.isnan(values)).any(axis=0)
        if not present.any():
            continue
        miss = np.abs(np.nansum(values, axis=0) - grid.values[total])
        tolerance = np.nansum(np.where(np.isnan(values), 0.0, half), axis=0) + grid.half[total] + 1e-9
        if (miss <= tolerance)[present].sum() >= MOST * present.sum():
            return set(under)
    return set()


def column_sums(table: Any) -> list[Aggregate]:
    """Columns summing blocks of columns (axis "C", body columns), confirmed by three rows or more. Flags
    and small codes are no parts: a count of 0/1 fingerprints can equal anything small."""
    if not 3 <= table.n_rows <= MAX_ROWS:
        return []
    columns = [j for j in numeric_columns(table)
               if len({v for v in table.body.column(j).to_pylist() if v is not None and v == v}) > 4]
    if len(columns) > MAX_COLUMNS:
        return []
    grid = numbers(table, columns)
    return [Aggregate("C", columns[a.at], tuple(columns[c] for c in a.of), a.kind, a.confirmed_by)
            for a in row_aggregates(grid.T, "C") if a.confirmed_by >= 3]


def aggregates(table: Any) -> list[Aggregate]:
    """Every aggregate the numbers show: rows (axis "R") and columns (axis "C")."""
    return row_relations(table) + column_sums(table)


def column_inputs(table: Any) -> dict[int, tuple[str, tuple[int, ...]]]:
    """Each column computed from others -> (how, the columns it is computed from): derived columns
    (`derived_columns`) and columns summing a block of their siblings ("Total" of "Male", "Female")."""
    out: dict[int, tuple[str, tuple[int, ...]]] = {}
    for a in column_sums(table):
        out.setdefault(a.at, ("sum", a.of))
    for d in derived_columns(table):
        if d.column not in out:
            how = d.kind if d.factor == 1.0 else f"{d.kind} x {d.factor:g}"
            out[d.column] = (how, d.of)
    return out


PROBE_ROWS = 24  # rows a candidate formula must fit before it is checked on every row


def derived_columns(table: Any, min_rows: int = 4, share: float = 0.95) -> list[Derived]:
    """Columns computed from two others in (almost) every row: a product (`AltLat` = `Altitude` x
    `Lateral`), a difference (`cdthrte` = `dthrte90` - `dthrte85`), a sum, or a ratio (times 1, 100, 1000).
    Three columns in one such relation are reported once, the result named by a summary word in its header
    ("Total", "rate", "%") or else standing rightmost."""
    if not min_rows <= table.n_rows <= MAX_ROWS:
        return []
    columns = numeric_columns(table)
    m = len(columns)
    if m < 3 or m > 40:
        return []
    grid = numbers(table, columns)
    V, H, G = grid.values, grid.half, grid.step
    P = np.isfinite(V)
    found: dict[frozenset, Derived] = {}
    for a in range(m):
        for b in range(m):
            probe = np.flatnonzero(P[:, a] & P[:, b])[:PROBE_ROWS]
            if a == b or len(probe) < min_rows or min(len(np.unique(V[probe, a])), len(np.unique(V[probe, b]))) < 3:
                continue  # a flag or a code times another column is no quantity computed from two
            for kind, factor, target, tol in _formulas(V, H, a, b, probe):
                with np.errstate(invalid="ignore"):
                    hit = (np.abs(V[probe] - target[:, None]) <= tol[:, None] + H[probe]) | ~P[probe]
                for c in np.flatnonzero(hit.all(axis=0) & (P[probe].sum(axis=0) >= min_rows)):
                    if c in (a, b) or frozenset((a, b, c)) in found:
                        continue
                    d = _check(V, H, G, P, a, b, int(c), kind, factor, min_rows, share)
                    if d:
                        found[frozenset((a, b, c))] = Derived(columns[c], (columns[a], columns[b]), kind, factor, d)
    return [_direction(table, grid, columns, d, min_rows, share) for d in found.values()]


def _formulas(V: np.ndarray, H: np.ndarray, a: int, b: int, rows: Any):
    x, y = V[rows, a], V[rows, b]
    hx, hy = H[rows, a], H[rows, b]
    with np.errstate(divide="ignore", invalid="ignore"):
        if a < b:
            yield "sum", 1.0, x + y, hx + hy + 1e-9 * np.abs(x + y)
            yield "product", 1.0, x * y, np.abs(y) * hx + np.abs(x) * hy + 1e-9 * np.abs(x * y)
        yield "difference", 1.0, x - y, hx + hy + 1e-9 * np.abs(x - y)
        for factor in (1.0, 100.0, 1000.0):
            q = factor * x / y
            yield "ratio", factor, q, np.nan_to_num(factor * (hx / np.abs(y) + np.abs(x) * hy / y ** 2) + 1e-9 * np.abs(q),
                                                    nan=0.0, posinf=0.0)


def _check(V, H, G, P, a: int, b: int, c: int, kind: str, factor: float, min_rows: int, share: float) -> int:
    """How many rows fit `c = kind(a, b)`; 0 when too few, or when the relation says nothing."""
    rows = P[:, a] & P[:, b] & P[:, c]
    if rows.sum() < min_rows:
        return 0
    x, y, z = V[rows, a], V[rows, b], V[rows, c]
    if np.ptp(x) == 0 or np.ptp(y) == 0 or np.ptp(z) == 0 or np.array_equal(z, x) or np.array_equal(z, y):
        return 0  # `z = x + 0`, `z = x * 1`: nothing derived
    (_, _, target, tol), = [f for f in _formulas(V[rows], H[rows], a, b, slice(None)) if f[0] == kind and f[1] == factor]
    with np.errstate(invalid="ignore"):
        hit = np.abs(z - target) <= tol + H[rows, c]
    if hit.sum() < max(min_rows, share * len(z)):
        return 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "ratio" and np.nanmedian(tol / np.abs(target)) > 0.01:
            return 0  # a divisor written too coarsely (a 1, a 2) for the fit to say anything
    if float(digits(z[hit], (z - target)[hit], G[rows, c][hit]).sum()) < 2 * MIN_DIGITS:
        return 0
    return int(hit.sum())


RESULT = re.compile(r"\b(total|sum|all|rate|ratio|per|percent|percentage|share|change|difference|diff|net|"
                    r"balance|gap|margin|growth|increase|decrease)\b|%", re.I)


def _direction(table: Any, grid: Numbers, columns: list[int], d: Derived, min_rows: int, share: float) -> Derived:
    """The relation said with its result first: the column whose header says it sums or divides (Total,
    rate, per, %, share, change), else the rightmost of the three."""
    three = (d.column, *d.of)
    named = [j for j in three if RESULT.search(table.columns[j].rpartition(" / ")[2])]
    out = named[0] if len(named) == 1 else max(three)
    if out == d.column:
        return d
    x, y = sorted(j for j in three if j != out)
    V, H, G = grid.values, grid.half, grid.step
    P = np.isfinite(V)
    at = {j: columns.index(j) for j in three}
    for kind, factor, a, b in (("sum", 1.0, x, y), ("product", 1.0, x, y), ("difference", 1.0, x, y),
                               ("difference", 1.0, y, x), *(("ratio", f, a, b) for f in (1.0, 100.0, 1000.0)
                                                            for a, b in ((x, y), (y, x)))):
        rows = _check(V, H, G, P, at[a], at[b], at[out], kind, factor, min_rows, share)
        if rows:
            return Derived(out, (a, b), kind, factor, rows)
    return d


def report(table: Any, sheet_rows: Sequence[int] | None = None) -> dict[str, list[dict[str, Any]]]:
    """What `curate inspect` shows: each aggregate row with the rows it aggregates, as the sheet numbers
    them (`sheet_rows`: each body row's number; else a text file's line, the header lines counted), and each
    column summing or computed from others, by name."""
    def number(r: int) -> int:
        return int(sheet_rows[r]) if sheet_rows else r + max(1, table.column_header_levels) + 1

    rows = [{"row": number(a.at), "of": [number(r) for r in a.of], "kind": a.kind, "columns_agreeing": a.confirmed_by}
            for a in sorted(row_relations(table), key=lambda a: a.at)]
    names = table.columns
    columns = [{"column": names[j], "of": [names[k] for k in of], "kind": how}
               for j, (how, of) in sorted(column_inputs(table).items())]
    return {"aggregates": rows, "derived": columns}

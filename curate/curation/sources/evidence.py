"""Is a row of a sheet part of the header? The evidence a person reads, weighed in one place.

A person tells a header row from a body row by several signs at once: numbers that label columns
(years, a run 1, 2, 3 ...) rather than measure anything, a label merged over several columns,
bold over a plain body, blank cells written and styled where the body holds figures. Each sign
alone misleads (a body of years, a bold total row), so each has a weight, and a row is header
when its signs add up to `HEADER`. The grid parser asks here, never weighs signs itself.
"""

from __future__ import annotations

from typing import Any, Callable

# The weight of each sign; a row whose signs add up to HEADER or more reads as header.
WEIGHTS: dict[str, float] = {
    "numeric_labels": 2.0,   # every number is a year, or the numbers run 1, 2, 3 ... across the row, or the
                             # same numbers stand under each group merged above (3, 6 | 3, 6 | 3, 6)
    "merged_across": 2.0,    # a cell merged over several columns: a group label
    "bold_over_plain": 1.0,  # the row's cells are bold and the body row below is not
    "styled_blanks": 1.0,    # blank cells written into the sheet (''), where the row below has figures
    "measurements": -3.0,    # a number that is neither a year nor part of a run: something measured
    "repeats_below": -2.0,   # the row below holds the same kind of numbers (years under years): a body of them
}
HEADER = 2.0


def _number(v: Any) -> float | None:
    from curate.curation.body import _parse_number

    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    n = _parse_number(v) if isinstance(v, str) else None
    return None if n is None else float(n)


def _year(n: float) -> bool:
    return n.is_integer() and 1800 <= n <= 2100


def numeric_labels(values: list[Any]) -> bool:
    """Numbers that name columns: all years, or whole numbers running up by one (1..24, 5..9)."""
    numbers = [n for n in (_number(v) for v in values) if n is not None]
    if not numbers:
        return False
    if all(_year(n) for n in numbers):
        return True
    return len(numbers) >= 3 and all(n.is_integer() for n in numbers) and all(
        b - a == 1 for a, b in zip(numbers, numbers[1:]))


def signs(cells: list[Any], below: list[Any], *, merged_across: bool = False, bold: bool = False,
          bold_below: bool = False, written_blanks: bool = False, figures_below: bool = False,
          repeated_under_groups: bool = False) -> dict[str, float]:
    """The signs a row shows, each with its weight. `cells`: the row's cells over the data
    columns; `below`: the next non-blank row's cells over the same columns; `figures_below`:
    some row further down holds figures in those columns; `repeated_under_groups`: the row
    writes the same numbers under each of the groups merged in the row above it."""
    out: dict[str, float] = {}
    numbers = [v for v in cells if _number(v) is not None]
    if repeated_under_groups:
        out["numeric_labels"] = WEIGHTS["numeric_labels"]
    elif numbers and numeric_labels(numbers):
        out["numeric_labels"] = WEIGHTS["numeric_labels"]
        years = all(_year(_number(v)) for v in numbers)
        below_numbers = [_number(v) for v in below if _number(v) is not None]
        if below_numbers and not merged_across and (
                all(_year(n) for n in below_numbers) if years else numeric_labels(below_numbers)):
            out["repeats_below"] = WEIGHTS["repeats_below"]
    elif numbers:
        out["measurements"] = WEIGHTS["measurements"]
    if merged_across:
        out["merged_across"] = WEIGHTS["merged_across"]
    if bold and not bold_below:
        out["bold_over_plain"] = WEIGHTS["bold_over_plain"]
    if written_blanks and figures_below:
        out["styled_blanks"] = WEIGHTS["styled_blanks"]
    return out


def is_header(found: dict[str, float]) -> bool:
    return sum(found.values()) >= HEADER


def row_signs(values: list[list[Any]], r: int, cols: list[int], *, merges: list[tuple[int, int, int, int]],
              bold: set[tuple[int, int]], filled: Callable[[Any], bool]) -> dict[str, float]:
    """The signs of row r of a grid over the columns `cols` (the first one the stub)."""
    cell = lambda rr, c: values[rr][c] if rr < len(values) and c < len(values[rr]) else None  # noqa: E731
    data = cols[1:] if len(cols) > 1 else cols
    nxt = next((x for x in range(r + 1, len(values)) if any(filled(cell(x, c)) for c in cols)), None)
    cells = [cell(r, c) for c in data if filled(cell(r, c))]
    below = [cell(nxt, c) for c in data if filled(cell(nxt, c))] if nxt is not None else []
    figures = next((x for x in range(r + 1, len(values)) if any(_number(cell(x, c)) is not None for c in data)), None)
    row_filled = [c for c in cols if filled(cell(r, c))]
    below_filled = [c for c in cols if nxt is not None and filled(cell(nxt, c))]
    above = next((x for x in range(r - 1, -1, -1) if any(filled(cell(x, c)) for c in cols)), None)
    return signs(cells, below, repeated_under_groups=above is not None and repeated_under_groups(
                     [cell(r, c) for c in data], data, [m for m in merges if m[0] <= above <= m[2]]),
                 merged_across=any(m[0] <= r <= m[2] and m[3] > m[1] and m[1] in data for m in merges),
                 bold=bool(row_filled) and sum((r, c) in bold for c in row_filled) * 2 > len(row_filled),
                 bold_below=bool(below_filled) and any((nxt, c) in bold for c in below_filled),
                 written_blanks=sum(isinstance(cell(r, c), str) and not cell(r, c).strip() for c in data) * 2 > len(data), figures_below=figures is not None)


def repeated_under_groups(cells: list[Any], cols: list[int], merges_above: list[tuple[int, int, int, int]]) -> bool:
    """The row writes one run of numbers again under each group merged above it ("Mouse #1",
    "Mouse #2", "Mouse #3", each over its ages 3 and 6): sub-labels of the groups, not
    measurements, since a body row measured under each group would not repeat itself exactly.
    Two or more groups of one width (two columns or more), covering every number of the row,
    and at least two different numbers under each."""
    groups = sorted({(m[1], m[3]) for m in merges_above if m[3] > m[1] and m[1] in cols})
    if len(groups) < 2 or len({b - a for a, b in groups}) != 1:
        return False
    at = dict(zip(cols, cells))
    runs = [tuple(_number(at.get(c)) for c in range(a, b + 1)) for a, b in groups]
    numbered = [c for c, v in at.items() if _number(v) is not None]
    return (all(None not in run for run in runs) and len(set(runs)) == 1 and len(set(runs[0])) >= 2
            and all(any(a <= c <= b for a, b in groups) for c in numbered))

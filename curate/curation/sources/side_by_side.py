"""Tables set side by side on one sheet: two blocks of columns with an empty column between them,
each with its own header and its own row labels ("Period 1" SKUs beside "Period 2" SKUs, "ROI 1"
beside "ROI 2"), are two tables, not one whose middle column is blank.

A sheet is cut at an empty column only where the blocks on both sides look like tables: two or more
columns, a header row of labels over two or more rows of cells, and the right-hand block opening
with a column of its own row labels (text, or the left block's first heading repeated). A spacer
column inside one table (replicates of one experiment, a blank column before "Mean") has figures
on its right and no labels of their own: it stays. Row labels written again, row by row, under other
headings (a pool's players beside their points) are for the reader's eye: one table. A block that
is no table (a note beside the grid) stays with the table on its left.
"""

from __future__ import annotations

from typing import Any

from curate.curation.sources.grid import Grid, filled, grid_rows, is_number, used_width


def side_by_side(grid: Grid) -> list[Grid]:
    """The grid cut into its side-by-side tables, left to right; `[grid]` when it holds one."""
    values = grid.values
    spans = _column_blocks(grid)
    if not spans:
        return [grid]
    kept = [spans[0]]
    for span in spans[1:]:
        if looks_like_table(values, kept[-1]) and looks_like_table(values, span) and opens_with_labels(values, kept[-1], span):
            kept.append(span)
        else:
            kept[-1] = (kept[-1][0], span[1])  # a note beside the grid, or more of the same table
    kept = [part for span in kept for part in _repeated(values, span)]
    if len(kept) == 1:
        return [grid]
    titles = title_rows(grid, kept)
    return [_columns_of(grid, c0, c1, titles if k else []) for k, (c0, c1) in enumerate(kept)]


def _repeated(values: list[list[Any]], span: tuple[int, int]) -> list[tuple[int, int]]:
    """A block whose heading row repeats one run of headings from its first column on ("States, Cases,
    States, Cases" under "Highest" and "Least"), each run opening with its own row labels: one table
    per run, with no empty column between them. The highest states' cases beside the least ones'
    are two lists, not pairs: a row's "Least / Cases" is not Maharashtra's. `[span]` otherwise."""
    block = _block(values, span)
    width = span[1] - span[0] + 1
    for r in sorted(r for r in grid_rows(block) if sum(filled(v) for v in block[r]) >= 2)[:MAX_HEADING_ROWS]:
        heads = [_key(v) if _label(v) else None for v in block[r]]
        if None in heads:
            continue  # a heading row names every column
        for period in range(2, width // 2 + 1):
            if width % period or any(heads[c] != heads[c % period] for c in range(width)):
                continue
            runs = [(span[0] + k * period, span[0] + (k + 1) * period - 1) for k in range(width // period)]
            if all(looks_like_table(values, run) for run in runs) and all(
                    opens_with_labels(values, a, b) for a, b in zip(runs, runs[1:])):
                return runs
            return [span]
    return [span]


MAX_HEADING_ROWS = 4  # rows of two or more cells at a block's top where its heading row may stand


def _column_blocks(grid: Grid) -> list[tuple[int, int]]:
    """Runs of columns with something in them, split at columns empty on every row; a merged cell
    over an empty column joins its sides, except a lone title on its row (a heading over both)."""
    values = grid.values
    width = used_width(values)
    used = [any(c < len(row) and filled(row[c]) for row in values) for c in range(width)]
    for r0, c0, _, c1 in grid.merges:
        lone = sum(filled(v) for v in values[r0]) == 1 if r0 < len(values) else True
        if c1 > c0 and not lone:
            for c in range(c0, min(c1, width - 1) + 1):  # a merge may run past the last filled column
                used[c] = True
    spans: list[tuple[int, int]] = []
    for c, on in enumerate(used):
        if on and spans and spans[-1][1] == c - 1:
            spans[-1] = (spans[-1][0], c)
        elif on:
            spans.append((c, c))
    return spans


def _block(values: list[list[Any]], span: tuple[int, int]) -> list[list[Any]]:
    c0, c1 = span
    return [[row[c] if c < len(row) else None for c in range(c0, c1 + 1)] for row in values]


def looks_like_table(values: list[list[Any]], span: tuple[int, int]) -> bool:
    """Two or more columns, and a header row of labels (text in two or more cells) over two or
    more rows of two or more cells."""
    block = _block(values, span)
    if span[1] <= span[0]:
        return False
    rows = sorted(r for r in grid_rows(block) if sum(filled(v) for v in block[r]) >= 2)
    header = next((r for r in rows if sum(isinstance(v, str) and filled(v) and not is_number(v) for v in block[r]) >= 2),
                  None)
    return header is not None and sum(r > header for r in rows) >= 2


def opens_with_labels(values: list[list[Any]], left: tuple[int, int], right: tuple[int, int]) -> bool:
    """The right block's first column labels its own rows: mostly text below its header, or it is
    headed as the left block's first column is ("SKU" beside "SKU", "estrous cycle" beside it).
    Labels that repeat the left block's row by row under other headings are written again for the
    reader's eye (a pool's players, their picks on the left and their points on the right): one
    table. Under the same headings they are a second copy of the table (original and new prices,
    Runx1 and Runx3 for the same sets): two."""
    first, left_first = _first_column(values, right), _first_column(values, left)
    if len(first) < 3:
        return False
    words = [v for v in first[1:] if _label(v)]
    head_left = next((v for v in left_first if _label(v)), None)
    head_right = next((v for v in first if _label(v)), None)
    same_head = head_left is not None and head_right is not None and _same(head_left, head_right)
    if not (2 * len(words) > len(first) - 1 or same_head):
        return False
    if _same_rows(values, left, right):  # the same headings, the copy perhaps with a column more (the change)
        a, b = _headings(values, left), _headings(values, right)
        return len(a) >= 2 and len(b) >= 2 and a[:len(b)] == b[:len(a)]
    return True


def _same_rows(values: list[list[Any]], left: tuple[int, int], right: tuple[int, int]) -> bool:
    """The two blocks' first columns hold the same label on the same row, on three or more rows and
    nine in ten of those labelled on both sides."""
    pairs = [(row[left[0]], row[right[0]]) for row in values if right[0] < len(row)
             and filled(row[left[0]]) and filled(row[right[0]])]
    return len(pairs) >= 3 and 10 * sum(_key(a) == _key(b) for a, b in pairs) >= 9 * len(pairs)


def _same(a: Any, b: Any) -> bool:
    return str(a).strip().casefold() == str(b).strip().casefold()


def _key(v: Any) -> str:
    return " ".join(str(v).split()).casefold()


def _headings(values: list[list[Any]], span: tuple[int, int]) -> list[str]:
    """The block's header row: its first row of two or more cells."""
    block = _block(values, span)
    rows = sorted(r for r in grid_rows(block) if sum(filled(v) for v in block[r]) >= 2)
    return [_key(v) for v in block[rows[0]] if filled(v)] if rows else []


def _first_column(values: list[list[Any]], span: tuple[int, int]) -> list[Any]:
    """The block's first column over its grid rows (rows of two or more cells within the block)."""
    block = _block(values, span)
    return [block[r][0] for r in sorted(grid_rows(block)) if filled(block[r][0])]


def _label(v: Any) -> bool:
    return isinstance(v, str) and filled(v) and not is_number(v)


def title_rows(grid: Grid, spans: list[tuple[int, int]]) -> list[int]:
    """The rows at the top of the sheet that hold one text alone, above where every other block
    begins (the sheet's title, "Time = 0 min"): they head every block, not only the one they stand in."""
    def begins(span: tuple[int, int]) -> int:
        return next((r for r, row in enumerate(_block(grid.values, span)) if any(filled(v) for v in row)), len(grid.values))

    out = []
    for r, row in enumerate(grid.values):
        cells = [c for c, v in enumerate(row) if filled(v)]
        if not cells:
            continue
        if len(cells) != 1 or not _label(row[cells[0]]) or any(
                r >= begins(span) for span in spans if not span[0] <= cells[0] <= span[1]):
            break
        out.append(r)
    return out


def _columns_of(grid: Grid, c0: int, c1: int, titles: list[int]) -> Grid:
    """Columns c0..c1 of the grid as a grid of their own, with the sheet position kept; the sheet's
    title rows (in the first column) are copied above it."""
    def inside(key: tuple[int, int]) -> bool:
        return c0 <= key[1] <= c1

    def moved(cells: dict) -> dict:
        return {(r, c - c0): v for (r, c), v in cells.items() if inside((r, c))}

    values = [[row[c] if c < len(row) else None for c in range(c0, c1 + 1)] for row in grid.values]
    for r in titles:
        values[r][0] = next(v for v in grid.values[r] if filled(v))
    merges = [(m[0], m[1] - c0, m[2], m[3] - c0) for m in grid.merges if c0 <= m[1] and m[3] <= c1]
    return Grid(values=values, merges=merges, indents=moved(grid.indents), header_rows=grid.header_rows,
                origin=(grid.origin[0], grid.origin[1] + c0), fills=moved(grid.fills),
                bold={(r, c - c0) for r, c in grid.bold if inside((r, c))}, display=moved(grid.display),
                comments=moved(grid.comments), conditional={(r, c - c0) for r, c in grid.conditional if inside((r, c))})

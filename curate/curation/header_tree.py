"""The header tree as a tree: branches, flattened names, summary nodes, and block exchanges.

A Table stores its header as TreeThinker tuples (axis, level, start, end, text). Consumers
want more than the tuples: the nesting (which node is under which), a flat name per column
("2023 / Q1") for formats with one header row, the summary nodes (Total, All, Average) that
a sum over the parts must leave out, and, for Structure Comprehending variants, a check that
one header is another with two sibling blocks exchanged (RealHiTBench's `_swap` tables).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from curate.curation.table import Axis, HeaderNode

PATH_SEPARATOR = " / "  # between the levels of a header path or a nested row label, wherever one is written

# Words that start a summary label; cleaning's `summary_keywords` default to them too.
SUMMARY_WORDS = ("total", "totals", "grand total", "subtotal", "sum", "average", "avg", "mean", "all", "overall")
# A row that reports a statistic of the rows above it, not a case ("Mean", "SD", "Maximum marks"):
# cleaning leaves such rows out of the data view in whichever label column they stand.
STATISTIC_ROW = re.compile(r"^\s*(mean|average|avg|sd|s\.d\.|std\.? ?dev\.?|stdev|standard deviation|se|s\.e\.|sem|"
                           r"standard error|median|variance|min(imum)?|max(imum)?)(\s+(marks?|scores?|values?))?\s*[:.]?\s*$",
                           re.IGNORECASE)
# A summary label in a header: one of those words first ("Total, England", "All persons"), a
# (sub-, grand) total first, "Median" first, or "total" last ("Weekly Total"). Then checked
# against its place among its siblings.
SUMMARY_TEXT = re.compile(r"^(%s)\b|^(sub-?|grand )?totals?\b|\btotals?$|^(weekly|monthly|annual|yearly) total|^median\b"
                          % "|".join(sorted(SUMMARY_WORDS, key=len, reverse=True)), re.IGNORECASE)


GRAND_TOTAL = re.compile(r"^\s*(grand\s+)?(total|totals|all|overall|sum)\s*[:.]?\s*$", re.IGNORECASE)
GROUP_TOTAL = re.compile(r"^\s*(?:(?P<before>.+?)\s*[-\u2013:,]?\s+(?:sub-?)?totals?|(?:sub-?)?totals?\s*(?:for|of|[-\u2013:,])?\s+(?P<after>.+?))\s*$",
                         re.IGNORECASE)


def grand_total(label: str) -> bool:
    """A label that totals everything above it: "Total", "Grand Total", "All", "Overall"."""
    return bool(GRAND_TOTAL.match(label or ""))


def total_of(label: str) -> str | None:
    """The group a subtotal label names ("Africa Total", "Total Africa", "Total for Africa": "Africa"),
    or None. A subtotal is a child of its group, never its sibling."""
    m = GROUP_TOTAL.match(label or "")
    if not m or grand_total(label):
        return None
    return (m.group("before") or m.group("after") or "").strip() or None


@dataclass(frozen=True)
class Branch:
    """A header node with the nodes nested under it, in order."""

    node: HeaderNode
    children: tuple["Branch", ...] = ()

    @property
    def shape(self) -> tuple:
        """The branch without positions: its text and its children's shapes. Equal shapes
        mean the same labels nested the same way, wherever they stand."""
        return (self.node.text, tuple(c.shape for c in self.children))


def branches(header: Iterable[HeaderNode], axis: Axis) -> tuple[Branch, ...]:
    """The nodes of one axis as a forest: a node's parent is the nearest node of a lower
    level whose span covers it."""
    children: dict[HeaderNode | None, list[HeaderNode]] = {None: []}
    open_nodes: list[HeaderNode] = []  # the path from the top to the last node placed
    for n in sorted((n for n in header if n.axis == axis), key=lambda n: (n.start, n.level, -n.end)):
        while open_nodes and not (open_nodes[-1].level < n.level and open_nodes[-1].start <= n.start
                                  and n.end <= open_nodes[-1].end):
            open_nodes.pop()  # it ends before n, or stands beside it: no later node falls under it either
        children.setdefault(open_nodes[-1] if open_nodes else None, []).append(n)
        open_nodes.append(n)

    def grow(n: HeaderNode) -> Branch:
        return Branch(n, tuple(grow(c) for c in sorted(children.get(n, []), key=lambda c: c.start)))

    return tuple(grow(n) for n in sorted(children[None], key=lambda c: c.start))


def flattened_names(header: Iterable[HeaderNode], n_columns: int, separator: str = PATH_SEPARATOR) -> list[str]:
    """Each column named by its path in the column tree, top first ("2023 / Q1"); a label
    repeated down a path (a merged cell read on two rows) appears once."""
    nodes = sorted((n for n in header if n.axis == "C"), key=lambda n: n.level)
    names = []
    for j in range(n_columns):
        parts: list[str] = []
        for n in nodes:
            if n.start <= j <= n.end and (not parts or parts[-1] != n.text):
                parts.append(n.text)
        names.append(separator.join(parts))
    return names


SERIES_CODE = re.compile(r"^[A-Z0-9]{3,8}$")


def series_codes(labels: Sequence[str]) -> bool:
    """Labels that identify series rather than name them (ONS's "A4YN", "DJQ3", "LNNP"): each one
    short word of capitals and digits, all of one length, all different, and some mixing letters
    with digits (so "USA | GBR | FRA" or "2019 | 2020" stay names)."""
    texts = [t.strip() for t in labels]
    return (len(texts) >= 2 and all(SERIES_CODE.match(t) for t in texts) and len({len(t) for t in texts}) == 1
            and len(set(texts)) == len(texts)
            and any(re.search(r"[A-Z]", t) and re.search(r"[0-9]", t) for t in texts))


def summary_nodes(header: Iterable[HeaderNode]) -> list[HeaderNode]:
    """Nodes that summarise their siblings: a summary label (Total, All, Average, ...) on a
    node that has siblings, standing first or last among them. A sum over a parent's parts
    leaves these out; "Total" alone in a one-column header is just a column name."""
    header = tuple(header)
    out = []
    for axis in ("C", "R"):
        def visit(level: tuple[Branch, ...]) -> None:
            for i, b in enumerate(level):
                if len(level) > 1 and i in (0, len(level) - 1) and SUMMARY_TEXT.search(b.node.text.strip()):
                    out.append(b.node)
                visit(b.children)
        visit(branches(header, axis))
    return out


@dataclass(frozen=True)
class Exchange:
    """Two runs of sibling blocks that changed places: under the path `parent` (labels from
    the top; empty for the top level), the blocks `first` and `second` (their labels)."""

    axis: str
    parent: tuple[str, ...]
    first: tuple[str, ...]
    second: tuple[str, ...]


def block_exchange(a: Sequence, b: Sequence) -> tuple[int, int, int, int] | None:
    """(i, j, k, l) when b is a with the runs a[i:j] and a[k:l] exchanged (j <= k; j == k for
    adjacent runs), the shortest such reading; None when b is not such an exchange of a."""
    if len(a) != len(b) or list(a) == list(b):
        return None
    i = next(x for x in range(len(a)) if a[x] != b[x])
    l = next(x for x in range(len(a), 0, -1) if a[x - 1] != b[x - 1])
    mid_a, mid_b = list(a[i:l]), list(b[i:l])
    n = len(mid_a)
    for first in range(1, n):  # length of the first run
        for second in range(1, n - first + 1):
            gap = n - first - second
            if gap < 0:
                continue
            if mid_b == mid_a[n - second:] + mid_a[first:first + gap] + mid_a[:first]:
                return i, i + first, i + first + gap, l
    return None


def find_exchange(a: tuple[Branch, ...], b: tuple[Branch, ...], axis: str,
                  parent: tuple[str, ...] = ()) -> Exchange | None:
    """Where forest b is forest a with two runs of sibling blocks exchanged, once, at one
    place in the tree; None when they are equal or differ otherwise."""
    shapes_a, shapes_b = [x.shape for x in a], [x.shape for x in b]
    if shapes_a == shapes_b:
        return None
    found = block_exchange(shapes_a, shapes_b)
    if found:
        i, j, k, l = found
        return Exchange(axis, parent, tuple(x.node.text for x in a[i:j]), tuple(x.node.text for x in a[k:l]))
    if len(a) == len(b):
        differ = [x for x in range(len(a)) if shapes_a[x] != shapes_b[x]]
        if len(differ) == 1 and a[differ[0]].node.text == b[differ[0]].node.text:
            x = differ[0]
            return find_exchange(a[x].children, b[x].children, axis, parent + (a[x].node.text,))
    return None


def _table_shape(table) -> tuple:
    return (table.caption, tuple(b.shape for b in branches(table.header, "C")),
            tuple(b.shape for b in branches(table.header, "R")))


def sheet_exchange(a: Sequence, b: Sequence) -> Exchange | None:
    """Where the tables of sheet b are those of sheet a with two sibling blocks exchanged:
    two runs of stacked sub-tables (axis "T"), or two runs of blocks in one table's column
    ("C") or row ("R") header tree, everything else the same. None otherwise."""
    shapes_a, shapes_b = [_table_shape(t) for t in a], [_table_shape(t) for t in b]
    found = block_exchange(shapes_a, shapes_b)
    if found:
        i, j, k, l = found
        label = lambda t: t.caption or t.name  # noqa: E731
        return Exchange("T", (), tuple(label(t) for t in a[i:j]), tuple(label(t) for t in a[k:l]))
    if len(a) != len(b):
        return None
    differ = [x for x in range(len(a)) if shapes_a[x] != shapes_b[x]]
    if len(differ) != 1 or a[differ[0]].caption != b[differ[0]].caption:
        return None
    x = differ[0]
    changed = [axis for k, axis in ((1, "C"), (2, "R")) if shapes_a[x][k] != shapes_b[x][k]]
    if len(changed) != 1:
        return None
    return find_exchange(branches(a[x].header, changed[0]), branches(b[x].header, changed[0]), changed[0])


def row_paths(header: Iterable[HeaderNode], n_rows: int) -> list[tuple[str, ...]]:
    """Each body row named by the row nodes that cover it, top first ("Asia", "Japan"); a
    label repeated down a path appears once. Rows no node covers get an empty path."""
    nodes = sorted((n for n in header if n.axis == "R"), key=lambda n: n.level)
    paths: list[list[str]] = [[] for _ in range(n_rows)]
    for n in nodes:
        for r in range(max(0, n.start), min(n.end, n_rows - 1) + 1):
            if not paths[r] or paths[r][-1] != n.text:
                paths[r].append(n.text)
    return [tuple(p) for p in paths]


def tree_rows(header: Iterable[HeaderNode], n_rows: int) -> tuple[int, ...]:
    """The body rows that are no case of the table but a node of its row tree: a group's own row
    (the "Asia" row above the Asian countries, which holds their subtotal) and the rows of its
    summary nodes (a Total, All or Average first or last among its siblings). Ordinary questions
    leave them out (cleaning marks them as summary rows); tree questions read them as totals."""
    header = tuple(header)
    summary = set(summary_nodes(header))
    rows: set[int] = set()

    def visit(level: tuple[Branch, ...]) -> None:
        for b in level:
            if b.children and b.node.start < b.children[0].node.start:
                rows.add(b.node.start)
            elif b.node in summary and not b.children:
                rows.update(range(b.node.start, b.node.end + 1))
            visit(b.children)

    visit(branches(header, "R"))
    return tuple(sorted(r for r in rows if 0 <= r < n_rows))


def exchanged(header: Iterable[HeaderNode], axis: Axis, first: Branch, second: Branch,
              size: int) -> tuple[tuple[HeaderNode, ...], list[int]]:
    """The header with two sibling blocks of one axis exchanged (`first` stands before
    `second`), and the new order of the body's rows or columns (new position -> old).

    Each block moves whole, with everything nested under it; what stands between them moves
    by the difference in their sizes; a node covering both (their parent) stays as it is.
    """
    a0, a1, b0, b1 = first.node.start, first.node.end, second.node.start, second.node.end
    if not (0 <= a0 <= a1 < b0 <= b1 < size):
        raise ValueError(f"blocks {a0}-{a1} and {b0}-{b1} are not two blocks in order within {size}")
    order = [*range(a0), *range(b0, b1 + 1), *range(a1 + 1, b0), *range(a0, a1 + 1), *range(b1 + 1, size)]
    new_of = {old: new for new, old in enumerate(order)}
    segments = ((0, a0 - 1), (a0, a1), (a1 + 1, b0 - 1), (b0, b1), (b1 + 1, size - 1))
    out = []
    for n in header:
        if n.axis != axis or (n.start <= a0 and n.end >= b1):
            out.append(n)
        elif any(lo <= n.start and n.end <= hi for lo, hi in segments):
            out.append(HeaderNode(n.axis, n.level, new_of[n.start], new_of[n.end], n.text))
        else:
            raise ValueError(f"header node {n.text!r} ({n.start}-{n.end}) straddles an exchanged block")
    return tuple(out), order


def children_labels(header: Iterable[HeaderNode], axis: Axis, path: Sequence[str]) -> list[str] | None:
    """The labels directly under the node at `path` (labels from the top; empty: the top level),
    in the order the table shows them; None when no node has that path."""
    level = branches(header, axis)
    for label in path:
        found = next((b for b in level if b.node.text == label), None)
        if found is None:
            return None
        level = found.children
    return [b.node.text for b in level]

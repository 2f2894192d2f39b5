"""Tables as text, in ToRR's seven serializations plus LaTeX, and parsers back where one exists.

A hierarchical column header keeps its shape where the format has one: HTML writes `colspan`
and `rowspan`, LaTeX writes `\\multicolumn` and `\\multirow`. Formats with one header row
(Markdown, CSV, JSON, indexed row major, DataFrame code, concatenation) name each column by its
header path, "Top / Sub". Cells are written as a reader would show them: 17 not 17.0, and
missing values as empty cells (`null` in JSON, `None` in DataFrame code).

A row tree stays visible in every format: where a row's path in the row tree (`row_paths`) holds
labels that no cell of the row shows (a section row above it, an indented parent, a merged stub
read into the tree), the row's label is written with them, top first, in the same "Top / Sub"
form as the column names ("TOTAL / Men, 16 years and over / 16 to 19 years"); `shown_rows`
gives the cells every writer writes. A row whose path its own cells already show (a merged stub
repeated in a column of its own), and every flat table, is written as stored.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

from curate.curation.answers import plain
from curate.curation.body import cell_text
from curate.curation.header_tree import row_paths
from curate.curation.header_tree import PATH_SEPARATOR
from curate.curation.table import unique_names

if TYPE_CHECKING:  # pragma: no cover
    from curate.curation.table import Table

FORMATS = ("html", "csv", "json", "markdown", "indexed_row_major", "dataframe", "concatenation", "latex")
PARSEABLE = ("html", "csv", "json", "markdown", "indexed_row_major", "dataframe", "latex")


def serialize(table: "Table", fmt: str) -> str:
    if fmt not in WRITERS:
        raise ValueError(f"unknown serialization {fmt!r}; known: {', '.join(FORMATS)}")
    return WRITERS[fmt](table)


def parse(text: str, fmt: str) -> tuple[list[str], list[list[str]]]:
    """(column names, rows of cell texts) from a serialization; for HTML and LaTeX the column
    names are header paths, with merged cells spread over the columns they span."""
    if fmt not in PARSERS:
        raise ValueError(f"{fmt!r} cannot be parsed back; parseable: {', '.join(PARSEABLE)}")
    return PARSERS[fmt](text)


# ---------------------------------------------------------------------------- shared pieces

def rows_of(table: "Table") -> list[list[Any]]:
    """The body's rows as the formats write them: stored values, each row's label carrying the
    labels of its path that the row does not show (`labelled_paths`)."""
    columns = [c.to_pylist() for c in table.body.columns]
    rows = [list(r) for r in zip(*columns)] if columns else []
    for r, (j, text) in labelled_paths(table, rows).items():
        rows[r][j] = text
    return rows


def shown_rows(table: "Table") -> list[list[str]]:
    """Every row's cell texts as the serializations write them."""
    return [[cell_text(v) for v in row] for row in rows_of(table)]


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def labelled_paths(table: "Table", rows: list[list[Any]] | None = None) -> dict[int, tuple[int, str]]:
    """{body row: (its label's column, the label with its path)} for the rows whose path in the
    row tree holds labels none of their cells show. The label's column is the one showing the
    deepest label of the path, else the first text cell of the row (else the first text column);
    the written label is the hidden labels of the path, top first, with the row's own label in
    its place ("Asia / Japan"). Labels shown in another cell of the row are not repeated."""
    import pyarrow as pa

    if not any(n.axis == "R" for n in table.header):
        return {}
    if rows is None:
        columns = [c.to_pylist() for c in table.body.columns]
        rows = [list(r) for r in zip(*columns)] if columns else []
    text_columns = [j for j, f in enumerate(table.body.schema) if pa.types.is_string(f.type)
                    or pa.types.is_large_string(f.type)]
    out: dict[int, tuple[int, str]] = {}
    for r, path in enumerate(row_paths(table.header, len(rows))):
        if not path:
            continue
        texts = [_folded(cell_text(v)) for v in rows[r]]
        hidden = [x for x in path if _folded(x) not in texts]
        if not hidden:
            continue
        shown = [j for x in path for j, t in enumerate(texts) if t and t == _folded(x)]
        own = [j for j in text_columns if texts[j]]
        stub = shown[-1] if shown else own[0] if own else text_columns[0] if text_columns else None
        if stub is None:
            continue  # no text column to write a label into (a table of numbers with a row tree)
        label = cell_text(rows[r][stub])
        parts = [x for x in path if _folded(x) not in texts or (shown and _folded(x) == texts[stub])]
        if label and _folded(label) not in {_folded(x) for x in path}:
            parts.append(label)
        out[r] = (stub, PATH_SEPARATOR.join(dict.fromkeys(parts)))
    return out


def header_grid(table: "Table") -> list[list[tuple[str, int, int, int]]]:
    """The column header as rows of (text, first column, colspan, rowspan), one row per level,
    covering every column once: a node spans down when nothing lies under it, a column that no
    node names shows its own name over all levels, and a gap gets an empty cell."""
    nodes = [n for n in table.header if n.axis == "C" and n.start < table.n_cols]
    names = column_paths(table)
    if not nodes or max(n.level for n in nodes) == 0 and all(n.start == n.end for n in nodes):
        return [[(name, j, 1, 1) for j, name in enumerate(names)]]
    depth = 1 + max(n.level for n in nodes)
    deepest = [-1] * table.n_cols
    for n in nodes:
        for j in range(n.start, min(n.end, table.n_cols - 1) + 1):
            deepest[j] = max(deepest[j], n.level)
    starts = {(n.level, n.start): n for n in nodes}
    covered: set[tuple[int, int]] = set()  # (level, column) under a cell from a level above
    grid: list[list[tuple[str, int, int, int]]] = []
    for level in range(depth):
        row: list[tuple[str, int, int, int]] = []
        j = 0
        while j < table.n_cols:
            if (level, j) in covered:
                j += 1
                continue
            node = starts.get((level, j))
            if node is not None:
                span = range(j, min(node.end, table.n_cols - 1) + 1)
                rowspan = depth - level if all(deepest[k] == level for k in span) else 1
                text, width = node.text, len(span)
            elif deepest[j] < 0:  # no node names this column: its own name, all the way down
                text, width, rowspan = names[j], 1, depth - level
            else:
                text, width = "", 1
                rowspan = depth - level if deepest[j] < level else 1
            row.append((text, j, width, rowspan))
            for dl in range(1, rowspan):
                for k in range(j, j + width):
                    covered.add((level + dl, k))
            j += width
        grid.append(row)
    return grid


def column_paths(table: "Table") -> list[str]:
    """Each body column's header path (the texts of the nodes above it, top first), made unique."""
    nodes = [n for n in table.header if n.axis == "C"]
    if not nodes or max(n.level for n in nodes) == 0:
        return list(table.columns)
    paths = []
    for j in range(table.n_cols):
        texts = [n.text for n in sorted(nodes, key=lambda n: n.level) if n.start <= j <= n.end and n.text]
        paths.append(PATH_SEPARATOR.join(dict.fromkeys(texts)) or table.columns[j])
    return unique_names(paths)


# ---------------------------------------------------------------------------- writers

def to_csv(table: "Table") -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(column_paths(table))
    writer.writerows([[cell_text(v) for v in row] for row in rows_of(table)])
    return out.getvalue()


def _json_value(value: Any) -> Any:
    """Numbers, booleans and nulls as themselves; anything else (text, dates) as its cell text."""
    return plain(value) if value is None or isinstance(value, (bool, int, float)) else cell_text(value)


def to_json(table: "Table") -> str:
    """TableBench's layout: {"columns": [...], "data": [[...], ...]}; numbers stay numbers."""
    return json.dumps({"columns": column_paths(table),
                       "data": [[_json_value(v) for v in row] for row in rows_of(table)]}, ensure_ascii=False)


def _escaped(text: str) -> str:
    """A cell with its `|` escaped, and a backslash doubled only where it would read as an escape
    (before `|` or `\\`, or at the end): `\\cite{x}` is shown as it is, so a model that copies a
    cell copies the value."""
    return re.sub(r"\\(?=[\\|]|$)", r"\\\\", text).replace("|", "\\|")


def _md(text: str) -> str:
    return _escaped(text).replace("\n", "<br>")


def to_markdown(table: "Table") -> str:
    lines = ["| " + " | ".join(_md(c) for c in column_paths(table)) + " |",
             "| " + " | ".join("---" for _ in range(table.n_cols)) + " |"]
    lines += ["| " + " | ".join(_md(cell_text(v)) for v in row) + " |" for row in rows_of(table)]
    return "\n".join(lines) + "\n"


def to_html(table: "Table") -> str:
    parts = ["<table>"]
    if table.caption:
        parts.append(f"<caption>{html.escape(table.caption)}</caption>")
    parts.append("<thead>")
    for level in header_grid(table):
        cells = []
        for text, _, colspan, rowspan in level:
            spans = (f' colspan="{colspan}"' if colspan > 1 else "") + (f' rowspan="{rowspan}"' if rowspan > 1 else "")
            cells.append(f"<th{spans}>{html.escape(text)}</th>")
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</thead>")
    parts.append("<tbody>")
    for row in rows_of(table):
        parts.append("<tr>" + "".join(f"<td>{html.escape(cell_text(v))}</td>" for v in row) + "</tr>")
    parts.append("</tbody>")
    parts.append("</table>")
    return "\n".join(parts) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\n": " "}


def tex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def to_latex(table: "Table") -> str:
    lines = [r"\begin{tabular}{" + "l" * max(1, table.n_cols) + "}", r"\hline"]
    for level in header_grid(table):
        by_start = {start: (text, colspan, rowspan) for text, start, colspan, rowspan in level}
        cells, j = [], 0
        while j < table.n_cols:
            if j not in by_start:  # under a \multirow from above
                cells.append("")
                j += 1
                continue
            text, colspan, rowspan = by_start[j]
            body = tex(text)
            if rowspan > 1:
                body = rf"\multirow{{{rowspan}}}{{*}}{{{body}}}"
            if colspan > 1:
                body = rf"\multicolumn{{{colspan}}}{{c}}{{{body}}}"
            cells.append(body)
            j += colspan
        lines.append(" & ".join(cells) + r" \\")
    lines.append(r"\hline")
    lines += [" & ".join(tex(cell_text(v)) for v in row) + r" \\" for row in rows_of(table)]
    lines += [r"\hline", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def to_indexed_row_major(table: "Table") -> str:
    """`col : a | b` then `row 1 : x | y`: the linearisation of TableLlama and ToRR."""
    def line(label: str, values: list[str]) -> str:
        return f"{label} : " + " | ".join(_escaped(v).replace("\n", " ") for v in values)

    rows = [line(f"row {i}", [cell_text(v) for v in row]) for i, row in enumerate(rows_of(table), 1)]
    return "\n".join([line("col", column_paths(table)), *rows]) + "\n"


def to_dataframe(table: "Table") -> str:
    """Python that builds the table with pandas; the values are literals."""
    rows = rows_of(table)
    columns = {name: [_json_value(row[j]) for row in rows] for j, name in enumerate(column_paths(table))}
    body = ",\n".join(f"    {name!r}: {values!r}" for name, values in columns.items())
    return "import pandas as pd\n\ndf = pd.DataFrame({\n" + body + "\n})\n"


def to_concatenation(table: "Table") -> str:
    """Every header and cell text in reading order, separated by spaces (ToRR's weakest format)."""
    texts = column_paths(table) + [cell_text(v) for row in rows_of(table) for v in row]
    return " ".join(t for t in texts if t) + "\n"


WRITERS = {"html": to_html, "csv": to_csv, "json": to_json, "markdown": to_markdown,
           "indexed_row_major": to_indexed_row_major, "dataframe": to_dataframe,
           "concatenation": to_concatenation, "latex": to_latex}


# ---------------------------------------------------------------------------- parsers

def _parse_csv(text: str) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


def _parse_json(text: str) -> tuple[list[str], list[list[str]]]:
    data = json.loads(text)
    return data["columns"], [[cell_text(v) for v in row] for row in data["data"]]


def _split_escaped(line: str, sep: str = "|") -> list[str]:
    parts, current, i = [], [], 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line) and line[i + 1] in ("\\", sep):
            current.append(line[i + 1])
            i += 2
            continue
        if ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def _parse_markdown(text: str) -> tuple[list[str], list[list[str]]]:
    lines = [ln for ln in text.splitlines() if ln.strip()]

    def cells(line: str) -> list[str]:
        return [c.strip().replace("<br>", "\n") for c in _split_escaped(line.strip()[1:-1])]

    return cells(lines[0]), [cells(ln) for ln in lines[2:]]


def _parse_indexed(text: str) -> tuple[list[str], list[list[str]]]:
    lines = text.splitlines()

    def cells(line: str) -> list[str]:
        values = line.split(" : ", 1)[1] if " : " in line else ""
        return [c.strip() for c in _split_escaped(values)]

    return cells(lines[0]), [cells(ln) for ln in lines[1:] if ln.strip()]


def _parse_dataframe(text: str) -> tuple[list[str], list[list[str]]]:
    import ast

    call = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call))
    columns = ast.literal_eval(call.args[0])
    names = list(columns)
    return names, [[cell_text(v) for v in row] for row in zip(*columns.values())]


class _HtmlGrid(HTMLParser):
    """Rows of (tag, text, colspan, rowspan) from <tr> elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[tuple[str, str, int, int]]] = []
        self._cell: list[Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            a = dict(attrs)
            self._cell = [tag, [], int(a.get("colspan") or 1), int(a.get("rowspan") or 1)]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            tag_, text, colspan, rowspan = self._cell
            self.rows[-1].append((tag_, "".join(text), colspan, rowspan))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[1].append(data)


def _expand(rows: list[list[tuple[str, int, int]]]) -> list[list[str | None]]:
    """Rows of (text, colspan, rowspan) as a full grid; a merged cell fills its area with its
    text in the first row and None below it."""
    grid: list[list[str | None]] = []
    taken: dict[tuple[int, int], str | None] = {}
    for r, row in enumerate(rows):
        out: list[str | None] = []
        j = 0
        cells = iter(row)
        while True:
            while (r, j) in taken:
                out.append(taken.pop((r, j)))
                j += 1
            item = next(cells, None)
            if item is None:
                break
            text, colspan, rowspan = item
            for dj in range(colspan):
                out.append(text)
                for dr in range(1, rowspan):
                    taken[(r + dr, j + dj)] = None
            j += colspan
        grid.append(out)
    return grid


def _paths(header: list[list[str | None]]) -> list[str]:
    width = max((len(r) for r in header), default=0)
    paths = []
    for j in range(width):
        texts = [r[j] for r in header if j < len(r) and r[j]]
        paths.append(PATH_SEPARATOR.join(dict.fromkeys(texts)))
    return paths


def _parse_html(text: str) -> tuple[list[str], list[list[str]]]:
    parser = _HtmlGrid()
    parser.feed(text)
    head = [[(t, c, r) for tag, t, c, r in row] for row in parser.rows if row and all(x[0] == "th" for x in row)]
    body = [[t for _, t, _, _ in row] for row in parser.rows if row and not all(x[0] == "th" for x in row)]
    names = _paths(_expand(head))
    if len(head) == 1:
        names = [t for t, c, _ in head[0] for _ in range(c)]
    return unique_names(names), body


_MULTI = re.compile(r"\\multi(column|row)\{(\d+)\}\{[^}]*\}\{(.*)\}$")
_UNTEX = {v: k for k, v in _LATEX_SPECIAL.items() if k != "\n"}


def _untex(text: str) -> str:
    for escaped, ch in sorted(_UNTEX.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(escaped, ch)
    return text


def _latex_cell(text: str) -> tuple[str, int, int]:
    colspan = rowspan = 1
    text = text.strip()
    while (m := _MULTI.match(text)) is not None:
        if m.group(1) == "column":
            colspan = int(m.group(2))
        else:
            rowspan = int(m.group(2))
        text = m.group(3)
    return _untex(text), colspan, rowspan


def _split_latex_row(line: str) -> list[str]:
    line = line.rstrip()
    if line.endswith(r"\\"):
        line = line[:-2]
    return re.split(r"(?<!\\)&", line)


def _parse_latex(text: str) -> tuple[list[str], list[list[str]]]:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith(("\\begin", "\\end"))]
    rules = [i for i, ln in enumerate(lines) if ln.strip() == r"\hline"]
    header_lines = lines[rules[0] + 1:rules[1]]
    body_lines = lines[rules[1] + 1:rules[2]]
    header: list[list[tuple[str, int, int]]] = []
    covered: dict[int, int] = {}
    for ln in header_lines:
        row, j = [], 0
        for raw in _split_latex_row(ln):
            text, colspan, rowspan = _latex_cell(raw)
            if covered.get(j, 0) > 0:  # the empty cell under a \multirow
                covered[j] -= 1
                j += 1
                continue
            row.append((text, colspan, rowspan))
            for k in range(j, j + colspan):
                covered[k] = rowspan - 1
            j += colspan
        header.append(row)
    names = unique_names(_paths(_expand(header)))
    return names, [[_untex(c.strip()) for c in _split_latex_row(ln)] for ln in body_lines]


PARSERS = {"html": _parse_html, "csv": _parse_csv, "json": _parse_json, "markdown": _parse_markdown,
           "indexed_row_major": _parse_indexed, "dataframe": _parse_dataframe, "latex": _parse_latex}

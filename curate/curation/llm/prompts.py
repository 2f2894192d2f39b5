"""Tables inside prompts: a pipe table of the first rows, saying how many rows were left out.

(The release's eight serializations live in `exports/`; generators, which may not import it,
write their prompts with this.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from curate.curation.body import cell_text
from curate.curation.column_key import entries, key_text

if TYPE_CHECKING:  # pragma: no cover
    from curate.curation.table import Table


def table_for_prompt(table: "Table | None", max_rows: int = 30, max_chars: int = 8000) -> str:
    """At most `max_rows` rows and about `max_chars` characters: a prompt must fit the context. Under
    the rows, the table's column key (`curation.column_key`): what its documented headers stand for."""
    if table is None:
        return "(table not available)"
    lines = [" | ".join(table.columns)]
    size = len(lines[0])
    for row in table.body.slice(0, max_rows).to_pylist():
        line = " | ".join(cell_text(v) for v in row.values())
        if size + len(line) > max_chars:
            break
        lines.append(line)
        size += len(line) + 1
    shown = len(lines) - 1
    if table.n_rows > shown:
        lines.append(f"... ({table.n_rows - shown} more rows)")
    title = f"{table.caption or table.name}\n" if (table.caption or table.name) else ""
    return title + "\n".join(lines) + key_text(entries(table.semantics, table.columns))

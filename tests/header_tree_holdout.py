"""Hand-drawn header trees of held-back RealHiTBench sheets, and the check of a parse against them.

`tests/data/header_trees_held_back.json` holds, for 12 sheets of the half no rule was tuned on
(benchmarks/hierarchical_holdout.py), the header tree a person draws from the cells. `check`
compares the reader's first table of a sheet with it and lists every difference; the test module
and the benchmark both use it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

TREES = Path(__file__).parent / "data" / "header_trees_held_back.json"


def drawn() -> dict[str, dict]:
    return json.loads(TREES.read_text())["sheets"]


def norm(text: str) -> str:
    """Letters and digits only: the check is about structure, not about spaces or wrapped words."""
    return re.sub(r"[^0-9a-z]", "", str(text).lower())


def _path(parts) -> str:
    return " / ".join(norm(p) for p in parts)


def row_labels(table) -> list[tuple[str, ...]]:
    """Each body row's full path: the row nodes over it, then its own stub label when the
    nodes do not end with it."""
    from curate.curation.body import cell_text
    from curate.curation.header_tree import row_paths

    paths = row_paths(table.header, table.body.num_rows)
    out = []
    for i, path in enumerate(paths):
        cells = [cell_text(v) for v in table.body.slice(i, 1).to_pylist()[0].values() if v is not None]
        labels = [p for p in path if norm(p)]
        stub = next((c for c in cells if norm(c)), "")
        if stub and (not labels or norm(labels[-1]) not in {norm(c) for c in cells}):
            labels.append(stub)
        out.append(tuple(labels))
    return out


def check(path: Path, tree: dict) -> list[str]:
    """The differences between the reader's first table of the sheet and the drawn tree."""
    from curate.curation.sources.readers.xlsx import read

    skipped: list[dict] = []
    table = next(iter(read(str(path), skipped)), None)
    if table is None:
        return ["no table read"]
    errors = []
    names = [_path(n.split(" / ")) for n in table.body.column_names]
    if "columns" in tree:
        want = [_path(c.split(" / ")) for c in tree["columns"]]
        got = names[-len(want):]
        wrong = [f"{w!r} read as {g!r}" for w, g in zip(want, got) if w != g]
        if len(names) < len(want) or wrong:
            errors.append(f"columns: {len(wrong) or len(want)} of {len(want)} differ ({'; '.join(wrong[:2])})")
    missing = [c for c in tree.get("column_contains", []) if _path(c.split(" / ")) not in names]
    if missing:
        errors.append(f"columns missing: {missing[:3]}")
    rows = [" / ".join(norm(p) for p in r) for r in row_labels(table)]
    want_rows = [_path(r) for r in tree.get("rows", [])]
    at = 0
    for w, raw in zip(want_rows, tree.get("rows", [])):
        found = next((i for i in range(at, len(rows)) if rows[i] == w), None)
        if found is None:
            close = [r for r in rows if r.endswith(norm(raw[-1]))][:1]
            errors.append(f"row {' / '.join(raw)!r} not found (read as {close[0] if close else 'nothing'!r})")
        else:
            at = found + 1
    for key, index in (("first_row", 0), ("last_row", -1)):
        if key in tree:
            got = rows[index] if rows else "no body rows"
            if got != _path(tree[key]):
                errors.append(f"{key} is {got!r}, not {' / '.join(tree[key])!r}")
    for label in tree.get("not_rows", []):
        if any(r.split(" / ")[-1] == norm(label) for r in rows):
            errors.append(f"{label!r} read as a body row")
    if "caption" in tree and norm(table.caption) != norm(tree["caption"]):
        errors.append(f"caption is {table.caption[:50]!r}")
    return errors


def check_all(folder: Path) -> list[dict]:
    out = []
    for sheet, tree in drawn().items():
        errors = check(Path(folder) / f"{sheet}.xlsx", tree)
        out.append({"sheet": sheet, "right": not errors, "errors": errors})
    return out

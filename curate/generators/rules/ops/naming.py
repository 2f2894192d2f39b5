"""Questions about a table's own metadata, asked of a derived copy: which real header a masked
column had (`column_naming`), and the title of a table shown without it (`title_naming`)."""

from __future__ import annotations

import json

from curate.curation.sources.grid import column_letter
from curate.curation.table import flat_header
from curate.generators.rules.engine import Context
from curate.generators.rules.ops import op
from curate.generators.rules.profile import TableProfile

MAX_NAMING_COLUMNS = 15


@op("column_naming", params=())
def op_column_naming(ctx: Context) -> None:
    """Which of a few real headers a masked column had. The choices differ in kind (text, a
    flag, a count, a measure), so the values decide, and each is shown with its label."""
    p = ctx.profile
    t = p.table
    asked = [c for c in p.usable if c != p.key]
    ctx.considered(len(asked))
    if len(t.columns) < 3 or t.is_hierarchical or len(t.columns) > MAX_NAMING_COLUMNS:
        return ctx.reject("too_few_too_many_or_nested_columns", len(asked))
    letters = [column_letter(i) for i in range(len(t.columns))]
    masked_names = [f"Column {x}" for x in letters]
    masked = None
    for idx in ctx.pick(list(range(len(asked)))):
        column = asked[idx]
        kind = _kind(p, column)
        others = [c for c in p.usable if c != column and _kind(p, c) != kind]
        if len(others) < 2:
            ctx.reject("no_distinguishable_choices")
            continue
        distractors = [others[i] for i in ctx.rng.permutation(len(others))[:3]]
        choices = [column, *distractors]
        choices = [choices[i] for i in ctx.rng.permutation(len(choices))]
        if masked is None:
            masked = ctx.derive(t.replace(name=t.name + " (headers hidden)",
                                             body=t.body.rename_columns(masked_names),
                                             header=flat_header(masked_names), caption=""))
        i = t.columns.index(column)
        program = ("metadata", json.dumps({"table": t.id, "field": "columns", "index": i}))
        shown = "; ".join(f"{c} ({p.info[c].label})" if c in p.info and p.info[c].label else c for c in choices)
        ctx.emit({"masked": masked_names[i], "all_masked": ", ".join(masked_names), "choices": shown}, column,
                 program=program, table_ids=(masked.id,))


def _kind(p: TableProfile, column: str) -> str:
    """What a reader can tell from a column's values alone: text, a flag, whole numbers, decimals."""
    role = p.role.get(column, "")
    if role in ("name", "category", "text"):
        return "text:" + role
    if role == "flag":
        return "flag"
    return "int" if p.frame[column].dtype.kind == "i" else "float" if p.frame[column].dtype.kind == "f" else role


@op("title_naming", params=())
def op_title_naming(ctx: Context) -> None:
    t = ctx.profile.table
    ctx.considered(1)
    if not t.caption.strip():
        return ctx.reject("no_caption")
    untitled = ctx.derive(t.replace(name="untitled table", caption=""))
    program = ("metadata", json.dumps({"table": t.id, "field": "caption"}))
    ctx.emit({}, t.caption, program=program, table_ids=(untitled.id,))

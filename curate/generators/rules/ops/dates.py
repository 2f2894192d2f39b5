"""Date columns (`date`): the row with the earliest or latest date, or the count of rows in a range."""

from __future__ import annotations

from curate.generators.rules.engine import Context, value_type
from curate.generators.rules.ops import op


@op("date", params=("question",))
def op_date(ctx: Context) -> None:
    """Date columns: the row with the earliest/latest date (ties rejected), or a count of the rows
    in a date range. ISO text orders like the dates it names."""
    p = ctx.profile
    kind = ctx.template.params.get("question", "extreme")
    cands: list[tuple] = []
    for column in p.dates:
        values = [v for v in (p.cell(r, column) for r in range(p.n_rows))]
        present = [(v, r) for r, v in enumerate(values) if v is not None]
        ctx.considered(1)
        if len(present) < 3:
            ctx.reject("too_few_rows")
            continue
        ordered = sorted(present)
        if kind == "extreme":
            if not p.key:
                ctx.reject("no_key_column")
                continue
            for direction, (first, second) in (("min", ordered[:2]), ("max", ordered[-1:-3:-1])):
                if first[0] == second[0]:
                    ctx.reject("tie")
                else:
                    cands.append((column, direction, first[1]))
        else:
            lo, hi = ordered[len(ordered) // 4][0], ordered[(3 * len(ordered)) // 4][0]
            if lo == hi:
                ctx.reject("empty_range")
                continue
            count = sum(1 for v, _ in present if lo <= v <= hi)
            cands.append((column, lo, hi, count))
    for idx in ctx.pick(list(range(len(cands)))):
        if kind == "extreme":
            column, direction, row = cands[idx]
            spec = {"kind": "argext", "key": p.key, "column": column, "direction": direction, "where": []}
            ctx.emit({"key_column": p.key, "column": column, "extreme": "earliest" if direction == "min" else "latest"},
                     p.keys[row], spec=spec, answer_type=value_type(p, p.key))
        else:
            column, lo, hi, count = cands[idx]
            where = [[column, ">=", lo], [column, "<=", hi]]
            spec = {"kind": "aggregate", "agg": "count", "column": None, "where": where}
            ctx.emit({"column": column, "start": lo, "end": hi}, count, spec=spec, answer_type="number")

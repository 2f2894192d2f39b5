"""Rows ranked by a measure: the row with the highest or lowest value (`argext`), a row's rank
(`rank`), and the top k rows (`topk`); ties are rejected."""

from __future__ import annotations

import numpy as np

from curate.generators.rules.engine import Context, table_masks, value_type
from curate.generators.rules.ops import op


@op("argext", params=("conditions", "direction"))
def op_argext(ctx: Context) -> None:
    """Which row has the highest/lowest value (optionally among filtered rows); ties rejected."""
    p = ctx.profile
    t = ctx.template
    if not p.key or not p.numeric:
        return ctx.reject("no_key_or_numeric_column")
    direction = t.params["direction"]
    ms = table_masks(p, ctx.seed, int(t.params.get("conditions", 0)))
    ext = ms.values("max" if direction == "max" else "min")
    X = p.matrix
    ties = np.einsum("gr,grc->gc", ms.masks.astype(np.int64),
                     (X[None, :, :] == ext[:, None, :]).astype(np.int64))
    own = ms.own
    ctx.considered(ext.size)
    ctx.reject("condition_on_same_column", int(own.sum()))
    ctx.reject("empty_filter", int((np.isnan(ext) & ~own).sum()))
    ctx.reject("tie", int(((ties > 1) & ~own).sum()))
    valid = ~own & ~np.isnan(ext) & (ties == 1)
    for idx in ctx.pick(np.flatnonzero(valid.ravel())):
        g, j = divmod(idx, len(p.numeric))
        column = p.numeric[j]
        row = int(np.flatnonzero(ms.masks[g] & (X[:, j] == ext[g, j]))[0])
        spec = {"kind": "argext", "key": p.key, "column": column, "direction": direction, "where": ms.triples[g]}
        ctx.emit({"key_column": p.key, "column": column, **ms.slots[g]}, p.keys[row], spec=spec,
                 answer_type=value_type(p, p.key))


@op("rank", params=("direction",))
def op_rank(ctx: Context) -> None:
    p = ctx.profile
    if not p.key or not p.numeric:
        return ctx.reject("no_key_or_numeric_column")
    direction = ctx.template.params.get("direction", "max")
    cands = []
    for j, column in enumerate(p.numeric):
        if p.numbers_places(column):  # a team's rank by its position: the position again, or its mirror
            ctx.reject("ranks_a_place")
            continue
        x = p.matrix[:, j]
        present = ~np.isnan(x)
        values, counts = np.unique(x[present], return_counts=True)
        tied = np.isin(x, values[counts > 1])
        ctx.considered(len(x))
        ctx.reject("missing_value", int((~present).sum()))
        ctx.reject("tie", int((present & tied).sum()))
        cands += [(int(r), j) for r in np.flatnonzero(present & ~tied)]
    for idx in ctx.pick(list(range(len(cands)))):
        r, j = cands[idx]
        x = p.matrix[:, j]
        v = x[r]
        rank = int(np.sum(x > v) + 1) if direction == "max" else int(np.sum(x < v) + 1)
        spec = {"kind": "rank", "key": p.key, "key_value": p.keys[r], "column": p.numeric[j], "direction": direction}
        ctx.emit({"key_column": p.key, "row": p.row_name(p.keys[r]), "column": p.numeric[j]}, rank, spec=spec)


@op("topk", params=("direction", "k"))
def op_topk(ctx: Context) -> None:
    p = ctx.profile
    t = ctx.template
    if not p.key or not p.numeric:
        return ctx.reject("no_key_or_numeric_column")
    direction = t.params.get("direction", "max")
    cands = []
    for k in t.params.get("k", [3, 5]):
        for j in range(len(p.numeric)):
            ctx.considered(1)
            x = p.matrix[:, j]
            rows = np.flatnonzero(~np.isnan(x))
            if len(rows) <= k:
                ctx.reject("too_few_rows")
                continue
            order = rows[np.argsort(-x[rows] if direction == "max" else x[rows], kind="stable")]
            top = x[order[:k + 1]]
            if len(np.unique(top)) < k + 1:
                ctx.reject("tie")
                continue
            cands.append((k, j, order[:k]))
    for idx in ctx.pick(list(range(len(cands)))):
        k, j, rows = cands[idx]
        spec = {"kind": "topk", "key": p.key, "column": p.numeric[j], "direction": direction, "k": k}
        ctx.emit({"key_column": p.key, "column": p.numeric[j], "k": k}, [p.keys[r] for r in rows], spec=spec)

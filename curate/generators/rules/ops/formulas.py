"""Values computed from a few cells by a formula the question states: the difference or ratio of two
rows (`compare_rows`), a row's share of a column's total (`share`), growth between two years
(`growth`: percent change or compound annual growth), and a per-unit ratio of two measures in one
row (`row_ratio`)."""

from __future__ import annotations

import re

import numpy as np

from curate.generators.rules.engine import Context
from curate.generators.rules.ops import op
from curate.generators.rules.profile import show


@op("compare_rows", params=("func",))
def op_compare_rows(ctx: Context) -> None:
    p = ctx.profile
    func = ctx.template.params.get("func", "difference")
    if not p.key or not p.numeric or p.n_rows < 2:
        return ctx.reject("no_key_or_numeric_column")
    X = p.matrix
    tries = min(3 * ctx.cap, p.n_rows * (p.n_rows - 1) * len(p.numeric))
    a = ctx.rng.integers(p.n_rows, size=tries)  # pairs of distinct rows, drawn together
    b = ctx.rng.integers(p.n_rows - 1, size=tries)
    b = b + (b >= a)
    j = ctx.rng.integers(len(p.numeric), size=tries)
    _, first = np.unique(np.stack([a, b, j]), axis=1, return_index=True)
    draws = np.sort(first)  # each distinct (a, b, column) once, in draw order
    a, b, j = a[draws], b[draws], j[draws]
    missing = np.isnan(X[a, j]) | np.isnan(X[b, j])
    zero = ~missing & (X[b, j] == 0) if func == "ratio" else np.zeros(len(a), dtype=bool)
    ctx.considered(len(a))
    ctx.reject("missing_value", int(missing.sum()))
    ctx.reject("division_by_zero", int(zero.sum()))
    keep = np.flatnonzero(~missing & ~zero)[:ctx.cap]
    for a, b, j in zip(a[keep].tolist(), b[keep].tolist(), j[keep].tolist()):
        column = p.numeric[j]
        va, vb = p.cell(a, column), p.cell(b, column)
        value = va - vb if func == "difference" else va / vb
        spec = {"kind": "compare_rows", "key": p.key, "a": p.keys[a], "b": p.keys[b], "column": column, "func": func}
        ctx.emit({"key_column": p.key, "a": p.row_name(p.keys[a]), "b": p.row_name(p.keys[b]), "column": column},
                 value, spec=spec)


@op("share", params=())
def op_share(ctx: Context) -> None:
    p = ctx.profile
    if not p.key:
        return ctx.reject("no_key_column")
    if p.holds_years(p.key) or p.key == p.time:
        return ctx.reject("series_over_time")  # 1797's population as a share of 229 years' sum means nothing
    if not p.parts_of_a_whole:
        return ctx.reject("rows_are_no_parts_of_a_whole")  # one house's share of all the sample's bathrooms
    X = p.matrix
    additive = p.additive_numeric
    ok = ~np.isnan(X).any(axis=0) & ~(X < 0).any(axis=0) & (np.nansum(X, axis=0) > 0)
    ctx.considered(X.size)
    ctx.reject("not_a_positive_complete_column", int((~ok).sum()) * p.n_rows)
    ctx.reject("parts_do_not_add_up", int((ok & ~additive).sum()) * p.n_rows)  # a share of a total of rates
    ok &= additive
    cells = np.broadcast_to(ok, X.shape) & (X != 0)  # a share of nothing is 0% whatever the total
    ctx.reject("nothing_to_share_out", int((np.broadcast_to(ok, X.shape) & (X == 0)).sum()))
    n = len(p.numeric)
    for idx in ctx.pick(np.flatnonzero(cells.ravel())):
        r, j = divmod(idx, n)
        x = X[:, j]
        spec = {"kind": "share", "key": p.key, "key_value": p.keys[r], "column": p.numeric[j]}
        label = p.label(p.numeric[j])
        total = f"the {label}" if label.casefold().startswith("total") else f"the total {label}"
        ctx.emit({"key_column": p.key, "row": p.row_name(p.keys[r]), "column": p.numeric[j], "total": total},
                 100.0 * x[r] / x.sum(), spec=spec)


@op("growth", params=("formula",))
def op_growth(ctx: Context) -> None:
    """Percent change or compound annual growth between two years (the formula is in the question)."""
    p = ctx.profile
    kind = ctx.template.params.get("formula", "growth")
    if not p.time or not p.numeric:
        return ctx.reject("no_time_axis")
    times = p.frame[p.time].astype(np.float64)
    cands = []
    n = p.n_rows
    for _ in range(3 * ctx.cap):
        a, b = sorted(int(x) for x in ctx.rng.choice(n, size=2, replace=False))
        if times[a] > times[b]:
            a, b = b, a
        j = int(ctx.rng.integers(len(p.numeric)))
        ctx.considered(1)
        va, vb = p.matrix[a, j], p.matrix[b, j]
        if np.isnan(va) or np.isnan(vb) or va == 0 or (kind == "cagr" and (va <= 0 or vb <= 0)):
            ctx.reject("undefined")
            continue
        if not p.positive(p.numeric[j]) or p.relative(p.numeric[j]):
            ctx.reject("not_a_level")  # the growth of a signed index, or the compound growth of a rate
            continue
        if (a, b, j) not in {(c[0], c[1], c[2]) for c in cands}:
            cands.append((a, b, j))
        if len(cands) == ctx.cap:
            break
    for a, b, j in cands:
        t1, t2 = p.cell(a, p.time), p.cell(b, p.time)
        if isinstance(t1, float):
            t1, t2 = int(t1), int(t2)
        va, vb = p.matrix[a, j], p.matrix[b, j]
        value = 100.0 * (vb - va) / va if kind == "growth" else 100.0 * ((vb / va) ** (1.0 / (t2 - t1)) - 1)
        spec = {"kind": kind, "time": p.time, "t1": t1, "t2": t2, "column": p.numeric[j]}
        ctx.emit({"time": p.time, "t1": t1, "t2": t2, "column": p.numeric[j], "years": t2 - t1}, value, spec=spec)


@op("row_ratio", params=())
def op_row_ratio(ctx: Context) -> None:
    """A per-unit ratio of two measures in one row ("hp per wt")."""
    p = ctx.profile
    if not p.key or len(p.numeric) < 2:
        return ctx.reject("needs_key_and_two_measures")
    X = p.matrix
    n = len(p.numeric)
    ok = ~np.isnan(X)[:, :, None] & ~np.isnan(X)[:, None, :] & (X[:, None, :] != 0) & ~np.eye(n, dtype=bool)[None]
    ctx.considered(p.n_rows * n * (n - 1))
    ctx.reject("undefined", int(p.n_rows * n * (n - 1) - ok.sum()))
    additive = p.additive_numeric
    units = np.array([p.counts_units(c) for c in p.numeric], dtype=bool)
    # "income per person": an amount over a count of the things it is shared by, not population per birth
    years = np.array([p.holds_years(c) or bool(re.search(r"(yr|year)s?$", c, re.I)) for c in p.numeric], dtype=bool)
    amounts = additive[:, None] & (additive & units & ~years)[None, :] & ~units[:, None]
    ctx.reject("not_a_per_unit_ratio", int((ok & ~amounts[None]).sum()))
    ok &= amounts[None]
    zero = ok & (X[:, :, None] == 0)  # none of it to share: 0 assassinations per head is 0 whatever the heads
    ctx.reject("nothing_to_share_out", int(zero.sum()))
    ok &= ~zero
    flat = np.flatnonzero(ok.ravel())
    cands = [(int(i // (n * n)), int(i // n % n), int(i % n)) for i in ctx.pick(flat)]
    for r, a, b in cands:
        num, den = p.numeric[a], p.numeric[b]
        spec = {"kind": "row_ratio", "key": p.key, "key_value": p.keys[r], "num": num, "den": den}
        ctx.emit({"key_column": p.key, "key": show(p.keys[r]), "row": p.row_name(p.keys[r]), "num": num, "den": den,
                  "num_header": num, "den_header": den},
                 X[r, a] / X[r, b], spec=spec)

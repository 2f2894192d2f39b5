"""Aggregates over the rows a condition picks out: one aggregate of a measure (`aggregate`), a count
of rows (`count`), and the category with the highest or lowest aggregate (`group_extreme`). Each
asks of a `MaskSet`, which computes the aggregate for every condition and measure at once."""

from __future__ import annotations

import numpy as np

from curate.curation.answers import plain
from curate.generators.rules.engine import AGG_LABEL, Context, MaskSet, is_integral_answer, table_masks, value_type
from curate.generators.rules.ops import op
from curate.generators.rules.profile import ORDER_STATISTICS, TableProfile, show


@op("aggregate", params=("agg", "conditions", "min_rows", "p"))
def op_aggregate(ctx: Context) -> None:
    p = ctx.profile
    t = ctx.template
    agg = t.params["agg"]
    if not p.numeric:
        return ctx.reject("no_numeric_column")
    which = int(t.params.get("conditions", 0))
    ms = table_masks(p, ctx.seed, which)
    q = t.params.get("p")
    values, valid = _aggregate_candidates(ctx, ms, agg, int(t.params.get("min_rows", 2)), q)
    n_cols = len(p.numeric)
    for idx in ctx.pick(valid):
        g, j = divmod(idx, n_cols)
        column = p.numeric[j]
        v = values[g, j]
        answer = int(round(v)) if is_integral_answer(p, column, agg) else float(v)
        spec = {"kind": "aggregate", "agg": agg, "column": column, "where": ms.triples[g]}
        if q is not None:
            spec["p"] = q
        ctx.emit({"column": column, **ms.slots[g], "agg": AGG_LABEL[agg],
                  "pct": show(int(q * 100)) if q is not None else ""}, answer, spec=spec)


def _aggregate_candidates(ctx: Context, ms: MaskSet, agg: str, min_rows: int, q: float | None = None):
    values = ms.values(agg, q)
    counts = ms.counts
    own = ms.own
    ctx.considered(values.size)
    ctx.reject("condition_on_same_column", int(own.sum()))
    ctx.reject("empty_filter", int(((counts == 0) & ~own).sum()))
    ctx.reject("too_few_rows", int(((counts > 0) & (counts < min_rows) & ~own).sum()))
    bad = np.isnan(values) & (counts >= min_rows) & ~own
    ctx.reject("undefined", int(bad.sum()))
    valid = ~own & (counts >= min_rows) & ~np.isnan(values)
    p = ctx.profile
    if agg == "sum":  # a total of rates, prices or scores is no quantity
        additive = p.additive_numeric[None, :]
        ctx.reject("parts_do_not_add_up", int((valid & ~additive).sum()))
        valid &= additive
    if agg == "cv":  # the spread of temperatures or logs relative to their mean depends on where zero is
        ratio = np.array([p.ratio_scale(c) for c in p.numeric], dtype=bool)[None, :]
        ctx.reject("no_true_zero", int((valid & ~ratio).sum()))
        valid &= ratio
    if agg not in ("sum", "count"):  # a frequency table's counts only add up
        ctx.reject("statistic_of_cell_counts", int((valid & p.cell_counts[None, :]).sum()))
        valid &= ~p.cell_counts[None, :]
    if agg not in ORDER_STATISTICS:  # a patient's frailty once per row of that patient
        subject = np.array([c in p.subject_level for c in p.numeric], dtype=bool)[None, :]
        ctx.reject("one_value_per_subject", int((valid & subject).sum()))
        valid &= ~subject
    if agg in ("skewness", "kurtosis"):  # the shape of a distribution, not of a series' climb through time
        trending = np.array([p.trending(c) for c in p.numeric], dtype=bool)[None, :]
        ctx.reject("trending_series", int((valid & trending).sum()))
        valid &= ~trending
        for j, column in enumerate(p.numeric):  # ranks, six conditions, rows that are measures: no sample
            reason = p.not_a_sample(column)
            if reason:
                ctx.reject(reason, int(valid[:, j].sum()))
                valid[:, j] = False
    constant = valid & (ms.values("min") == ms.values("max"))  # one value under the filter: nothing to compute
    ctx.reject("constant_under_the_filter", int(constant.sum()))
    valid &= ~constant
    if ms.groups != [[]]:  # a filter that leaves the answer as it was over all rows says nothing
        unfiltered = table_masks(ctx.profile, ctx.seed, 0).values(agg, q)
        same = valid & np.isclose(values, unfiltered, rtol=1e-12, atol=0.0)
        ctx.reject("filter_does_not_change_the_answer", int(same.sum()))
        valid &= ~same
    return values, np.flatnonzero(valid.ravel())


@op("count", params=("conditions",))
def op_count(ctx: Context) -> None:
    p = ctx.profile
    ms = table_masks(p, ctx.seed, int(ctx.template.params.get("conditions", 1)))
    counts = ms.row_counts
    ctx.considered(len(counts))
    ctx.reject("counts_the_design", int(ms.counts_the_design.sum()))
    for g in ctx.pick(np.flatnonzero((counts >= 0) & ~ms.counts_the_design)):
        spec = {"kind": "aggregate", "agg": "count", "column": None, "where": ms.triples[g]}
        ctx.emit(ms.slots[g], int(counts[g]), spec=spec)


@op("group_extreme", params=("agg", "direction"))
def op_group_extreme(ctx: Context) -> None:
    """Which category has the highest/lowest aggregate of a measure; ties rejected."""
    p = ctx.profile
    t = ctx.template
    agg, direction = t.params.get("agg", "mean"), t.params.get("direction", "max")
    cands = []
    for by in p.categorical:
        ms = category_masks(p, by)
        values = ms.values(agg)  # (groups x measures)
        for j, column in enumerate(p.numeric):
            if column == by:
                continue
            ctx.considered(1)
            if agg == "sum" and not p.additive_numeric[j]:
                ctx.reject("not_an_amount")  # the total of residuals or rates adds nothing up
                continue
            v = values[:, j]
            defined = np.flatnonzero(~np.isnan(v))
            if len(defined) < 2:
                ctx.reject("too_few_groups")
                continue
            ranked = defined[np.argsort(-v[defined] if direction == "max" else v[defined], kind="stable")]
            best, second = v[ranked[0]], v[ranked[1]]
            scale = float(np.nanmax(np.abs(p.matrix[:, j]))) * max(1, p.n_rows)
            if abs(best - second) <= 1e-9 * max(1.0, abs(best), scale):  # computed totals: ties up to rounding
                ctx.reject("tie")
                continue
            cands.append((by, column, ms.groups[ranked[0]][0].value))
    for idx in ctx.pick(list(range(len(cands)))):
        by, column, winner = cands[idx]
        spec = {"kind": "group_extreme", "by": by, "column": column, "agg": agg, "direction": direction}
        ctx.emit({"by": by, "column": column, "agg": AGG_LABEL[agg]}, plain(winner), spec=spec,
                 answer_type=value_type(p, by))


def category_masks(profile: TableProfile, by: str) -> MaskSet:
    """One group per value of a categorical column, so group aggregates come from one MaskSet."""
    cache = profile.__dict__.setdefault("_category_masks", {})
    if by not in cache:
        cache[by] = MaskSet(profile, [[profile.condition(by, "==", v)]
                                      for v, _ in profile.categories(by)])
    return cache[by]

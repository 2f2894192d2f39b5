"""Data analysis: outliers planted in a copy of a measure (`outliers`), a correlation of two measures
(`correlation`), and hypothesis and distribution tests run by their chain program (`test`)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from curate.generators.rules.engine import Context
from curate.generators.rules.ops import op
from curate.generators.rules.profile import TableProfile, show


@op("outliers", params=("fence",))
def op_outliers(ctx: Context) -> None:
    """Inject 1-3 outliers into a copy of a measure; gold: the rows beyond the stated IQR fence."""
    import pyarrow as pa

    p = ctx.profile
    t = p.table
    fence = float(ctx.template.params.get("fence", 3.0))
    if not p.key or t.summary_rows:
        return ctx.reject("no_key_column")
    cands = []
    for j, column in enumerate(p.numeric):
        x = p.matrix[:, j]
        ctx.considered(1)
        present = x[~np.isnan(x)]
        if len(present) < 8:
            ctx.reject("too_few_rows")
            continue
        q1, q3 = np.quantile(present, [0.25, 0.75])
        if q3 - q1 <= 0:
            ctx.reject("no_spread")
            continue
        if p.trending(column):
            ctx.reject("trending_series")  # a fence cuts off the real end of a rising series, not only planted values
            continue
        beyond = (present < q1 - fence * (q3 - q1)) | (present > q3 + fence * (q3 - q1))
        if beyond.sum() > 2:  # zero-inflated or heavy-tailed: the answer would list the column's own tail
            ctx.reject("many_values_beyond_the_fence")
            continue
        cands.append(j)
    for j in ctx.pick(cands):
        column = p.numeric[j]
        x = p.matrix[:, j].copy()
        q1, q3 = np.quantile(x[~np.isnan(x)], [0.25, 0.75])
        iqr = q3 - q1
        rows = ctx.rng.choice(np.flatnonzero(~np.isnan(x)), size=int(ctx.rng.integers(1, 4)), replace=False)
        floor, ceiling, decimals = _bounds(p, column, x)
        for r in rows:
            jump = (fence + 3 + 5 * ctx.rng.random()) * iqr
            high, low = q3 + jump, q1 - jump
            up = ctx.rng.random() < 0.5
            if (up and high > ceiling) or (not up and low < floor):
                up = not up  # past a bound the column cannot cross (a negative count, 126%)
            x[r] = round(high if up else low, decimals)
        if np.nanmax(x) > ceiling or np.nanmin(x) < floor:
            ctx.reject("no_room_for_an_anomaly")
            continue
        integral = p.is_int(column)
        if integral:
            x = np.round(x)
        i = t.columns.index(column)
        original = t.body.column(i)
        new = pa.array(x.astype(np.int64) if integral and not np.isnan(x).any() else x,
                       type=original.type if integral and not np.isnan(x).any() else pa.float64(),
                       mask=np.isnan(x))
        note = f"{t.caption} (some values of {column} altered for this question)".lstrip()
        changed = ctx.derive(t.replace(name=t.name, caption=note, body=t.body.set_column(i, column, new)))
        q1n, q3n = np.quantile(x[~np.isnan(x)], [0.25, 0.75])
        low, high = q1n - fence * (q3n - q1n), q3n + fence * (q3n - q1n)
        outside = (x < low) | (x > high)
        margin = np.nanmin(np.minimum(np.abs(x - low), np.abs(x - high)))
        if not outside.any() or margin <= 1e-9 * max(1.0, float(np.nanmax(np.abs(x)))):
            ctx.derived.pop()  # no anomaly left, or a value on the fence that rounding could move
            ctx.reject("no_anomaly" if not outside.any() else "value_on_the_fence")
            continue
        spec = {"kind": "outliers", "key": p.key, "column": column, "fence": fence}
        ctx.emit({"key_column": p.key, "column": column, "fence": show(fence)},
                 [p.keys[r] for r in np.flatnonzero(outside)], spec=spec, table_ids=(changed.id,))


def _bounds(p: TableProfile, column: str, x: np.ndarray) -> tuple[float, float, int]:
    """What an injected value must respect to pass for a value of its column: no sign change
    where every value is non-negative, at most 100 for a percentage, the column's decimals."""
    present = x[~np.isnan(x)]
    floor = 0.0 if present.min() >= 0 else -np.inf
    info = p.info.get(column)
    words = f"{column} {info.label if info else ''} {info.unit if info else ''}".lower()
    ceiling = 100.0 if present.max() <= 100 and ("percent" in words or "pct" in words or "%" in words) else np.inf
    decimals = max((len(repr(float(v)).split(".")[1]) if not float(v).is_integer() else 0) for v in present[:200])
    return floor, ceiling, min(decimals, 6)


@op("correlation", params=("method",))
def op_correlation(ctx: Context) -> None:
    from curate.curation.programs.chain import correlate

    p = ctx.profile
    method = ctx.template.params.get("method", "pearson")
    pairs = [(a, b) for a in range(len(p.numeric)) for b in range(a + 1, len(p.numeric))]
    ctx.considered(len(pairs))
    cands = []
    for a, b in pairs:
        x, y = p.matrix[:, a], p.matrix[:, b]
        both = ~np.isnan(x) & ~np.isnan(y)
        if both.sum() < 5:
            ctx.reject("too_few_rows")
            continue
        if np.array_equal(x[both], y[both]) or p.related[a, b]:
            ctx.reject("same_variable")  # or one is a function of the other: r = -1 by definition
            continue
        if p.cell_counts[a] or p.cell_counts[b]:
            ctx.reject("correlation_of_cell_counts")  # survivors and passengers per cell: both follow the layout
            continue
        cands.append((a, b))
    for idx in ctx.pick(list(range(len(cands)))):
        a, b = cands[idx]
        value = correlate(p.matrix[:, a], p.matrix[:, b], method)
        if value is None:
            ctx.reject("undefined")
            continue
        spec = {"kind": "corr", "x": p.numeric[a], "y": p.numeric[b], "method": method}
        ctx.emit({"x": p.numeric[a], "y": p.numeric[b]}, value, spec=spec)


@op("test", params=("test", "alpha"))
def op_test(ctx: Context) -> None:
    """A hypothesis or distribution test, run by its chain program: [statistic, p-value, decision]."""
    from curate.curation.programs.chain import execute_chain

    p = ctx.profile
    t = ctx.template
    test = t.params["test"]
    alpha = float(t.params.get("alpha", 0.05))
    if p.counts_cells:
        return ctx.reject("frequency_table")  # each row stands for many cases: row-level tests miscount them
    steps_list = []
    if test in ("ttest", "mannwhitney", "ks"):
        if p.rows_are_measures:
            return ctx.reject("rows_are_measures")  # two groups of unlike figures: no populations to compare
        for by in p.categorical:
            groups = _two_groups(p, by)
            for column in p.numeric:
                ctx.considered(1)
                if groups is None or column == by:
                    ctx.reject("too_few_groups")
                    continue
                if test == "ks" and p.numbers_places(column):
                    ctx.reject("places_are_no_sample")  # the distribution of ranks 1, 2, 7, 7 is their ties
                    continue
                steps_list.append(({"column": column, "by": by, "a": p.shown(by, groups[0]), "b": p.shown(by, groups[1])},
                                   {"op": "test", "test": test, "column": column, "by": by, "groups": groups,
                                    **({"method": "asymptotic"} if test == "mannwhitney" else {})}))
    elif test == "chi2":
        for i, x in enumerate(p.categorical):
            for y in p.categorical[i + 1:]:
                ctx.considered(1)
                if p.crossed_by_design(x, y):
                    ctx.reject("independent_by_design")  # every combination equally often: chi2 = 0 by construction
                    continue
                if p.nested(x, y) or p.nested(y, x):
                    ctx.reject("nested_groupings")  # each site lies in one region: dependence by construction
                    continue
                if p.exclusive_flags(x, y):
                    ctx.reject("flags_of_one_partition")  # west and south: never both, by construction
                    continue
                steps_list.append(({"x": x, "y": y}, {"op": "test", "test": "chi2", "x": x, "y": y}))
    elif test == "shapiro":
        for column in p.numeric:
            ctx.considered(1)
            values = p.matrix[:, p.numeric.index(column)]
            if (~np.isnan(values)).sum() < 8:
                ctx.reject("too_few_rows")
                continue
            why = p.not_a_sample(column)
            if why:
                ctx.reject(why)  # ranks, a handful of values, rows that are measures
                continue
            if p.trending(column):
                ctx.reject("trending_series")  # a price index rising from 1960 to 1995 is no sample
                continue
            if column in p.subject_level:
                ctx.reject("one_value_per_subject")  # each patient's frailty once per row of that patient
                continue
            steps_list.append(({"column": column}, {"op": "test", "test": "shapiro", "column": column}))
    for idx in ctx.pick(list(range(len(steps_list)))):
        slots, step = steps_list[idx]
        problem = p.group_problem(step["column"], step["by"], step["groups"]) if "groups" in step else None
        if problem:
            ctx.reject(problem)
            continue
        steps = [step, {"op": "decide", "alpha": alpha}]
        value = execute_chain(steps, p.frame)
        if value is None:
            ctx.reject("undefined")
            continue
        if test == "chi2" and value[0] == 0:
            ctx.reject("independent_by_design")  # each subject saw every tint in the same proportions
            continue
        ctx.emit({**slots, "alpha": show(alpha)}, value, program=("chain", json.dumps(steps, ensure_ascii=False)))


def _two_groups(p: TableProfile, by: str, min_size: int = 3) -> list[Any] | None:
    groups = [v for v, n in p.categories(by) if n >= min_size]
    return groups[:2] if len(groups) >= 2 else None

"""Reasoning chains for TReB's Advanced Data Analysis: atomic steps composed into programs.

`compose_chain(shape, profile, rng, masks)` draws a type-correct chain of 3 or more steps
(filter, sort, head, select, first, aggregate, compare, correlate, test, decide, combine) from
the table's seeded generator, runs it with `curate.curation.programs.chain`, and returns the steps,
the slots its question template needs, and the answer. A chain whose answer would be ambiguous
(a tie, an empty filter, an undefined statistic) comes back as the reason it was rejected.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from curate.curation.programs.chain import execute_chain
from curate.generators.rules.profile import Condition, TableProfile, rounded, show

AGGS = ("mean", "sum", "median", "max", "min")
AGG_WORDS = {"mean": "average", "sum": "total", "median": "median", "max": "maximum", "min": "minimum"}

Chain = tuple[list[dict[str, Any]], dict[str, Any], Any]


def _choice(rng: np.random.Generator, items: list[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


MIN_DISTINCT_TO_CORRELATE = 5  # values each variable takes on the rows a correlation reads


def _aggregate(profile: TableProfile, column: str, options: tuple[str, ...], rng: np.random.Generator) -> str | None:
    """One of the aggregates that mean something for the column (`TableProfile.aggregates`); None
    where none of `options` does."""
    allowed = profile.aggregates(column, options)
    if not allowed:
        return None
    return allowed[0] if len(allowed) == 1 else _choice(rng, allowed)


def _condition(profile: TableProfile, rng: np.random.Generator, masks: Callable, avoid: tuple[str, ...] = ()) -> Condition | None:
    singles = [g[0] for g in masks(1).groups if g[0].column not in avoid and g[0].mask.sum() >= 2]
    return _choice(rng, singles) if singles else None


def _filter(cond: Condition) -> dict[str, Any]:
    return {"op": "filter", "where": [cond.triple()]}


def _sorted_values(profile: TableProfile, rows: np.ndarray, column: str, descending: bool) -> np.ndarray:
    x = profile.frame[column].astype(np.float64)[rows]
    x = x[~np.isnan(x)]
    return np.sort(x)[::-1] if descending else np.sort(x)


def _top_rows_complete(profile: TableProfile, rows: np.ndarray, column: str, descending: bool, k: int,
                       needed: list[str]) -> bool:
    """Whether the k rows a chain keeps all hold the columns it then reads: with a gap, "the 25
    with the lowest X" could mean 25 rows, or 25 rows with values."""
    kept = np.flatnonzero(rows & profile.present(column))
    values = profile.frame[column][kept].astype(np.float64)
    chosen = kept[np.argsort(-values if descending else values, kind="stable")[:k]]
    return all(profile.present(c)[chosen].all() for c in needed)


# the other side of a split is its exact complement: "more than 8" against "8 or less", so a row
# equal to 8 falls in one group, never in neither
OPPOSITE = {">": "<=", "<": ">=", ">=": "<", "<=": ">"}


def _counterpart(profile: TableProfile, cond: Condition, rng: np.random.Generator) -> Condition | None:
    """The group a comparison sets against `cond`'s: another value of the same code or category
    (Variety P against Variety Q), or the other side of the same threshold. Two unrelated,
    overlapping filters compared with each other mean nothing."""
    if cond.op == "==":
        others = [v for v, n in profile.categories(cond.column) if v != cond.value and n >= 2]
        if not others:
            return None
        return profile.condition(cond.column, "==", others[int(rng.integers(len(others)))])
    op = OPPOSITE.get(cond.op)
    if op is None:
        return None
    other = profile.condition(cond.column, op, cond.value)
    return other if other.mask.sum() >= 2 else None


def compose_chain(shape: str, profile: TableProfile, rng: np.random.Generator, masks: Callable) -> Chain | str:
    p = profile
    if not p.numeric:
        return "no_numeric_column"
    column = _choice(rng, p.numeric)
    j = p.numeric.index(column)
    related = tuple(c for i, c in enumerate(p.numeric) if p.related[j, i])  # the column, or a function of it
    related += tuple(c for c in p.categorical if p.bins(c, column))  # or the column in bands
    cond = _condition(p, rng, masks, avoid=related)
    if cond is None:
        return "no_condition"
    descending = bool(rng.random() < 0.5)
    extreme = "highest" if descending else "lowest"
    slots: dict[str, Any] = {"cond": cond.phrase(), "cond_have": cond.phrase(have=True), "column": column, "extreme": extreme,
                             "key_column": p.key or ""}

    if shape == "retrieval":
        if not p.key:
            return "no_key_column"
        values = _sorted_values(p, cond.mask, column, descending)
        if len(values) == 0:
            return "empty_filter"
        if len(values) > 1 and values[0] == values[1]:
            return "tie"
        steps = [_filter(cond), {"op": "sort", "by": column, "descending": descending},
                 {"op": "select", "column": p.key}, {"op": "first"}]
        answer = execute_chain(steps, p.frame)
        if answer == execute_chain(steps[1:], p.frame):
            return "filter_does_not_change_the_answer"
        return steps, slots, answer

    if shape == "fact_checking":
        agg = _aggregate(p, column, AGGS, rng)
        probe = [_filter(cond), {"op": "aggregate", "func": agg, "column": column}]
        value = execute_chain(probe, p.frame)
        if value is None:
            return "empty_filter"
        truth = bool(rng.random() < 0.5)
        above = bool(rng.random() < 0.5)  # is the claim "greater than" or "less than"
        kept = p.frame[column].astype(np.float64)[cond.mask]
        kept = kept[~np.isnan(kept)]
        spread = float(np.std(kept)) if len(kept) > 1 and np.std(kept) > 0 else abs(value) * 0.1 or 1.0
        delta = spread * rng.uniform(0.1, 0.6)
        # "value > claim" is true when the claim lies below the value
        claim = value - delta if above == truth else value + delta
        claim = rounded(float(claim), 2)  # a claim as a person makes it: "above 75", not "above 74.57"
        if p.is_int(column) and agg in ("sum", "max", "min"):
            claim = float(round(claim)) if claim != round(claim) else claim
        low, high = float(np.nanmin(p.frame[column].astype(np.float64))), float(np.nanmax(p.frame[column].astype(np.float64)))
        if agg != "sum" and not low <= claim <= high:
            return "claim_outside_the_column"  # trivially true or false
        if (value > claim) != (above == truth) and value != claim:
            return "claim_rounded_across_the_value"
        steps = probe + [{"op": "compare", "cmp": ">" if above else "<", "value": claim}]
        slots.update(agg=AGG_WORDS[agg], relation="greater than" if above else "less than", claim=show(claim))
        return steps, slots, execute_chain(steps, p.frame)

    if shape == "operations":
        # "the average price of the 5 cars with the highest horsepower": sort, keep the top k, aggregate
        others = [c for c in p.numeric if c not in related]
        if not others:
            return "target_is_the_sort_column"
        target = _choice(rng, others)
        every = np.ones(p.n_rows, dtype=bool)
        values = _sorted_values(p, every, column, descending)
        k = _choice(rng, [3, 5, 10])
        if len(values) <= 2 * k:
            return "too_few_rows"
        if values[k - 1] == values[k]:
            return "tie"
        if not _top_rows_complete(p, every, column, descending, k, [target]):
            return "missing_values_in_the_kept_rows"
        # the average or total of the top k ("the average price of the 5 fastest cars"); their median or maximum
        # of another column ("the maximum ratio of the 3 observations with the most deaths") is nobody's question
        agg = _aggregate(p, target, ("mean", "sum"), rng)
        if agg is None:
            return "no_average_or_total"
        steps = [{"op": "sort", "by": column, "descending": descending}, {"op": "head", "n": k},
                 {"op": "aggregate", "func": agg, "column": target}]
        answer = execute_chain(steps, p.frame)
        if answer is None:
            return "undefined"
        slots.update(k=k, target=target, agg=AGG_WORDS[agg])
        return steps, slots, answer

    if shape == "correlation":
        # "among the cars with 4 cylinders and a manual gearbox, how do horsepower and mileage correlate?"
        second = _condition(p, rng, masks, avoid=(cond.column,))
        if second is None or p.same_variable(second.column, cond.column):
            return "no_second_condition"
        kept = cond.mask & second.mask
        if np.array_equal(kept, cond.mask) or np.array_equal(kept, second.mask):
            return "second_condition_narrows_nothing"
        # neither measure restates a condition, and a frequency table's counts are no variable
        pairs = [(a, b) for a in range(len(p.numeric)) for b in range(a + 1, len(p.numeric))
                 if not p.related[a, b] and p.numeric[a] not in p.counts_cells and p.numeric[b] not in p.counts_cells
                 and not any(p.same_variable(c.column, p.numeric[i]) for c in (cond, second) for i in (a, b))]
        if not pairs:
            return "needs_two_unrelated_measures"
        a, b = pairs[int(rng.integers(len(pairs)))]
        first, other = p.numeric[a], p.numeric[b]
        both = kept & p.present(first) & p.present(other)
        if both.sum() < 8:
            return "too_few_rows"
        # a column that takes four values on the rows kept (0.3 to 0.6 billion, as the sheet rounds them)
        # correlates its rounding, not the amount
        if min(len(np.unique(p.frame[c][both])) for c in (first, other)) < MIN_DISTINCT_TO_CORRELATE:
            return "too_few_distinct_values"
        method = _choice(rng, ["pearson", "spearman"])
        steps = [_filter(cond), _filter(second), {"op": "correlate", "x": first, "y": other, "method": method}]
        answer = execute_chain(steps, p.frame)
        if answer is None:
            return "undefined"
        slots.update(second=second.phrase(), first=first, other=other,
                     method="Pearson" if method == "pearson" else "Spearman")
        return steps, slots, answer

    if shape == "hypothesis":
        cats = [c for c in p.categorical if c not in (cond.column, column)]
        if not cats:
            return "no_grouping_column"
        by = _choice(rng, cats)
        keys = p.frame[by][cond.mask]
        counts: dict[Any, int] = {}
        for v in keys.tolist():
            if v is not None:
                counts[v] = counts.get(v, 0) + 1
        groups = [v for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))) if n >= 3][:2]
        if len(groups) < 2:
            return "too_few_groups"
        if p.counts_cells:
            return "frequency_table"
        problem = p.group_problem(column, by, groups, cond.mask)
        if problem:
            return problem
        test = _choice(rng, ["ttest", "mannwhitney"])
        method = {"method": "asymptotic"} if test == "mannwhitney" else {}
        steps = [_filter(cond), {"op": "test", "test": test, "column": column, "by": by, "groups": groups, **method},
                 {"op": "decide", "alpha": 0.05}]
        answer = execute_chain(steps, p.frame)
        if answer is None:
            return "undefined"
        slots.update(by=by, a=p.shown(by, groups[0]), b=p.shown(by, groups[1]), statistic="t" if test == "ttest" else "U",
                     test="Welch's t-test" if test == "ttest" else
                     "the Mann-Whitney U test (the p-value from the normal approximation with tie and continuity "
                     "corrections)", alpha="0.05")
        return steps, slots, answer

    if shape == "conditional":
        second = _counterpart(p, cond, rng)
        if second is None or second.triple() == cond.triple():
            return "no_second_condition"
        if np.array_equal(second.mask, cond.mask):
            return "conditions_select_the_same_rows"
        places = p.numbers_places(column)  # a rank: a ratio of average ranks (20.75 / 49.2) means nothing
        agg = _aggregate(p, column, ("mean", "sum", "median", "max"), rng)
        # a ratio or a percentage change of a signed quantity (an index averaging 0.025) means nothing, nor
        # one of two extremes ("the oldest man's age over the oldest woman's"): groups compare by their
        # averages and totals; their maxima and medians by how far apart they are
        func = _choice(rng, ["difference", "ratio", "percent_change"] if p.positive(column) and not places
                       and agg in ("mean", "sum") else ["difference"])
        steps = [_filter(cond), {"op": "aggregate", "func": agg, "column": column, "name": "a"},
                 {"op": "filter", "input": "t", "where": [second.triple()]},
                 {"op": "aggregate", "func": agg, "column": column, "name": "b"},
                 {"op": "combine", "func": func, "left": "a", "right": "b"}]
        answer = execute_chain(steps, p.frame)
        if answer is None:
            return "undefined"
        if execute_chain(steps[:2], p.frame) == execute_chain(steps[2:4], p.frame):
            return "filters_do_not_change_the_answer"
        of = f"the {AGG_WORDS[agg]} {p.label(column)}"
        # "... of the counties where rent is more than 230 than of those where it is at most 230"
        first_group, second_group = f"the {p.entities} where {cond.phrase()}", f"those where {second.phrase(it=True)}"
        ask = {"difference": f"How much higher is {of} of {first_group} than of {second_group}? "
                             "(Give a negative number if it is lower.)",
               "ratio": f"What is the ratio of {of} of {first_group} to that of {second_group}? "
                        "(the first divided by the second)",
               "percent_change": f"By what percentage does {of} of {first_group} differ from that of {second_group}? "
                                 "((first - second) / second x 100)"}[func]
        slots.update(agg=AGG_WORDS[agg], second=second.phrase(), ask=ask)
        return steps, slots, answer

    raise ValueError(f"unknown chain shape {shape!r}")

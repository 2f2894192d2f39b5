"""True/false statements (`fact`): an aggregate, a cell or a count, stated truly or with a clearly
different value, half of each."""

from __future__ import annotations

from typing import Any

import numpy as np

from curate.curation import semantics as sem
from curate.curation.answers import format_answer
from curate.generators.rules.engine import AGG_LABEL, Context, is_integral_answer, table_masks
from curate.generators.rules.ops import op
from curate.generators.rules.profile import show


@op("fact", params=("statement", "aggs", "number_format"))
def op_fact(ctx: Context) -> None:
    """True/false statements, half of each; false ones perturb the value or swap the condition.

    Candidates are index tuples until picked: only the statements emitted are ever phrased.
    """
    p = ctx.profile
    t = ctx.template
    kind = t.params.get("statement", "aggregate")
    rule = t.params.get("number_format", "round:2")
    cands: list[tuple] = []
    if kind == "aggregate":
        aggs = t.params.get("aggs", ["mean", "sum", "median", "min", "max"])
        for which in (0, 1):
            ms = table_masks(p, ctx.seed, which)
            ok = (ms.values("count") >= 2) & ~ms.own
            ctx.reject("condition_on_same_column", int(ms.own.sum()) * len(aggs))
            for a, agg in enumerate(aggs):
                # a total only of amounts; of a frequency table's counts only the total; of a value
                # repeated on each of a subject's rows only its extremes
                meant = np.array([agg in p.aggregates(c, [agg]) for c in p.numeric], dtype=bool)
                valid = ok & ~np.isnan(ms.values(agg)) & meant[None, :]
                ctx.reject("empty_or_undefined", int((~valid & ~ms.own).sum()))
                cands += [(which, a, int(g), int(j)) for g, j in zip(*np.nonzero(valid))]
    elif kind == "cell":
        if not p.key:
            return ctx.reject("no_key_column")
        cols = [c for c in p.usable if c != p.key]
        present = np.column_stack([p.present(c) for c in cols]) if cols else np.zeros((p.n_rows, 0), bool)
        ctx.reject("missing_value", int((~present).sum()))
        cands = np.flatnonzero(present.ravel())  # row * len(cols) + column, split once picked
    elif kind == "count":
        for which in (1, 2):
            ms = table_masks(p, ctx.seed, which)
            ctx.reject("counts_the_design", int(ms.counts_the_design.sum()))
            cands += [(which, g) for g in np.flatnonzero(~ms.counts_the_design).tolist()]
    ctx.considered(len(cands))
    told = {True: 0, False: 0}
    for idx in ctx.pick(list(range(len(cands)))):
        truth = told[True] <= told[False]  # half true: a false claim that cannot be made is made next time
        alternatives: list[float] = []
        if kind == "aggregate":
            which, a, g, j = cands[idx]
            ms = table_masks(p, ctx.seed, which)
            agg, column, group = aggs[a], p.numeric[j], ms.groups[g]
            values = ms.values(agg)
            integral = is_integral_answer(p, column, agg)
            value: Any = int(round(values[g, j])) if integral else float(values[g, j])
            spec = {"kind": "aggregate", "agg": agg, "column": column, "where": ms.triples[g]}
            phrase = f"the {AGG_LABEL[agg]} {p.label(column)}" + (
                f" among the {p.entities} where {ms.slots[g]['cond']}" if group else "")
            if group and not truth:  # the same statement under another value of the condition's column
                counts = ms.values("count")
                alternatives = [float(values[h, j]) for h, other in enumerate(ms.groups)
                                if h != g and other[0].column == group[0].column and counts[h, j] >= 2
                                and not np.isnan(values[h, j])]
        elif kind == "cell":
            r, j = divmod(int(cands[idx]), len(cols))
            column = cols[j]
            value = p.cell(r, column)
            integral = isinstance(value, int)
            spec = {"kind": "cell", "key": p.key, "key_value": p.keys[r], "column": column}
            phrase = f"{p.the(column)} for {p.row_name(p.keys[r])}"
        else:
            which, g = cands[idx]
            ms = table_masks(p, ctx.seed, which)
            group = ms.groups[g]
            value, integral = int(ms.row_counts[g]), True
            spec = {"kind": "aggregate", "agg": "count", "column": None, "where": ms.triples[g]}
            phrase = f"the number of {p.entities}" + (f" with {ms.slots[g]['cond_have']}" if group else "")
        claim = _claim(ctx, kind, spec, value, integral, truth, alternatives, rule)
        if claim is None:
            ctx.reject("no_false_variant")
            continue
        if kind == "aggregate" and not truth and spec["agg"] in ("mean", "median", "min", "max"):
            low, high = np.nanmin(p.matrix[:, j]), np.nanmax(p.matrix[:, j])
            if not low <= float(claim) <= high:
                ctx.reject("claim_outside_the_column")  # an average longitude of 176 where all lie in 146-153
                continue
        exact = integral or isinstance(claim, str) or kind == "cell"
        fact = {"kind": "fact", "inner": spec, "claim": claim,
                "tolerance": None if exact else rounding_tolerance(rule, float(claim))}
        rounding = "" if exact else f", rounded to {rule[6:]} decimals" if rule.startswith("round:") else ""
        statement = f"{phrase} is {show(claim)}{rounding}"
        ctx.emit({"statement": statement, "Statement": statement[0].upper() + statement[1:]}, truth, spec=fact)
        told[truth] += 1


def _claim(ctx: Context, kind: str, spec: dict[str, Any], value: Any, integral: bool, truth: bool,
           alternatives: list[float], rule: str) -> Any:
    """The value a statement claims: the true one (rounded), or a clearly different one."""
    if truth:
        return value if (integral or kind == "cell") else format_answer(value, rule)
    column = spec.get("column")
    if isinstance(value, str) or ctx.profile.role.get(column) in sem.GROUPINGS:  # a flag is 0 or 1, never 2
        others = [v for v, _ in ctx.profile.categories(column) if v != value] if column in ctx.profile.categorical else []
        return others[int(ctx.rng.integers(len(others)))] if others else None
    inner_rule = "exact" if kind == "cell" else rule
    if alternatives and ctx.rng.random() < 0.5:
        w = alternatives[int(ctx.rng.integers(len(alternatives)))]
        claim = int(round(w)) if integral else format_answer(w, rule)
    else:
        claim = _perturb_number(ctx.rng, value, integral or isinstance(value, int), rule)
    if claim == value or abs(float(claim) - float(value)) <= 2 * rounding_tolerance(inner_rule, float(value)):
        return None
    return claim


def _perturb_number(rng: np.random.Generator, value: float, integral: bool, rule: str) -> float:
    step = rng.uniform(0.1, 0.5) * (1 if rng.random() < 0.5 else -1)
    if integral and 1000 <= value <= 2200:  # a year stays a year a reader could believe: 1974 -> 1966, not 1074
        return int(value + (1 if step > 0 else -1) * int(rng.integers(3, 16)))
    if integral:
        return int(value + (1 if step > 0 else -1) * max(1, round(abs(value * step))))
    claim = value * (1 + step) if value != 0 else step * 10
    return format_answer(float(claim), rule)


def rounding_tolerance(rule: str, claim: float) -> float:
    decimals = int(rule[6:]) if rule.startswith("round:") else 9
    return 0.5 * 10.0 ** -decimals * (1 + 1e-6) + 1e-9 * max(1.0, abs(claim))

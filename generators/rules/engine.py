"""Rule-based generation for one table: every template's candidates, answered in bulk.

A template (one TOML entry) names an *op* below and its parameters. The op enumerates the
candidate questions the table allows, computes their answers together (one numpy pass over a
matrix of conditions x columns, not one query per question), rejects the ambiguous ones with a
counted reason, and emits up to `cap` of the rest, chosen by the table's seeded generator.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable

import numpy as np

from curation import semantics as sem
from curation.answers import format_answer, plain, round_number
from curation.pipeline.rng import record_rng
from curation.sources.grid import column_letter
from curation.table import Table, flat_header
from curation.taxonomy import task as taxonomy_task
from generators.rules.emit import SampleColumns
from generators.rules.profile import ORDER_STATISTICS, Condition, TableProfile, show
from generators.rules.specs import spec_sql
from generators.rules.ops.tree import TREE_OP_PARAMS, TREE_OPS

AGG_LABEL = {"count": "number of values", "sum": "total", "mean": "average", "median": "median",
             "min": "minimum", "max": "maximum", "std": "standard deviation", "var": "variance",
             "range": "range", "percentile": "percentile", "cv": "coefficient of variation", "skewness": "skewness", "kurtosis": "kurtosis"}
COLUMN_SLOTS = frozenset({"column", "x", "y", "by", "num", "den", "other", "target", "first"})  # named by label and header
MAX_CONDITIONS = 24
# "the minimum minimum passenger capacity": an aggregate said again by a label that starts with it
AGG_SYNONYM = {"minimum": "lowest", "maximum": "highest", "average": "mean", "mean": "average", "total": "combined"}
NUMBERISH = re.compile(r"[\d\s,.;:/+-]+")
MAX_NAMING_COLUMNS = 15
MAX_PAIRS = 16


@dataclass
class Template:
    id: str
    task: str
    op: str
    phrasings: list[str]
    short: list[str]
    cap: int
    answer: str  # the normalisation rule
    params: dict[str, Any]
    family: str

    @classmethod
    def from_entry(cls, entry: dict[str, Any], family: str) -> "Template":
        entry = dict(entry)
        known = {"id", "task", "op", "phrasings", "short", "cap", "answer"}
        task = taxonomy_task(entry["task"])  # unknown task: a clear error at load time
        allowed = OP_PARAMS.get(entry["op"], set()) | COMMON_PARAMS
        unknown = sorted(k for k in entry if k not in known and k not in allowed)
        if unknown:  # "fense = 2" would otherwise leave the fence at its default without a word
            raise KeyError(f"unknown setting {', '.join(map(repr, unknown))} for op {entry['op']!r}; "
                           f"it takes {', '.join(sorted(allowed | known - {'id', 'task', 'op'}))}")
        return cls(id=entry["id"], task=entry["task"], op=entry["op"], phrasings=list(entry["phrasings"]),
                   short=list(entry.get("short", [])), cap=int(entry.get("cap", 10)),
                   answer=entry.get("answer", task.format),
                   params={k: v for k, v in entry.items() if k not in known}, family=family)


@dataclass
class Stats:
    candidates: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, dict[str, int]] = field(default_factory=dict)
    emitted: dict[str, int] = field(default_factory=dict)


class Context:
    """What an op works with: the table's profile, its generator, the output and the counters."""

    def __init__(self, profile: TableProfile, template: Template, seed: int, out: SampleColumns,
                 derived: list[Table], stats: Stats, cap: int, specs: list | None) -> None:
        self.profile = profile
        self.template = template
        self._rng: np.random.Generator | None = None
        self.seed = seed
        self.out = out
        self.derived = derived
        self.stats = stats
        self.cap = cap
        self.specs = specs  # when a list, every emitted spec is appended (benchmark baseline)
        self.answer_type = taxonomy_task(template.task).answer_type
        self._choices: list[list[int]] | None = None
        self._n_emitted = 0
        self._provenance = {"table": profile.table.name, "seed": str(seed), "format": template.answer}
        self._table_ids = (profile.table.id,)
        self._decimals = int(template.answer[6:]) if template.answer.startswith("round:") else None

    @property
    def rng(self) -> np.random.Generator:
        """Created on first use: most templates reject most tables before drawing anything."""
        if self._rng is None:
            self._rng = record_rng(self.seed, self.profile.table.id, self.template.id)
        return self._rng

    # -- counting ---------------------------------------------------------------------------
    def considered(self, n: int) -> None:
        self.stats.candidates[self.template.task] = self.stats.candidates.get(self.template.task, 0) + int(n)

    def reject(self, reason: str, n: int = 1) -> None:
        if n:
            by = self.stats.rejected.setdefault(self.template.task, {})
            by[reason] = by.get(reason, 0) + int(n)

    def pick(self, valid: np.ndarray | list[int], cap: int | None = None) -> list[int]:
        """Up to `cap` of the valid candidates, in the seeded generator's order."""
        valid = np.asarray(valid)
        cap = self.cap if cap is None else cap
        if len(valid) <= cap:
            return self.rng.permutation(valid).tolist()
        return valid[self.rng.choice(len(valid), size=cap, replace=False)].tolist()

    # -- output -----------------------------------------------------------------------------
    def emit(self, slots: dict[str, Any], answer: Any, *, spec: dict[str, Any] | None = None,
             program: tuple[str, str] | None = None, answer_type: str | None = None,
             table_ids: tuple[str, ...] | None = None, provenance: dict[str, str] | None = None) -> None:
        """One sample. This runs a million times per corpus: it only formats and appends.
        `provenance` adds to the table's (a derived table's origin)."""
        t = self.template
        rounds = isinstance(answer, float) and self._decimals is not None
        if rounds and answer != 0 and round_number(float(answer), self._decimals) == 0:
            return self.reject("rounds_to_zero")  # 0.0 for a small ratio: a relative tolerance cannot score it
        if self._choices is None:  # one draw per table and template, not two per sample
            self._choices = self.rng.integers(0, 1 << 30, size=(self.cap * 3 + 8, 2)).tolist()
        a, b = self._choices[self._n_emitted % len(self._choices)]
        self._n_emitted += 1
        labels = self.profile.info
        if isinstance(slots.get("column"), str) and slots["column"] in self.profile.frame:
            slots = {**slots, "the_column": self.profile.the(slots["column"])}
        slots = {k: self.profile.label(v) if k in COLUMN_SLOTS and isinstance(v, str) and v in labels else v
                 for k, v in slots.items()}
        agg = slots.get("agg")
        if agg in AGG_SYNONYM and any(str(slots.get(k, "")).casefold().startswith(f"{agg} ")
                                      for k in ("column", "target")):
            slots["agg"] = AGG_SYNONYM[agg]
        slots.setdefault("entity", self.profile.entity)  # what one row is: "county", "year"
        slots.setdefault("entities", self.profile.entities)
        phrasing = t.phrasings[a % len(t.phrasings)]
        question = phrasing.format(**slots)
        short = t.short[b % len(t.short)].format(**slots) if t.short else ""
        if program is None:
            program = ("sql", spec_sql(spec))  # type: ignore[arg-type]
        if rounds:  # numpy's floats too
            gold: Any = round_number(float(answer), self._decimals)
            if "decimal" not in phrasing:  # the rounding is part of the question
                question += f" Round to {self._decimals} decimals."
        else:
            gold = format_answer(answer, t.answer)
        if isinstance(gold, list) and (answer_type or self.answer_type) not in ("list", "table"):
            answer_type = "list"
        self.out.add(t.task, t.id, question, gold, answer_type or self.answer_type,
                     table_ids or self._table_ids, program[0], program[1],
                     "duckdb" if program[0] == "sql" else "", short, "rule", "rule-based",
                     {**self._provenance, **provenance} if provenance else self._provenance)
        if self.specs is not None and spec is not None:
            self.specs.append((self.profile.table.id, spec, gold, t.answer))


# ------------------------------------------------------------------------------ helpers

def where_phrase(conds: Iterable[Condition], lead: str = " where ") -> str:
    conds = list(conds)
    return lead + " and ".join(c.phrase() for c in conds) if conds else ""


def cond_slots(group: list[Condition]) -> dict[str, str]:
    """{where}: " where a is 1 and b > 2" (or ""); {cond}: "a is 1 and b > 2"."""
    return {"where": where_phrase(group), "cond": where_phrase(group, ""),
            "cond_have": " and ".join(c.phrase(have=True) for c in group)}


def value_type(profile: TableProfile, column: str) -> str:
    values = profile.frame[column]
    if values.dtype.kind in "if":
        return "number"
    present = values[profile.present(column)]
    return "bool" if len(present) and all(isinstance(v, (bool, np.bool_)) for v in present.tolist()) else "text"


def is_integral_answer(profile: TableProfile, column: str | None, agg: str) -> bool:
    return agg == "count" or (column is not None and profile.is_int(column) and agg in ("sum", "min", "max", "range"))


class MaskSet:
    """Row masks for a set of condition lists ([] = all rows), with aggregates cached per function."""

    def __init__(self, profile: TableProfile, groups: list[list[Condition]]) -> None:
        self.profile = profile
        self.groups = groups
        n = profile.n_rows
        self.masks = np.array([np.logical_and.reduce([c.mask for c in g]) if g else np.ones(n, dtype=bool)
                               for g in groups], dtype=bool).reshape(len(groups), n)
        self._cache: dict[tuple, np.ndarray] = {}

    @cached_property
    def slots(self) -> list[dict[str, str]]:
        """{where}/{cond}/{among} of each group, phrased once."""
        return [cond_slots(g) for g in self.groups]

    @cached_property
    def triples(self) -> list[list[list[Any]]]:
        return [[c.triple() for c in g] for g in self.groups]

    @cached_property
    def own(self) -> np.ndarray:
        """(groups x numeric columns): True where a group's condition is on that very column, or on
        one it is a function of ("the lowest rd where lrd > 1.4" restates its condition)."""
        p = self.profile
        index = {c: j for j, c in enumerate(p.numeric)}
        rows = []
        for g in self.groups:
            row = np.zeros(len(p.numeric), dtype=bool)
            for c in g:
                if c.column in index:
                    row |= p.related[index[c.column]]
            rows.append(row)
        return np.array(rows, dtype=bool).reshape(len(self.groups), len(p.numeric))

    @cached_property
    def counts_the_design(self) -> np.ndarray:
        """Per group: every condition picks a level of a balanced grouping (Tree is 1, where each
        tree has 5 rows), so the count is the design's, known before any data was taken."""
        balanced = self.profile.balanced
        return np.array([bool(g) and all(c.op == "==" and c.column in balanced for c in g) for g in self.groups],
                        dtype=bool)

    @property
    def row_counts(self) -> np.ndarray:
        return self.masks.sum(axis=1)

    @cached_property
    def counts(self) -> np.ndarray:
        """(groups x numeric columns): how many values each aggregate sees."""
        return self.masks.astype(np.float64) @ (~np.isnan(self.profile.matrix)).astype(np.float64)

    @cached_property
    def block(self) -> np.ndarray:
        """(groups x rows x columns): the values each group keeps, NaN elsewhere."""
        return np.where(self.masks[:, :, None], self.profile.matrix[None, :, :], np.nan)

    @cached_property
    def ordered(self) -> np.ndarray:
        """`block` sorted along the rows (NaNs last): medians and percentiles read it."""
        return np.sort(self.block, axis=1)

    def values(self, agg: str, p: float | None = None) -> np.ndarray:
        """(groups x numeric columns) of one aggregate, NaN where undefined."""
        key = (agg, p)
        if key in self._cache:
            return self._cache[key]
        X = self.profile.matrix
        count = self.counts
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            if agg == "count":
                out = count
            elif agg in ("sum", "mean"):
                total = self.masks.astype(np.float64) @ np.nan_to_num(X)
                out = np.where(count > 0, total, np.nan) if agg == "sum" else total / count
            elif agg in ("median", "percentile"):
                out = sorted_quantile(self.ordered, count, 0.5 if agg == "median" else p)
            else:
                Y = self.block
                if agg == "min":
                    out = np.nanmin(Y, axis=1)
                elif agg == "max":
                    out = np.nanmax(Y, axis=1)
                elif agg == "range":
                    out = np.nanmax(Y, axis=1) - np.nanmin(Y, axis=1)
                elif agg in ("std", "var", "cv"):
                    var = np.nanvar(Y, axis=1, ddof=1)
                    var = np.where(count >= 2, var, np.nan)
                    out = var if agg == "var" else np.sqrt(var)
                    if agg == "cv":
                        mean = np.nanmean(Y, axis=1)
                        out = np.where(mean != 0, 100.0 * out / mean, np.nan)
                elif agg in ("skewness", "kurtosis"):
                    from curation.programs.chain import moments

                    G, R, N = Y.shape
                    out = moments(Y.transpose(0, 2, 1).reshape(G * N, R), agg).reshape(G, N)
                else:
                    raise ValueError(f"unknown aggregate {agg!r}")
        self._cache[key] = out
        return out


def sorted_quantile(ordered: np.ndarray, n: np.ndarray, q: float) -> np.ndarray:
    """np.nanquantile(Y, q, axis=1) (linear interpolation), given Y sorted along axis 1 (NaNs
    last) and the count of values n: one sort serves every median and percentile."""
    n = n.astype(np.int64)
    position = q * np.maximum(n - 1, 0)
    lo = np.floor(position).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
    low = np.take_along_axis(ordered, lo[:, None, :], axis=1)[:, 0, :]
    high = np.take_along_axis(ordered, hi[:, None, :], axis=1)[:, 0, :]
    out = low + (high - low) * (position - lo)
    return np.where(n > 0, np.where(position == lo, low, out), np.nan)


def table_masks(profile: TableProfile, seed: int, which: int) -> MaskSet:
    """0: all rows; 1: one condition each; 2: two conditions on different columns."""
    cache = profile.__dict__.setdefault("_mask_sets", {})
    if which in cache:
        return cache[which]
    if which == 0:
        cache[0] = MaskSet(profile, [[]])
        return cache[0]
    rng = record_rng(seed, profile.table.id, "conditions")
    singles = profile.conditions(rng, MAX_CONDITIONS)
    if which == 1:
        groups = [[c] for c in singles]
    else:
        pairs = [(a, b) for i, a in enumerate(singles) for b in singles[i + 1:]
                 if not profile.same_variable(a.column, b.column)]
        pairs = [p for p in pairs if (p[0].mask & p[1].mask).any()
                 and not np.array_equal(p[0].mask & p[1].mask, p[0].mask)
                 and not np.array_equal(p[0].mask & p[1].mask, p[1].mask)]  # each condition narrows the rows
        if len(pairs) > MAX_PAIRS:
            pairs = [pairs[i] for i in sorted(rng.choice(len(pairs), size=MAX_PAIRS, replace=False))]
        groups = [list(p) for p in pairs]
    cache[which] = MaskSet(profile, groups)
    return cache[which]


def rounding_tolerance(rule: str, claim: float) -> float:
    decimals = int(rule[6:]) if rule.startswith("round:") else 9
    return 0.5 * 10.0 ** -decimals * (1 + 1e-6) + 1e-9 * max(1.0, abs(claim))


# ------------------------------------------------------------------------------ TU

def op_lookup(ctx: Context) -> None:
    p = ctx.profile
    if not p.key:
        return ctx.reject("no_key_column")
    cols = [c for c in p.usable if c != p.key]
    restating = [c for c in cols if p.restates_key(c)]  # SeasonEnd of the season that starts in 1910
    ctx.reject("restates_the_key", len(restating) * p.n_rows)
    cols = [c for c in cols if c not in restating]
    if not cols:
        return ctx.reject("no_value_column")
    present = np.column_stack([p.present(c) for c in cols])
    ctx.considered(present.size)
    ctx.reject("missing_value", int((~present).sum()))
    for idx in ctx.pick(np.flatnonzero(present.ravel())):
        r, j = divmod(idx, len(cols))
        column, key = cols[j], p.keys[r]
        spec = {"kind": "cell", "key": p.key, "key_value": key, "column": column}
        ctx.emit({"key_column": p.key, "key": show(key), "row": p.row_name(key), "column": column},
                 p.cell(r, column), spec=spec,
                 answer_type=value_type(p, column))


def _derived(ctx: Context, table: Table) -> Table:
    ctx.derived.append(table)
    return table


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
            masked = _derived(ctx, t.replace(name=t.name + " (headers hidden)",
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


def op_title_naming(ctx: Context) -> None:
    t = ctx.profile.table
    ctx.considered(1)
    if not t.caption.strip():
        return ctx.reject("no_caption")
    untitled = _derived(ctx, t.replace(name="untitled table", caption=""))
    program = ("metadata", json.dumps({"table": t.id, "field": "caption"}))
    ctx.emit({}, t.caption, program=program, table_ids=(untitled.id,))


def _perturb_number(rng: np.random.Generator, value: float, integral: bool, rule: str) -> float:
    step = rng.uniform(0.1, 0.5) * (1 if rng.random() < 0.5 else -1)
    if integral and 1000 <= value <= 2200:  # a year stays a year a reader could believe: 1974 -> 1966, not 1074
        return int(value + (1 if step > 0 else -1) * int(rng.integers(3, 16)))
    if integral:
        return int(value + (1 if step > 0 else -1) * max(1, round(abs(value * step))))
    claim = value * (1 + step) if value != 0 else step * 10
    return format_answer(float(claim), rule)


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


# ------------------------------------------------------------------------------ TBO

def op_reverse_lookup(ctx: Context) -> None:
    """Exact query: the row whose column holds a value found in no other row."""
    p = ctx.profile
    if not p.key:
        return ctx.reject("no_key_column")
    cands: list[tuple[int, str]] = []
    for column in [c for c in p.usable if c != p.key]:
        if p.entity.casefold() in p.words(column).casefold():
            ctx.reject("names_the_row_again")  # "Which baker's baker is Julia?"
            continue
        if p.frame[column].dtype.kind in "if":
            ctx.reject("number_to_look_up")  # "Which state has a pop of 1872838?" is nobody's question
            continue
        if p.spells_key(column):
            ctx.reject("spells_the_key")  # "Which entry's district name is Westfield?" -> "WESTFIELD"
            continue
        present = p.present(column)
        values = p.frame[column]
        codes = np.unique(values[present].astype(str) if values.dtype == object else values[present],
                          return_inverse=True, return_counts=True)
        once = codes[2][codes[1]] == 1
        if values.dtype == object:  # "5, 10" or "978-0521711128": numbers written as text are no better
            once &= np.array([not NUMBERISH.fullmatch(str(v)) for v in values[present]], dtype=bool)
        rows = np.flatnonzero(present)
        ctx.considered(len(rows))
        ctx.reject("value_not_unique", int((~once).sum()))
        cands += [(int(r), column) for r in rows[once]]
    for idx in ctx.pick(list(range(len(cands)))):
        r, column = cands[idx]
        value = p.cell(r, column)
        spec = {"kind": "reverse", "key": p.key, "column": column, "value": value}
        ctx.emit({"key_column": p.key, "column": column, "value": show(value)}, p.keys[r], spec=spec,
                 answer_type=value_type(p, p.key))


def _normalise(text: str) -> str:
    """A name as a user types it: lower case, punctuation dropped, single spaces ("honda civic")."""
    kept = "".join(ch for ch in text if ch == " " or (ch.isascii() and ch.isalnum()))
    return " ".join(kept.split()).lower()


def op_fuzzy_lookup(ctx: Context) -> None:
    """Fuzzy query: the row key as a user types it, in lower case without punctuation."""
    p = ctx.profile
    if not p.key or p.key not in p.text_columns:
        return ctx.reject("no_text_key")
    norms = [_normalise(k) for k in p.keys]
    counts: dict[str, int] = {}
    for n in norms:
        counts[n] = counts.get(n, 0) + 1
    cols = [c for c in p.usable if c != p.key]
    cands = []
    for r, n in enumerate(norms):
        if not n or counts[n] > 1:
            ctx.reject("normalised_key_not_unique", len(cols))
            continue
        if n == p.keys[r]:
            ctx.reject("key_already_normalised", len(cols))
            continue
        for column in cols:
            if p.present(column)[r]:
                cands.append((r, column))
            else:
                ctx.reject("missing_value")
    ctx.considered(len(norms) * len(cols))
    for idx in ctx.pick(list(range(len(cands)))):
        r, column = cands[idx]
        spec = {"kind": "fuzzy", "key": p.key, "norm": norms[r], "column": column}
        ctx.emit({"key_column": p.key, "fuzzy": norms[r], "column": column}, p.cell(r, column), spec=spec,
                 answer_type=value_type(p, column))


def op_select(ctx: Context) -> None:
    p = ctx.profile
    if not p.key:
        return ctx.reject("no_key_column")
    ms = table_masks(p, ctx.seed, int(ctx.template.params.get("conditions", 1)))
    counts = ms.row_counts
    limit = int(ctx.template.params.get("max_rows", 10))
    ctx.considered(len(counts))
    ctx.reject("empty_filter", int((counts == 0).sum()))
    ctx.reject("too_many_rows", int((counts > limit).sum()))
    for g in ctx.pick(np.flatnonzero((counts > 0) & (counts <= limit))):
        rows = np.flatnonzero(ms.masks[g])
        spec = {"kind": "select", "key": p.key, "where": ms.triples[g]}
        ctx.emit({"key_column": p.key, **ms.slots[g]}, [p.keys[r] for r in rows], spec=spec)


# ------------------------------------------------------------------------------ TCO

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
    constant = valid & (ms.values("min") == ms.values("max"))  # one value under the filter: nothing to compute
    ctx.reject("constant_under_the_filter", int(constant.sum()))
    valid &= ~constant
    if ms.groups != [[]]:  # a filter that leaves the answer as it was over all rows says nothing
        unfiltered = table_masks(ctx.profile, ctx.seed, 0).values(agg, q)
        same = valid & np.isclose(values, unfiltered, rtol=1e-12, atol=0.0)
        ctx.reject("filter_does_not_change_the_answer", int(same.sum()))
        valid &= ~same
    return values, np.flatnonzero(valid.ravel())


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


def op_count(ctx: Context) -> None:
    p = ctx.profile
    ms = table_masks(p, ctx.seed, int(ctx.template.params.get("conditions", 1)))
    counts = ms.row_counts
    ctx.considered(len(counts))
    ctx.reject("counts_the_design", int(ms.counts_the_design.sum()))
    for g in ctx.pick(np.flatnonzero((counts >= 0) & ~ms.counts_the_design)):
        spec = {"kind": "aggregate", "agg": "count", "column": None, "where": ms.triples[g]}
        ctx.emit(ms.slots[g], int(counts[g]), spec=spec)


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


def op_rank(ctx: Context) -> None:
    p = ctx.profile
    if not p.key or not p.numeric:
        return ctx.reject("no_key_or_numeric_column")
    direction = ctx.template.params.get("direction", "max")
    cands = []
    for j, column in enumerate(p.numeric):
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


def category_masks(profile: TableProfile, by: str) -> MaskSet:
    """One group per value of a categorical column, so group aggregates come from one MaskSet."""
    cache = profile.__dict__.setdefault("_category_masks", {})
    if by not in cache:
        cache[by] = MaskSet(profile, [[profile.condition(by, "==", v)]
                                      for v, _ in profile.categories(by)])
    return cache[by]


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


# ------------------------------------------------------------------------------ TCO: domain formulas

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


# ------------------------------------------------------------------------------ DA

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
        changed = _derived(ctx, t.replace(name=t.name, caption=note, body=t.body.set_column(i, column, new)))
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


def op_correlation(ctx: Context) -> None:
    from curation.programs.chain import correlate

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


def _two_groups(p: TableProfile, by: str, min_size: int = 3) -> list[Any] | None:
    groups = [v for v, n in p.categories(by) if n >= min_size]
    return groups[:2] if len(groups) >= 2 else None


def op_test(ctx: Context) -> None:
    """A hypothesis or distribution test, run by its chain program: [statistic, p-value, decision]."""
    from curation.programs.chain import execute_chain

    p = ctx.profile
    t = ctx.template
    test = t.params["test"]
    alpha = float(t.params.get("alpha", 0.05))
    if p.counts_cells:
        return ctx.reject("frequency_table")  # each row stands for many cases: row-level tests miscount them
    steps_list = []
    if test in ("ttest", "mannwhitney", "ks"):
        for by in p.categorical:
            groups = _two_groups(p, by)
            for column in p.numeric:
                ctx.considered(1)
                if groups is None or column == by:
                    ctx.reject("too_few_groups")
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
            if len(np.unique(values[~np.isnan(values)])) < 8:
                ctx.reject("too_few_distinct_values")  # a handful of values is not a distribution to test
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


def op_chain(ctx: Context) -> None:
    from generators.chains import compose_chain

    p = ctx.profile
    shape = ctx.template.params["shape"]
    ctx.considered(ctx.cap)
    made = 0
    for attempt in range(8 * ctx.cap):  # most draws are rejected (ties, filters that change nothing)
        result = compose_chain(shape, p, ctx.rng, lambda which: table_masks(p, ctx.seed, which))
        if isinstance(result, str):
            ctx.reject(result)
            continue
        steps, slots, answer = result
        typed = value_type(p, p.key) if shape == "retrieval" and p.key else None  # a year is a number
        ctx.emit(slots, answer, program=("chain", json.dumps(steps, ensure_ascii=False)), answer_type=typed)
        made += 1
        if made == ctx.cap:
            break


OPS: dict[str, Callable[[Context], None]] = {
    "lookup": op_lookup, "column_naming": op_column_naming, "title_naming": op_title_naming, "fact": op_fact,
    "reverse_lookup": op_reverse_lookup, "fuzzy_lookup": op_fuzzy_lookup, "select": op_select,
    "aggregate": op_aggregate, "count": op_count, "argext": op_argext, "rank": op_rank, "topk": op_topk,
    "group_extreme": op_group_extreme, "compare_rows": op_compare_rows, "share": op_share,
    "growth": op_growth, "row_ratio": op_row_ratio, "outliers": op_outliers, "correlation": op_correlation,
    "test": op_test, "chain": op_chain, "date": op_date,
    **TREE_OPS,  # RealHiTBench's hierarchical track: questions that navigate the header tree
}
# the settings each op reads from its template entry: any other key is a load error, not a silent default
OP_PARAMS: dict[str, set[str]] = {
    "lookup": set(), "column_naming": set(), "title_naming": set(), "fact": {"statement", "aggs", "number_format"},
    "reverse_lookup": set(), "fuzzy_lookup": set(), "select": {"conditions", "max_rows"},
    "aggregate": {"agg", "conditions", "min_rows", "p"}, "count": {"conditions"}, "argext": {"conditions", "direction"},
    "rank": {"direction"}, "topk": {"direction", "k"}, "group_extreme": {"agg", "direction"},
    "compare_rows": {"func"}, "share": set(), "growth": {"formula"}, "row_ratio": set(), "outliers": {"fence"},
    "correlation": {"method"}, "test": {"test", "alpha"}, "chain": {"shape"}, "date": {"question"},
    **TREE_OP_PARAMS,
}
COMMON_PARAMS = {"opt_in"}  # a template left out of the default build unless named


def generate_for_table(table: Table, templates: list[Template], seed: int, out: SampleColumns,
                       derived: list[Table], stats: Stats, scale: float = 1.0,
                       specs: list | None = None, flat_scale: float = 1.0) -> None:
    """Every template over one table. Deterministic in (table, templates, seed): order never matters.
    `flat_scale` multiplies the caps of the flat (non-tree) templates on a hierarchical table."""
    profile = TableProfile(table)
    for template in templates:
        not_data = "matrix_not_data" if profile.is_matrix else "simulated_data" if profile.simulated else None
        if not_data and template.op not in TREE_OPS:  # a correlation matrix, or data its source calls fake
            stats.candidates[template.task] = stats.candidates.get(template.task, 0) + 1
            stats.rejected.setdefault(template.task, {}).setdefault(not_data, 0)
            stats.rejected[template.task][not_data] += 1
            continue
        flat = flat_scale if table.is_hierarchical and template.op not in TREE_OPS else 1.0
        cap = max(1, int(round(template.cap * scale * flat)))
        context = Context(profile, template, seed, out, derived, stats, cap, specs)
        OPS[template.op](context)
        if context._n_emitted:
            stats.emitted[template.task] = stats.emitted.get(template.task, 0) + context._n_emitted

"""Rule-based generation for one table: every template's candidates, answered in bulk.

A template (one TOML entry) names an *op* (`curate.generators.rules.ops`, one module per family) and its
parameters. The op enumerates the candidate questions the table allows, computes their answers
together (one numpy pass over a matrix of conditions x columns, not one query per question), rejects
the ambiguous ones with a counted reason, and emits up to `cap` of the rest, chosen by the table's
seeded generator. This module holds what every op shares: the template, the `Context` an op works
with (counting, picking, emitting), the condition masks and their aggregates (`MaskSet`,
`table_masks`), and `generate_for_table`, which runs each template's op.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable

import numpy as np

from curate.curation.answers import format_answer, round_number
from curate.curation.pipeline.rng import record_rng
from curate.curation.table import Table
from curate.curation.taxonomy import task as taxonomy_task
from curate.generators.rules.emit import SampleColumns
from curate.generators.rules.ops import OPS, op_params, reads_the_tree
from curate.generators.rules.profile import Condition, TableProfile, by_number
from curate.generators.rules.specs import spec_sql

AGG_LABEL = {"count": "number of values", "sum": "total", "mean": "average", "median": "median",
             "min": "minimum", "max": "maximum", "std": "standard deviation", "var": "variance",
             "range": "range", "percentile": "percentile", "cv": "coefficient of variation", "skewness": "skewness", "kurtosis": "kurtosis"}
COLUMN_SLOTS = frozenset({"column", "x", "y", "by", "num", "den", "other", "target", "first"})  # named by label and header
DIRECTED_SLOTS = ("column", "target", "other")  # the column a "highest" or "lowest" is said of
MAX_CONDITIONS = 24
# "the minimum minimum passenger capacity": an aggregate said again by a label that starts with it
AGG_SYNONYM = {"minimum": "lowest", "maximum": "highest", "average": "mean", "mean": "average", "total": "combined"}
MAX_PAIRS = 16


# tasks about the table's shape (its columns, which table it is), not its rows' values
STRUCTURE_TASKS = frozenset({"TU/column_naming", "TU/table_retrieval", "TBO/table_selection"})


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
    reads_the_tree: bool = False  # an op of the hierarchical track (generators.rules.ops)

    @classmethod
    def from_entry(cls, entry: dict[str, Any], family: str) -> "Template":
        entry = dict(entry)
        known = {"id", "task", "op", "phrasings", "short", "cap", "answer"}
        task = taxonomy_task(entry["task"])  # unknown task: a clear error at load time
        allowed = op_params(entry["op"]) | COMMON_PARAMS
        unknown = sorted(k for k in entry if k not in known and k not in allowed)
        if unknown:  # "fense = 2" would otherwise leave the fence at its default without a word
            raise KeyError(f"unknown setting {', '.join(map(repr, unknown))} for op {entry['op']!r}; "
                           f"it takes {', '.join(sorted(allowed | known - {'id', 'task', 'op'}))}")
        return cls(id=entry["id"], task=entry["task"], op=entry["op"], phrasings=list(entry["phrasings"]),
                   short=list(entry.get("short", [])), cap=int(entry.get("cap", 10)),
                   answer=entry.get("answer", task.format),
                   params={k: v for k, v in entry.items() if k not in known}, family=family,
                   reads_the_tree=reads_the_tree(entry["op"]))


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
    def derive(self, table: Table) -> Table:
        """A table made for a question (headers hidden, values altered), written beside the samples."""
        self.derived.append(table)
        return table

    def emit(self, slots: dict[str, Any], answer: Any, *, spec: dict[str, Any] | None = None,
             program: tuple[str, str] | None = None, answer_type: str | None = None,
             table_ids: tuple[str, ...] | None = None, provenance: dict[str, str] | None = None,
             decimals: int | None = None) -> None:
        """One sample. This runs a million times per corpus: it only formats and appends.
        `provenance` adds to the table's (a derived table's origin); `decimals` rounds this one answer
        (a computed cell shown rounded) where the template's answer is exact."""
        t = self.template
        if decimals is not None and self._decimals is None and isinstance(answer, float):
            self._decimals = decimals  # for this sample only (restored below)
            provenance = {**(provenance or {}), "format": f"round:{decimals}"}
            try:
                return self.emit(slots, answer, spec=spec, program=program, answer_type=answer_type,
                                 table_ids=table_ids, provenance=provenance)
            finally:
                self._decimals = None
        rounds = isinstance(answer, float) and self._decimals is not None
        if rounds and answer != 0 and round_number(float(answer), self._decimals) == 0:
            return self.reject("rounds_to_zero")  # 0.0 for a small ratio: a relative tolerance cannot score it
        if self._choices is None:  # one draw per table and template, not two per sample
            self._choices = self.rng.integers(0, 1 << 30, size=(self.cap * 3 + 8, 2)).tolist()
        a, b = self._choices[self._n_emitted % len(self._choices)]
        self._n_emitted += 1
        labels = self.profile.info
        places = any(isinstance(slots.get(k), str) and self.profile.numbers_places(slots[k]) for k in DIRECTED_SLOTS)
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
        short_form = t.short[b % len(t.short)] if t.short else ""
        if places:  # "the lowest rank" is rank 1 to a reader: "the smallest", said of the number (not in labels)
            phrasing, short_form = by_number(phrasing), by_number(short_form)
            slots.update({k: by_number(slots[k]) for k in ("extreme", "agg") if isinstance(slots.get(k), str)})
        question = phrasing.format(**slots)
        short = short_form.format(**slots)
        if program is None:
            program = ("sql", spec_sql(spec))  # type: ignore[arg-type]
        if not t.reads_the_tree and t.task not in STRUCTURE_TASKS:  # tree ops say what they leave out
            question += self.profile.rows_left_out
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
                    from curate.curation.programs.chain import moments

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


COMMON_PARAMS = {"opt_in"}  # a template left out of the default build unless named


def generate_for_table(table: Table, templates: list[Template], seed: int, out: SampleColumns,
                       derived: list[Table], stats: Stats, scale: float = 1.0,
                       specs: list | None = None, flat_scale: float = 1.0) -> None:
    """Every template over one table. Deterministic in (table, templates, seed): order never matters.
    `flat_scale` multiplies the caps of the flat (non-tree) templates on a hierarchical table."""
    profile = TableProfile(table)
    for template in templates:
        not_data = "matrix_not_data" if profile.is_matrix else "simulated_data" if profile.simulated else None
        if not_data and not template.reads_the_tree:  # a correlation matrix, or data its source calls fake
            stats.candidates[template.task] = stats.candidates.get(template.task, 0) + 1
            stats.rejected.setdefault(template.task, {}).setdefault(not_data, 0)
            stats.rejected[template.task][not_data] += 1
            continue
        flat = flat_scale if table.is_hierarchical and not template.reads_the_tree else 1.0
        cap = max(1, int(round(template.cap * scale * flat)))
        context = Context(profile, template, seed, out, derived, stats, cap, specs)
        OPS.get(template.op)(context)
        if context._n_emitted:
            stats.emitted[template.task] = stats.emitted.get(template.task, 0) + context._n_emitted

"""SQL templates as data: skeletons in `templates/*.toml`, parsed once by sqlglot and analysed.

A skeleton is ordinary SQL over the placeholder tables `A`, `B`, `C` (aliases `a`, `b`, `c`):

- `:ab`, `:bc` stand for the join conditions of the path's edges;
- `x.key_ab` is table x's column of edge ab (for IN / NOT IN subqueries);
- `x.num`, `x.cat`, `x.label`, `x.date` are column slots typed by role (`num2` is a second
  numeric slot of the same table, bound to a different column);
- any other `:name` is a value, drawn from the data of whatever it is compared with.

Loading also derives, once per template, the queries that validation runs beside each candidate:
the skeleton with one end table of the path dropped (a join that changes nothing is not a hop),
and for ORDER BY ... LIMIT 1 questions the query that exposes ties at the top.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curate.generators import catalog_files

TEMPLATE_DIR = Path(__file__).with_name("templates")
ROLES = ("num", "cat", "label", "date")
CATEGORIES = ("numerical", "list", "count", "select")
ALIASES = {"A": "a", "B": "b", "C": "c"}
JOIN_PLACEHOLDERS = ("ab", "bc")
_SLOT = re.compile(r"^(num|cat|label|date)(\d*)$")


@dataclass(frozen=True)
class Slot:
    alias: str  # a | b | c
    name: str  # num, num2, key_ab...
    role: str  # num | cat | label | date | key

    @property
    def ref(self) -> str:
        return f"{self.alias}.{self.name}"


@dataclass(frozen=True)
class ValueSpec:
    """How a placeholder's value is drawn: `equal` (any value of `slot`), `threshold` (a value
    from the middle of `slot`'s range), or `count` (a small group size)."""

    name: str
    kind: str
    slot: str = ""


@dataclass
class SqlTemplate:
    id: str
    family: str
    category: str
    tables: int
    sql: str
    question: str
    short: str
    skeleton: Any  # sqlglot Expression
    question_all_linked: str = ""  # the question where every {B} entry has {A} entries ("have {A} entries" says nothing)
    slots: dict[str, Slot] = field(default_factory=dict)
    values: dict[str, ValueSpec] = field(default_factory=dict)
    drops: dict[str, Any] = field(default_factory=dict)  # end table letter -> skeleton without it
    loosened: dict[str, Any] = field(default_factory=dict)  # value name -> skeleton with its condition TRUE
    tie_query: Any = None  # counts the answers that share the top of the ORDER BY
    aggregated: frozenset[str] = frozenset()  # aliases whose rows a SUM/AVG/COUNT over a join adds up
    groups: bool = False  # GROUP BY, EXCEPT, INTERSECT, IN: several rows of one table per row of another (no 1:1 join)
    counted: str = ""  # the alias whose rows a count question counts (COUNT(*): a; COUNT(DISTINCT x.label): x)
    pinned: str = ""  # the alias one row of which the question names (`x.label = :v`)
    summed: frozenset[str] = frozenset()  # slots a SUM adds up ("a.num"): additive measures only
    distinct: frozenset[str] = frozenset()  # category slots a COUNT(DISTINCT ...) counts the values of

    @property
    def answer(self) -> str:
        """`list` for List questions; else one value."""
        return "list" if self.category == "list" else "one"

    @property
    def interchangeable(self) -> tuple[str, ...]:
        """Two values of one column whose order changes nothing: the two sides of an INTERSECT ("both an
        entry with X and one with Y" asks what "both Y and X" asks)."""
        equal = sorted(n for n, spec in self.values.items() if spec.kind == "equal")
        if "INTERSECT" in self.sql.upper() and len(equal) == 2 \
                and self.values[equal[0]].slot == self.values[equal[1]].slot:
            return tuple(equal)
        return ()

    @property
    def letters(self) -> tuple[str, ...]:
        return ("A", "B", "C")[: self.tables]


def catalog_fingerprint(directory: Path = TEMPLATE_DIR) -> str:
    return catalog_files.fingerprint(directory)


def load_sql_templates(directory: Path = TEMPLATE_DIR, only: list[str] | None = None,
                       exclude: list[str] | None = None) -> list[SqlTemplate]:
    """Every template, in file and entry order; `only`/`exclude` take ids, id prefixes or categories."""
    templates = list(_catalog(str(directory), catalog_fingerprint(directory)))

    def chosen(t: SqlTemplate, name: str) -> bool:
        return t.id == name or t.id.startswith(name.rstrip(".") + ".") or t.category == name

    return catalog_files.choose(templates, only, exclude, chosen)


@functools.lru_cache(maxsize=8)
def _catalog(directory: str, fingerprint: str) -> tuple[SqlTemplate, ...]:
    """The catalog parsed once per process and per content (`fingerprint`): each part of a build
    would otherwise parse every template's SQL again, a tenth of `generate sql`'s time. Templates
    are not changed once built."""
    templates: list[SqlTemplate] = []
    for data, entry, where in catalog_files.template_entries(Path(directory), {"id", "tables", "sql", "question"}):
        try:
            templates.append(build_template(entry, data["family"],
                                            entry.get("category", data.get("category", ""))))
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
    return tuple(templates)


def build_template(entry: dict[str, Any], family: str, category: str) -> SqlTemplate:
    import sqlglot
    from sqlglot import exp

    if category not in CATEGORIES:
        raise ValueError(f"category must be one of {', '.join(CATEGORIES)}, got {category!r}")
    if entry["tables"] not in (2, 3):
        raise ValueError(f"tables must be 2 or 3, got {entry['tables']!r}")
    try:
        skeleton = sqlglot.parse_one(entry["sql"], read="duckdb")
    except sqlglot.errors.ParseError as e:
        raise ValueError(f"SQL does not parse: {str(e).splitlines()[0]}") from None
    template = SqlTemplate(id=entry["id"], family=family, category=category, tables=entry["tables"],
                           sql=entry["sql"], question=entry["question"], short=entry.get("short", ""),
                           skeleton=skeleton, question_all_linked=entry.get("question_all_linked", ""))
    letters = template.letters
    allowed = {ALIASES[x] for x in letters}
    for table in skeleton.find_all(exp.Table):
        if table.name not in letters or table.alias != ALIASES[table.name]:
            raise ValueError(f"table {table.sql()!r}: use {', '.join(f'{x} AS {ALIASES[x]}' for x in letters)}")
    for column in skeleton.find_all(exp.Column):
        if column.table not in ALIASES.values():
            continue  # a derived table's column (g.average)
        if column.table not in allowed:
            raise ValueError(f"column {column.sql()!r}: a {template.tables}-table template "
                             f"has no alias {column.table!r}")
        template.slots.setdefault(f"{column.table}.{column.name}", _slot(column.table, column.name))
    for placeholder in skeleton.find_all(exp.Placeholder):
        name = placeholder.name
        if name in JOIN_PLACEHOLDERS:
            if name == "bc" and template.tables == 2:
                raise ValueError(":bc needs a 3-table template")
            continue
        template.values[name] = _value_spec(placeholder)
    for name, spec in template.values.items():
        if spec.slot and spec.slot not in template.slots:
            raise ValueError(f":{name} is compared with {spec.slot}, which is not a slot")
    for text in (template.question, template.short, template.question_all_linked):
        for ref in re.findall(r"\{([^}]*)\}", text):
            if ref not in template.slots and ref not in template.values and ref not in letters:
                raise ValueError(f"question refers to {{{ref}}}, which the SQL does not define")
    for question in filter(None, (template.question, template.question_all_linked)):
        _check_threshold_wording(question, skeleton)
    for letter in (letters[0], letters[-1]):
        dropped = drop_table(skeleton, letter)
        if dropped is not None:
            template.drops[letter] = dropped
    # a label names the one row asked about ("the parent labelled north"): without it the answer is another's
    template.loosened = {name: tree for name, spec in template.values.items() if not spec.slot.endswith(".label")
                         and (tree := without_condition(skeleton, name)) is not None}
    if template.answer == "one":
        template.tie_query = _tie_query(skeleton)
    template.aggregated = _aggregated_aliases(skeleton)
    template.summed = frozenset(f"{c.table}.{c.name}" for total in skeleton.find_all(exp.Sum)
                                for c in total.find_all(exp.Column) if c.table in allowed)
    template.distinct = frozenset(f"{c.table}.{c.name}" for count in skeleton.find_all(exp.Count)
                                  if isinstance(count.this, exp.Distinct) for c in count.this.find_all(exp.Column)
                                  if c.table in allowed and c.name.startswith("cat"))
    template.groups = any(skeleton.find(kind) is not None for kind in (exp.Group, exp.Except, exp.Intersect, exp.In))
    template.counted, template.pinned = _counted_and_pinned(skeleton) if category == "count" else ("", "")
    return template


# How a question says a threshold, by the comparison its SQL makes: "more than 18" leaves 18 out,
# "at least 18" / "18 or more" keeps it. "above 18" (or "below", "over", "under") is read both
# ways by readers, so no question may say it (the rules generator's `HAVE` says the same).
# Dates say it in time words: "after" leaves the day out, "on or after" keeps it.
THRESHOLD_WORDING = {">": ("more than {x}", "later than {x}"), ">=": ("at least {x}", "{x} or more", "on or after {x}", "{x} or later"),
                     "<": ("less than {x}", "fewer than {x}", "earlier than {x}"),
                     "<=": ("at most {x}", "{x} or less", "{x} or fewer", "on or before {x}", "{x} or earlier")}
_AMBIGUOUS_THRESHOLD = re.compile(r"\b(above|below|over|under|exceeding)\s+\{", re.I)


def _check_threshold_wording(question: str, skeleton: Any) -> None:
    """Refuse a template whose question leaves a tie open or says the other side of it from its
    SQL: the reader's "above 18" and the gold's `> 18` disagree on every row equal to 18."""
    from sqlglot import exp

    if (m := _AMBIGUOUS_THRESHOLD.search(question)):
        raise ValueError(f"question says {m.group(0)!r}...: say 'more than' (>) or 'at least' (>=) so ties are clear")
    operators = {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<="}
    for kind, op in operators.items():
        for node in skeleton.find_all(kind):
            if not isinstance(node.expression, exp.Placeholder):
                continue
            name = node.expression.name
            if f"{{{name}}}" not in question:
                continue  # a value the question does not say (a count's :n said elsewhere)
            if not any(phrase.format(x=f"{{{name}}}") in question for phrase in THRESHOLD_WORDING[op]):
                raise ValueError(f"SQL compares {op} :{name}; the question must say "
                                 f"{' or '.join(repr(p.format(x=name)) for p in THRESHOLD_WORDING[op])}")


def _counted_and_pinned(skeleton: Any) -> tuple[str, str]:
    """(alias counted, alias whose one row is named) of `SELECT COUNT(*) | COUNT(DISTINCT x.label)
    ... WHERE y.label = :v`; ("", "") for any other shape. Counting the rows of x that one row of y
    reaches through many-to-one steps only gives 1 whatever the data: an answer fixed by construction."""
    from sqlglot import exp

    if not isinstance(skeleton, exp.Select) or len(skeleton.expressions) != 1:
        return "", ""
    count = skeleton.expressions[0]
    if not isinstance(count, exp.Count):
        return "", ""
    if isinstance(count.this, exp.Star):
        counted = "a"
    elif isinstance(count.this, exp.Distinct) and len(count.this.expressions) == 1 \
            and isinstance(count.this.expressions[0], exp.Column) and count.this.expressions[0].name == "label":
        counted = count.this.expressions[0].table
    else:
        return "", ""
    where = skeleton.args.get("where")
    for condition in _conjuncts(where.this) if where is not None else []:
        if isinstance(condition, exp.EQ) and isinstance(condition.left, exp.Column) \
                and condition.left.name == "label" and isinstance(condition.right, exp.Placeholder):
            return counted, condition.left.table
    return counted, ""


def _aggregated_aliases(skeleton: Any) -> frozenset[str]:
    """The tables whose rows an aggregate over a join adds up: SUM, AVG and COUNT(column) read their
    column's table, COUNT(*) the path's first table (the "{A} entries" a question counts). MAX, MIN
    and COUNT(DISTINCT) do not change when a row repeats, so they need nothing."""
    from sqlglot import exp

    out: set[str] = set()
    for select in skeleton.find_all(exp.Select):
        if not select.args.get("joins"):
            continue
        for node in select.find_all(exp.Sum, exp.Avg, exp.Count):
            if node.find_ancestor(exp.Select) is not select or isinstance(node.this, exp.Distinct):
                continue
            if isinstance(node, exp.Count) and isinstance(node.this, exp.Star):
                out.add("a")
            else:
                out.update(c.table for c in node.find_all(exp.Column) if c.table in ALIASES.values())
    return frozenset(out)


def _slot(alias: str, name: str) -> Slot:
    if name in ("key_ab", "key_bc"):
        if alias not in name[4:]:
            raise ValueError(f"{alias}.{name}: table {alias} is not on edge {name[4:]}")
        return Slot(alias, name, "key")
    match = _SLOT.match(name)
    if not match:
        raise ValueError(f"unknown slot {alias}.{name}; slots are {', '.join(ROLES)} (+ a digit) or key_ab/key_bc")
    return Slot(alias, name, match.group(1))


def _value_spec(placeholder: Any) -> ValueSpec:
    from sqlglot import exp

    parent = placeholder.parent
    comparisons = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
    if not isinstance(parent, comparisons):
        raise ValueError(f":{placeholder.name} must be compared with a column or an aggregate")
    other = parent.left if parent.right is placeholder else parent.right
    kind = "equal" if isinstance(parent, (exp.EQ, exp.NEQ)) else "threshold"
    if isinstance(other, exp.Count):
        return ValueSpec(placeholder.name, "count")
    column = other if isinstance(other, exp.Column) else other.find(exp.Column)
    if column is None or column.table not in ALIASES.values():
        raise ValueError(f":{placeholder.name} must be compared with a slot column")
    if not isinstance(other, exp.Column):
        kind = "threshold"  # AVG(a.num) > :v
    return ValueSpec(placeholder.name, kind, f"{column.table}.{column.name}")


# ------------------------------------------------------------------------------ derived queries

def _scope_tables(select: Any) -> list[Any]:
    from_ = select.args.get("from_") or select.args.get("from")
    tables = [from_.this] if from_ is not None else []
    return tables + [j.this for j in select.args.get("joins") or []]


def _uses(node: Any, alias: str, scope: Any) -> bool:
    """Does `node` read a column of `alias` in `scope` itself (not in a nested query)?"""
    from sqlglot import exp

    return any(c.table == alias and c.find_ancestor(exp.Select) is scope for c in node.find_all(exp.Column))


def _conjuncts(condition: Any) -> list[Any]:
    from sqlglot import exp

    if isinstance(condition, exp.And):
        return _conjuncts(condition.left) + _conjuncts(condition.right)
    if isinstance(condition, exp.Paren):
        return _conjuncts(condition.this)
    return [condition]


def without_condition(skeleton: Any, name: str) -> Any:
    """The skeleton with the comparison that holds the value `:name` replaced by TRUE: run beside the
    query, it tells a filter that keeps every row ("the exhibitions whose records average more than 1313
    attendance" where every exhibition does) from one that picks some. None when no comparison holds
    the value."""
    from sqlglot import exp

    tree = skeleton.copy()
    for placeholder in tree.find_all(exp.Placeholder):
        comparison = placeholder.parent
        if placeholder.name == name and isinstance(comparison, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
            comparison.replace(exp.true())
            return tree
    return None


def drop_table(skeleton: Any, letter: str) -> Any:
    """The skeleton without the end table `letter`: its join (or the IN subquery that reaches it)
    and its conditions removed. None when the table supplies the answer (selected, grouped or
    ordered by): then its join is needed by construction."""
    from sqlglot import exp

    tree = skeleton.copy()
    alias = ALIASES[letter]
    vanished: set[int] = set()
    changed = False
    for select in reversed(list(tree.find_all(exp.Select))):  # inner queries first
        tables = _scope_tables(select)
        names = [t.name for t in tables]
        where = select.args.get("where")
        if letter in names:
            if len(tables) == 1:
                vanished.add(id(select))
                continue
            parts = [select.args.get("expressions") or [], [select.args.get("group")], [select.args.get("order")],
                     [select.args.get("having")]]
            if any(node is not None and _uses(node, alias, select) for part in parts for node in part):
                return None
            index = names.index(letter)
            joins = list(select.args["joins"])
            if index == 0:
                select.set("from_" if "from_" in select.args else "from", exp.From(this=joins[0].this))
                del joins[0]
            elif index == len(tables) - 1:
                del joins[index - 1]
            else:
                return None  # a middle table is not an end of the path
            select.set("joins", joins or None)
            changed = True
        if where is not None:
            keep = [c for c in _conjuncts(where.this)
                    if not _uses(c, alias, select) and not any(id(s) in vanished for s in c.find_all(exp.Select))]
            if len(keep) != len(_conjuncts(where.this)):
                changed = True
                select.set("where", exp.Where(this=exp.and_(*keep)) if keep else None)
    if any(id(select) in vanished for select in tree.find_all(exp.Select)):  # still reachable
        return None  # the table is the whole of a query the answer needs
    return tree if changed else None


def _tie_query(skeleton: Any) -> Any:
    """For `SELECT x ... ORDER BY k LIMIT 1`: how many different x share the top rank of k.

    `SELECT COUNT(DISTINCT q.__answer) FROM (SELECT x AS __answer, RANK() OVER (ORDER BY k)
    AS __rank ...) AS q WHERE q.__rank = 1`: more than one means the question has no single answer.
    """
    from sqlglot import exp

    if not isinstance(skeleton, exp.Select) or skeleton.args.get("order") is None or skeleton.args.get("limit") is None:
        return None
    inner = skeleton.copy()
    order = inner.args["order"]
    inner.set("order", None)
    inner.set("limit", None)
    rank = exp.Window(this=exp.Rank(), order=order, over="OVER")
    inner.set("expressions", [inner.expressions[0].as_("__answer"), rank.as_("__rank")])
    answers = exp.Count(this=exp.Distinct(expressions=[exp.column("__answer", table="q")]))
    return (exp.select(answers).from_(inner.subquery("q"))
            .where(exp.EQ(this=exp.column("__rank", table="q"), expression=exp.Literal.number(1))))

"""`curate audit RELEASE`: find the wrong gold answers of a published (imported) or built benchmark,
each with its evidence.

Where a sample carries SQL (`provenance.source_sql`, or a `sql` program), the SQL is re-run in its own
dialect first: SQLite, over the tables rebuilt with column types taken from the data (a text column
whose every value is a plain number is declared numeric, so `'301' = 301` compares as the benchmark's
database would); DuckDB (sqlglot's transpilation) is the second opinion. The result set is then
compared with the gold as a result set:

- order counts only when the SQL orders and the question asks for an order;
- a SQL without DISTINCT whose duplicates the gold leaves out, a gold answering with some of the
  selected columns, a first and last name written as one ("Michael Leighton" for ('Michael',
  'Leighton')), a table-shaped `{"columns", "index", "data"}` or prose ("Gender 1: 5") gold: the same
  answer shaped differently (`presentation`, not wrong);
- numbers through `curation.answers.Equivalence`, within the rounding the gold is written to;
- a row chosen by `ORDER BY ... LIMIT` among rows tied on the order keys is `ambiguous`, not wrong;
  so is a result that changes when the tables' rows are stored in reverse order (a bare column beside
  MAX over tied rows, a LIMIT without a unique order).

Where the gold *is* the SQL's result (Spider, BIRD, MMQA's text-to-SQL twin), only SQL that fails,
returns nothing, or depends on an arbitrary tie is flagged. A question naming a quoted value its SQL
never mentions is `question_sql_disagree` (the gold may still be right).

`curate recheck FILE` (MMQA's sample file) is the SQL-only view of the same check (`recheck.py`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

KINDS = ("presentation", "wrong_value", "missing_or_extra_items", "question_sql_disagree", "sql_fails", "ambiguous")
_PLAIN_NUMBER = re.compile(r"^-?(0|[1-9]\d*)(\.\d+)?$")
_ASKS_ORDER = re.compile(r"\b(order(ed)?|sort(ed)?|ascending|descending|rank(ed|ing)? (by|from)|from (the )?(highest|"
                         r"lowest|largest|smallest|most|least|oldest|youngest|first|last)|(highest|lowest) to)\b", re.I)
_QUOTED = re.compile(r"(?<![A-Za-z])'([^']{2,})'(?![A-Za-z])")


@dataclass
class Finding:
    sample_id: str
    source_id: str
    kind: str
    gold: Any
    recomputed: Any
    wrong_gold: bool
    confidence: float
    engines: list[str]
    programs: list[str]
    detail: str
    question: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)  # table excerpt: {table: {columns, rows}}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- engines


def typed_bodies(bodies: dict[str, Any]) -> dict[str, Any]:
    """Each text column whose every value is a plain number ("301", not "0195" nor "1,062") cast to a
    number: the column type a database built from the data declares."""
    import pyarrow as pa

    out = {}
    for name, body in bodies.items():
        for i, f in enumerate(body.schema):
            if not pa.types.is_string(f.type) and not pa.types.is_large_string(f.type):
                continue
            values = [v for v in body.column(i).to_pylist() if v is not None]
            if values and all(_PLAIN_NUMBER.match(v) for v in values):
                kind = pa.float64() if any("." in v for v in values) else pa.int64()
                body = body.set_column(i, f.name, body.column(i).cast(kind))
        out[name] = body
    return out


class Engines:
    """The tables in SQLite (typed from the data) and in DuckDB, built once for the samples over them."""

    def __init__(self, bodies: dict[str, Any]) -> None:
        self.bodies = typed_bodies(bodies)
        self._sqlite: Any = None
        self._duckdb: Any = None
        self._reversed: Any = None

    @property
    def sqlite(self) -> Any:
        if self._sqlite is None:
            from curation.programs.sql import sqlite_copy

            self._sqlite = sqlite_copy(self.bodies, typed=True)
        return self._sqlite

    def run_sqlite(self, sql: str) -> tuple[list[tuple] | None, list[str], str | None]:
        import sqlite3

        try:
            cursor = self.sqlite.execute(sql)
            return cursor.fetchall(), [d[0] for d in cursor.description or ()], None
        except (sqlite3.Error, sqlite3.Warning) as e:
            return None, [], str(e)

    def order_dependent(self, sql: str, rows: list[tuple]) -> str | None:
        """The result again over the tables with their rows in reverse order: where it changes, the SQL
        depends on the order rows are stored in (a bare column beside MAX over tied rows, a LIMIT
        without a unique order)."""
        import sqlite3

        if self._reversed is None:
            from curation.programs.sql import sqlite_copy

            self._reversed = sqlite_copy({n: b.take(list(range(b.num_rows - 1, -1, -1)))
                                          for n, b in self.bodies.items()}, typed=True)
        try:
            again = self._reversed.execute(sql).fetchall()
        except (sqlite3.Error, sqlite3.Warning):
            return None
        if _multiset(again) == _multiset(rows):
            return None
        return (f"the result changes when the tables' rows are stored in reverse order: {_short(rows)} "
                f"becomes {_short(again)}")

    def run_duckdb(self, sql: str, dialect: str = "sqlite") -> tuple[list[tuple] | None, str | None]:
        import duckdb
        import sqlglot

        from curation.programs.sql import quote_ident

        try:
            if self._duckdb is None:
                con = self._duckdb = duckdb.connect(config={"threads": 1})
                con.execute("SET enable_external_access = false")
                for name, body in self.bodies.items():
                    con.register("__source", body)
                    con.execute(f"CREATE TABLE {quote_ident(name)} AS SELECT * FROM __source")
                    con.unregister("__source")
            duck = sql if dialect == "duckdb" else sqlglot.transpile(sql, read=dialect, write="duckdb")[0]
            return self._duckdb.execute(duck).fetchall(), None
        except (duckdb.Error, sqlglot.errors.SqlglotError) as e:
            return None, str(e).splitlines()[0]

    def close(self) -> None:
        for con in (self._sqlite, self._duckdb, self._reversed):
            if con is not None:
                con.close()
        self._sqlite = self._duckdb = self._reversed = None


def tie_under_limit(sql: str, con: Any) -> str | None:
    """Where an `ORDER BY ... LIMIT n` keeps some of the rows tied on its order keys and drops others
    that differ in what is selected: a description of the tie, else None."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.SqlglotError:
        return None
    for select in tree.find_all(exp.Select):
        order, limit = select.args.get("order"), select.args.get("limit")
        if not order or not limit:
            continue
        try:
            n = int(limit.expression.name)
            offset = int(select.args["offset"].expression.name) if select.args.get("offset") else 0
        except (AttributeError, ValueError, TypeError):
            continue
        aliases = {e.alias: e.this for e in select.expressions if isinstance(e, exp.Alias)}
        keys = []
        for o in order.expressions:
            key = o.this
            if isinstance(key, exp.Column) and not key.table and key.name in aliases:
                key = aliases[key.name]
            elif isinstance(key, exp.Literal) and key.is_int and 0 < int(key.name) <= len(select.expressions):
                key = select.expressions[int(key.name) - 1]
                key = key.this if isinstance(key, exp.Alias) else key
            keys.append(key.copy())
        probe = select.copy()
        probe.set("limit", None)
        probe.set("offset", None)
        probe.set("expressions", [e.copy() for e in select.expressions] + keys)
        try:
            cursor = con.execute(probe.sql(dialect="sqlite"))
            rows = cursor.fetchall()
        except Exception:  # a correlated subquery does not run alone: no verdict
            continue
        width = len(cursor.description) - len(keys)  # SELECT * selects more than one expression
        if len(rows) <= offset + n:
            continue
        boundary = rows[offset + n - 1][width:]
        kept = {r[:width] for r in rows[offset:offset + n] if r[width:] == boundary}
        dropped = {r[:width] for r in rows[offset + n:] if r[width:] == boundary}
        if dropped - kept:
            shown = ", ".join(str(list(r)) for r in sorted(dropped - kept, key=str)[:3])
            return (f"LIMIT {n} keeps {sorted(map(list, kept), key=str)[:3]} of rows tied at order key "
                    f"{list(boundary)}; also tied: {shown}")
    return None


# --------------------------------------------------------------------------- comparison


def _decimals(text: str) -> int:
    m = re.search(r"\.(\d+)\s*%?$", text.strip())
    return len(m.group(1)) if m else 0


def _equivalence(gold_cells: list[Any], ordered: bool = False) -> Any:
    from curation.answers import Equivalence

    decimals = max([_decimals(str(c)) for c in gold_cells if isinstance(c, (str, float))] + [0])
    return Equivalence(abs_tol=0.5 * 10 ** -decimals + 1e-9, ordered=ordered)


def gold_readings(gold: Any, columns: list[str]) -> list[list[Any]]:
    """The gold as flat lists of cells, in every reading it allows: as published (JSON lists,
    `{"columns", "index", "data"}` tables), split at ", " (or whole: values hold commas), and prose
    ("Gender 1: 5") with the labels that name a selected column dropped."""
    from curation.answers import split_list

    if isinstance(gold, str):
        text = gold.strip()
        if text[:1] in "{[":
            try:
                return gold_readings(json.loads(text), columns)
            except json.JSONDecodeError:
                pass
        readings = []
        parts = split_list(text)
        readings.append(parts if isinstance(parts, list) else [parts])
        readings.append([text])
        pieces = [p.strip() for p in re.split(r"[,;\n]|:\s", text) if p.strip()]
        names = sorted({c.lower().replace("_", " ") for c in columns} | {c.lower() for c in columns}, key=len,
                       reverse=True)
        cleaned = []
        for p in pieces:
            for name in names:
                if p.lower().startswith(name + " ") and len(p) > len(name) + 1:
                    p = p[len(name):].strip()
                    break
            if p.lower() not in names:
                cleaned.append(p)
        readings.append(cleaned)
        return [r for i, r in enumerate(readings) if r and r not in readings[:i]]
    if isinstance(gold, dict) and "data" in gold:
        return [[c for row in gold["data"] for c in (row if isinstance(row, list) else [row])]]
    if isinstance(gold, list):
        return [[c for row in gold for c in (row if isinstance(row, list) else [row])]]
    return [[gold]]


def _cells(rows: list[tuple], columns: tuple[int, ...] | None = None, distinct: bool = False) -> list[Any]:
    picked = [tuple(r[i] for i in columns) if columns is not None else tuple(r) for r in rows]
    if distinct:
        picked = list(dict.fromkeys(picked))
    return [v for r in picked for v in r]


def compare(gold: Any, rows: list[tuple], columns: list[str], sql: str, question: str) -> tuple[str | None, str]:
    """(kind or None, why): None when the gold is the result; `presentation` when it is the result
    shaped differently; `wrong_value` or `missing_or_extra_items` when it is not."""
    from itertools import combinations

    from curation.answers import normalize_answer

    width = len(columns) or (len(rows[0]) if rows else 1)
    ordered = bool(re.search(r"\border\s+by\b", sql, re.I)) and bool(_ASKS_ORDER.search(question))
    distinct_sql = bool(re.search(r"\bselect\s+distinct\b", sql, re.I))
    readings = gold_readings(gold, columns)
    for cells in readings:
        eq = _equivalence(cells, ordered)
        if eq.same(cells, _cells(rows)):
            return None, "the gold is the SQL's result"
    shapes: list[tuple[str, list[Any]]] = []
    if not distinct_sql:
        shapes.append(("the gold leaves out the rows the SQL repeats (no DISTINCT)", _cells(rows, distinct=True)))
    for k in range(1, width):
        for cols in combinations(range(width), k):
            names = ", ".join(columns[i] for i in cols) if columns else str(cols)
            shapes.append((f"the gold answers with the column(s) {names} of the selected ones", _cells(rows, cols)))
            shapes.append((f"the gold answers with the column(s) {names}, repeats left out", _cells(rows, cols, True)))
    if width > 1:
        shapes.append(("the gold writes each row's cells as one value",
                       [" ".join(str(v) for v in r) for r in rows]))
    for cells in readings:
        eq = _equivalence(cells, ordered)
        for why, candidate in shapes:
            if eq.same(cells, candidate):
                return "presentation", why
        if ordered and _equivalence(cells).same(cells, _cells(rows)):
            return "wrong_value", "the gold lists the right items in an order the question does not ask for"
    # not the result: items missing or extra, or a wrong value
    gold_items = [normalize_answer(c) for c in readings[0]]
    result_items = [normalize_answer(c) for c in _cells(rows, distinct=not distinct_sql)]
    eq = _equivalence(readings[0])
    if width == 1 and gold_items and result_items:
        common = sum(1 for g in gold_items if any(eq.same(g, r) for r in result_items))
        if common and (common == len(gold_items) or common == len(result_items)) and len(gold_items) != len(result_items):
            return "missing_or_extra_items", (f"the gold has {len(gold_items)} items, the SQL's result "
                                              f"{len(result_items)}, {common} in common")
    return "wrong_value", "the gold is not the SQL's result"


# --------------------------------------------------------------------------- one sample


def check_sql(question: str, sql: str, gold: Any, bodies: dict[str, Any] | Engines, gold_is_result: bool = False,
              dialect: str = "sqlite") -> dict[str, Any]:
    """The SQL re-run in its own dialect first (SQLite for Spider-family and MMQA; DuckDB for curate's
    own programs), the other engine as second opinion, and compared with the gold: `{kind, wrong_gold,
    confidence, recomputed, engines, detail, tie}`; `kind` is None when nothing is wrong."""
    import sqlglot

    from curation.answers import plain

    sqlite_sql: str | None = sql
    if dialect != "sqlite":
        try:
            sqlite_sql = sqlglot.transpile(sql, read=dialect, write="sqlite")[0]
        except sqlglot.errors.SqlglotError:
            sqlite_sql = None
    engines_of = bodies if isinstance(bodies, Engines) else Engines(bodies)
    try:
        lite, columns, error = engines_of.run_sqlite(sqlite_sql) if sqlite_sql else (None, [], "no SQLite form")
        tie = tie_under_limit(sqlite_sql, engines_of.sqlite) if lite is not None and sqlite_sql else None
        if lite is not None and tie is None and sqlite_sql:
            tie = engines_of.order_dependent(sqlite_sql, lite)
        duck_rows, duck_error = engines_of.run_duckdb(sql, dialect)
    finally:
        if engines_of is not bodies:
            engines_of.close()
    engines = []
    if lite is not None:
        engines.append("sqlite")
    if duck_rows is not None:
        engines.append("duckdb")
    if dialect == "duckdb":
        engines.reverse()
    agree = lite is not None and duck_rows is not None and _multiset(lite) == _multiset(duck_rows)
    out: dict[str, Any] = {"engines": engines, "engines_agree": agree, "tie": tie,
                           "sqlite_error": error, "duckdb_error": duck_error, "columns": columns}
    own, other = (lite, duck_rows) if dialect == "sqlite" else (duck_rows, lite)
    rows, note = own, ""
    if own is None and other is not None:  # its own dialect failed, the other engine ran it
        rows, note = other, f"{'SQLite' if dialect == 'sqlite' else 'DuckDB'} failed, the other engine ran it"
    out["recomputed"] = plain([list(r) for r in rows]) if rows is not None else None
    base = 0.9 if agree else 0.6
    literals = [q for q in _QUOTED.findall(question) if q.lower() not in sql.lower()]
    if rows is None:
        return {**out, "kind": "sql_fails", "wrong_gold": gold_is_result, "confidence": 0.95,
                "detail": f"the SQL fails: SQLite: {error}; DuckDB: {duck_error}"}
    if gold_is_result:
        if not rows and dialect == "sqlite":  # a benchmark's question has an answer; curate's own
            # programs may answer with an empty list on purpose (no outliers)
            return {**out, "kind": "sql_fails", "wrong_gold": True, "confidence": base,
                    "detail": "the SQL returns no rows: the gold answer is empty"}
        if tie:
            return {**out, "kind": "ambiguous", "wrong_gold": True, "confidence": 0.8,
                    "detail": f"the gold depends on an arbitrary tie: {tie}"}
        return {**out, "kind": None, "wrong_gold": False, "confidence": base, "detail": "the SQL runs"}
    kind, why = compare(gold, rows, columns, sql, question)
    if note:
        why = f"{why} ({note})"
    if tie and kind is not None:
        return {**out, "kind": "ambiguous", "wrong_gold": False, "confidence": 0.7,
                "detail": f"{why}; but the SQL keeps one of tied rows: {tie}"}
    if kind in ("wrong_value", "missing_or_extra_items"):
        return {**out, "kind": kind, "wrong_gold": True, "confidence": base, "detail": why}
    if kind == "presentation":
        return {**out, "kind": kind, "wrong_gold": False, "confidence": base, "detail": why}
    if tie:
        return {**out, "kind": "ambiguous", "wrong_gold": False, "confidence": 0.7,
                "detail": f"the gold is the SQL's result, which keeps one of tied rows: {tie}"}
    if literals:
        return {**out, "kind": "question_sql_disagree", "wrong_gold": False, "confidence": 0.5,
                "detail": f"the question names {', '.join(repr(q) for q in literals)}, which the SQL never "
                          "mentions (the gold agrees with the SQL)"}
    return {**out, "kind": None, "wrong_gold": False, "confidence": base, "detail": why}


def _short(rows: list[tuple], n: int = 3) -> str:
    return str([list(r) for r in rows[:n]])[:-1] + (f", ... ({len(rows)} rows)]" if len(rows) > n else "]")


def _multiset(rows: list[tuple]) -> Any:
    from collections import Counter

    from curation.answers import plain

    def cell(v: Any) -> Any:
        v = plain(v)
        return round(float(v), 6) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

    return Counter(tuple(cell(v) for v in r) for r in rows)


def excerpt(bodies: dict[str, Any], values: list[Any], limit: int = 8) -> dict[str, Any]:
    """The rows of each table that hold a value of the gold or the recomputed answer (the evidence)."""
    from curation.answers import normalize_answer, plain

    def flat(v: Any) -> list[Any]:
        return [x for item in v for x in flat(item)] if isinstance(v, (list, tuple)) else [v]

    wanted = {w for v in flat(values) if v not in (None, "") and not isinstance(w := normalize_answer(v), list)}
    out = {}
    for name, body in bodies.items():
        rows = []
        for x in body.slice(0, 5000).to_pylist():
            r = list(x.values())
            if any(isinstance(c, (str, int, float)) and normalize_answer(plain(c)) in wanted for c in r):
                rows.append(r)
        if rows:
            out[name] = {"columns": body.column_names, "rows": plain(rows[:limit]), "matching_rows": len(rows)}
    return out


# --------------------------------------------------------------------------- a release


# --------------------------------------------------------------------------- golds without a program

_AGGREGATES = {"total": "sum", "sum": "sum", "average": "mean", "mean": "mean", "highest": "max", "maximum": "max",
               "lowest": "min", "minimum": "min"}
# words that restrict the rows a question is about: a general rule answers only questions over all rows
_RESTRICTING = re.compile(r"\b(where|which|who|whose|that|with|between|after|before|since|than|among|each|per|"
                          r"excluding|only|if|when|from|in the year|for the|of the top|difference|ratio|percentage|"
                          r"change|growth|increase|decrease|rank|first|last)\b|\d", re.I)
_COUNT = re.compile(r"^how many \w+(?: \w+)? (?:have|had|has|with|scored|recorded) (?:an? |the )?(?P<col>.+?) "
                    r"(?P<op>greater than|more than|higher than|above|over|less than|lower than|below|under|of at least|"
                    r"at least|of at most|at most|equal to|of)? ?(?P<num>-?\d[\d,]*(?:\.\d+)?)(?: [a-z]+)??"
                    r"(?P<tail> or (?:higher|more|above|greater|lower|less|below))?\s*\?$", re.I)


def _column_named(phrase: str, body: Any) -> str | None:
    import pyarrow as pa

    def words(text: str) -> str:
        text = re.sub(r"\([^)]*\)", " ", text.lower())  # a unit in brackets: "elevation (m)"
        return re.sub(r"[^a-z0-9]+", " ", text).strip()

    want = re.sub(r"^(the )?number of |^the | value$", "", words(phrase))
    for f in body.schema:
        name = words(f.name)
        if name and name == want and (pa.types.is_integer(f.type) or pa.types.is_floating(f.type)):
            return f.name
    return None


def _names_values(text: str, body: Any) -> bool:
    """The text names a place, a type, ... that the table's text cells hold ("in Himachal Pradesh",
    "the ismb beams"): it restricts the rows."""
    import pyarrow as pa

    words = {w for w in re.findall(r"[a-z][a-z0-9]+", text.lower())} - {
        "what", "is", "was", "the", "total", "sum", "average", "mean", "highest", "maximum", "lowest", "minimum",
        "of", "all", "in", "table", "across", "for", "number"}
    if re.search(r"\bin (?!the table)", text.lower()):
        return True
    for f in body.schema:
        if pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
            for v in body.column(f.name).to_pylist():
                if v and words & set(re.findall(r"[a-z][a-z0-9]+", v.lower())):
                    return True
    return False


def rule_answers(question: str, body: Any) -> list[tuple[str, Any]]:
    """Answers general, data-driven rules derive from the table where one applies, as (rule, answer):
    - `aggregate`: "What is the total/average/highest/lowest <column>?" over all rows, where <column>
      is a numeric column named in full and nothing in the question restricts the rows;
    - `count`: "How many ... have <column> greater than / at least / ... N?" over a numeric column
      named in full. No rule is written for one question."""
    import pyarrow.compute as pc

    out: list[tuple[str, Any]] = []
    q = question.strip()
    m = re.match(r"^what (?:is|was) the (?P<agg>total|sum|average|mean|highest|maximum|lowest|minimum) "
                 r"(?:of (?:the |all )?)?(?P<col>[^?]+?)(?: (?:of|across|for) all (?:the )?[\w ]+?)?(?: in the table)?"
                 r"\s*\?$", q, re.I)
    if m:
        column = _column_named(m.group("col"), body)
        rest = q[:m.start("col")] + q[m.end("col"):]
        if column and not _RESTRICTING.search(rest) and not _names_values(rest, body):
            values = body.column(column)
            fn = _AGGREGATES[m.group("agg").lower()]
            value = getattr(pc, fn)(values).as_py()
            if value is not None:
                out.append((f"aggregate:{fn}({column})", round(float(value), 2)))
    m = _COUNT.match(q)
    if m:
        column = _column_named(m.group("col"), body)
        if column:
            op, tail = (m.group("op") or "").lower(), (m.group("tail") or "").lower()
            num = float(m.group("num").replace(",", ""))
            values = [v for v in body.column(column).to_pylist() if v is not None]
            if tail and any(w in tail for w in ("higher", "more", "above", "greater")):
                n = sum(v >= num for v in values)
            elif tail:
                n = sum(v <= num for v in values)
            elif op in ("greater than", "more than", "higher than", "above", "over"):
                n = sum(v > num for v in values)
            elif op in ("less than", "lower than", "below", "under"):
                n = sum(v < num for v in values)
            elif op in ("of at least", "at least"):
                n = sum(v >= num for v in values)
            elif op in ("of at most", "at most"):
                n = sum(v <= num for v in values)
            else:
                n = sum(v == num for v in values)
            out.append((f"count({column} {op or tail or '='} {m.group('num')})", n))
    return out


def vote_on_gold(gold: Any, candidates: list[tuple[str, Any]], min_votes: int = 2, min_share: float = 2 / 3
                 ) -> dict[str, Any] | None:
    """The candidates' answers voted with the rule judge (`validators.voting.RuleJudge`): a finding when
    the largest group that agrees holds at least `min_votes` candidates and `min_share` of them, and its
    answer is not the gold; None otherwise (too few or split candidates, or they agree with the gold)."""
    from validators.voting import RuleJudge

    from curation.answers import split_list

    judge = RuleJudge()
    if isinstance(gold, str):  # "a, b" is a list of two; TableBench writes some with a full-width comma
        gold = split_list(gold.replace("，", ", ").strip())
    usable = [(who, a) for who, a in candidates if a not in (None, "")]
    groups: list[list[tuple[str, Any]]] = []
    for who, a in usable:
        for g in groups:
            if judge.same(a, g[0][1]):
                g.append((who, a))
                break
        else:
            groups.append([(who, a)])
    if not groups:
        return None
    largest = max(groups, key=len)
    if len(largest) < min_votes or len(largest) < min_share * len(usable) or judge.same(largest[0][1], gold):
        return None
    from curation.answers import normalize_answer

    g, a = normalize_answer(gold), normalize_answer(largest[0][1])
    g, a = (g if isinstance(g, list) else [g]), (a if isinstance(a, list) else [a])
    kind = "missing_or_extra_items" if len(g) != len(a) else "wrong_value"
    return {"kind": kind, "recomputed": largest[0][1], "wrong_gold": True,
            "confidence": round(0.9 * len(largest) / len(usable), 2), "engines": [w for w, _ in largest],
            "detail": f"{len(largest)} of {len(usable)} candidates agree on {largest[0][1]!r}, not the gold"}


def audit_release(path: str, candidates: dict[str, dict[str, Any]] | None = None,
                  programs: dict[str, dict[str, str]] | None = None, min_votes: int = 2,
                  limit: int | None = None) -> dict[str, Any]:
    """`candidates`: {candidate name: {sample_id: answer}} (replayed model outputs run by `curate
    evaluate`'s replay, see the CLI); `programs` the programs behind them, the same way."""
    import pyarrow.parquet as pq

    from curation.arrow_io import table_at, table_index
    from curation.programs import data_view

    release = Path(path)
    manifest_file = release / "manifest.json"
    if not manifest_file.exists():
        raise SystemExit(f"{path}: not a release (no manifest.json)")
    manifest = json.loads(manifest_file.read_text())
    index = table_index([str(release / "tables" / "tables.parquet")])
    findings: list[Finding] = []
    checked = 0
    engines: dict[tuple[str, ...], Engines] = {}
    for file in sorted((release / "samples").glob("*/*.parquet")):
        columns = ["id", "task", "question", "answer", "table_ids", "program", "provenance"]
        for row in pq.read_table(file, columns=columns).to_pylist():
            prov = row["provenance"]
            prov = json.loads(prov) if isinstance(prov, str) else dict(prov or {})
            program = row["program"] or {}
            sql = prov.get("source_sql") or (program.get("text") if program.get("kind") == "sql" else None)
            dialect = "sqlite" if prov.get("source_sql") else (program.get("dialect") or "duckdb")
            if limit is not None and checked >= limit:
                break
            if not sql:
                found = _vote_sample(row, prov, index, candidates or {}, programs or {}, min_votes)
                if found is not None:
                    checked += 1
                    if found is not True:
                        findings.append(found)
                continue
            tables = [table_at(*index[t]) for t in row["table_ids"] if t in index]
            # curate's own programs name a single table `t` (curation.programs.sql.SqlRunner)
            alias = not prov.get("source_sql") and len(tables) == 1
            key = (*row["table_ids"], alias)
            if key not in engines:
                views = {("t" if alias else t.name): data_view(t) for t in tables}
                if alias and tables[0].summary_rows:  # tree questions read totals from the whole body
                    views["sheet"] = tables[0].body
                engines[key] = Engines(views)
            bodies = engines[key].bodies
            gold_is_result = row["task"].endswith("text_to_sql") or "source_answer" not in prov
            gold = prov.get("source_answer", json.loads(row["answer"]) if isinstance(row["answer"], str) else row["answer"])
            checked += 1
            r = check_sql(row["question"], sql, gold, engines[key], gold_is_result, dialect)
            if r["kind"] is None:
                continue
            findings.append(Finding(row["id"], str(prov.get("source_id", "")), r["kind"], gold, r["recomputed"],
                                    r["wrong_gold"], r["confidence"], r["engines"], [f"sql ({dialect}): {sql}"],
                                    r["detail"], row["question"],
                                    excerpt(bodies, [*(gold if isinstance(gold, list) else [gold]),
                                                     *[v for rr in (r["recomputed"] or []) for v in rr],
                                                     *re.findall(r"'([^']+)'", sql)])))
    for e in engines.values():
        e.close()
    for skipped in (manifest.get("build", {}).get("import") or {}).get("skipped", []):
        if "SQL" in skipped.get("reason", "") or skipped.get("field") in ("query", "SQL"):
            findings.append(Finding("", str(skipped.get("source_id", "")), "sql_fails", None, None, True, 0.95, ["sqlite"],
                                    [], f"left out by the import: {skipped.get('reason')}"))
    return report(str(release), manifest, checked, findings)


def _vote_sample(row: dict[str, Any], prov: dict[str, Any], index: dict[str, Any],
                 candidates: dict[str, dict[str, Any]], programs: dict[str, dict[str, str]], min_votes: int = 2
                 ) -> Any:
    """A gold without a program: None when nothing could be said, True when checked and fine, else a Finding."""
    from curation.arrow_io import table_at
    from curation.programs import data_view

    gold = prov.get("source_answer", json.loads(row["answer"]) if isinstance(row["answer"], str) else row["answer"])
    votes = [(name, answers[row["id"]]) for name, answers in candidates.items() if row["id"] in answers]
    tables = [table_at(*index[t]) for t in row["table_ids"] if t in index]
    bodies = {t.name: data_view(t) for t in tables}
    if len(bodies) == 1:
        votes += rule_answers(row["question"], next(iter(bodies.values())))
    if not votes:
        return None
    found = vote_on_gold(gold, votes, min_votes=min_votes)
    if found is None:
        return True
    used = [f"{w}: {programs.get(w, {}).get(row['id'], '')}".strip() for w in found["engines"]]
    values = [gold, found["recomputed"]]
    return Finding(row["id"], str(prov.get("source_id", "")), found["kind"], gold, found["recomputed"], True,
                   found["confidence"], found["engines"], used, found["detail"], row["question"],
                   excerpt(bodies, values))


def report(path: str, manifest: dict[str, Any], checked: int, findings: list[Finding]) -> dict[str, Any]:
    from collections import Counter

    counts = Counter(f.kind for f in findings)
    return {"release": path, "name": f"{manifest.get('name')}/{manifest.get('version')}", "checked": checked,
            "findings": [f.to_dict() for f in findings], "counts": {k: counts.get(k, 0) for k in KINDS},
            "wrong_gold": sum(f.wrong_gold for f in findings)}


def write_errata(report: dict[str, Any], out: str) -> list[str]:
    """The errata as JSON, Markdown and HTML: counts per kind, then each finding with its evidence."""
    import html

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "audit.json").write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n")
    md = [f"# Audit of {report['name']}", "", f"{report['checked']} samples checked, {len(report['findings'])} findings, "
          f"{report['wrong_gold']} gold answers wrong.", "", "| kind | findings |", "| --- | --- |"]
    md += [f"| {k} | {n} |" for k, n in report["counts"].items()]
    page = [f"<h1>Audit of {html.escape(report['name'])}</h1>",
            f"<p>{report['checked']} samples checked, {len(report['findings'])} findings, "
            f"{report['wrong_gold']} gold answers wrong.</p><table><tr><th>kind</th><th>findings</th></tr>"]
    page += [f"<tr><td>{k}</td><td>{n}</td></tr>" for k, n in report["counts"].items()]
    page.append("</table>")
    for f in report["findings"]:
        title = f"{f['kind']}: {f['source_id'] or f['sample_id']}" + (" (gold wrong)" if f["wrong_gold"] else "")
        md += ["", f"## {title}", "", f"- question: {f['question']}", f"- gold: `{f['gold']!r}`",
               f"- recomputed: `{f['recomputed']!r}`", f"- confidence: {f['confidence']:.2f}; engines: "
               f"{', '.join(f['engines'])}", f"- why: {f['detail']}"]
        md += [f"- program: `{p}`" for p in f["programs"]]
        page += [f"<h2>{html.escape(title)}</h2><ul>", f"<li>question: {html.escape(f['question'])}</li>",
                 f"<li>gold: <code>{html.escape(repr(f['gold']))}</code></li>",
                 f"<li>recomputed: <code>{html.escape(repr(f['recomputed']))}</code></li>",
                 f"<li>confidence {f['confidence']:.2f}; engines {html.escape(', '.join(f['engines']))}</li>",
                 f"<li>why: {html.escape(f['detail'])}</li>"]
        page += [f"<li>program: <code>{html.escape(p)}</code></li>" for p in f["programs"]]
        page.append("</ul>")
        for name, part in (f.get("evidence") or {}).items():
            md += ["", f"Table `{name}` ({part['matching_rows']} rows hold a value of the gold or the recomputed "
                   "answer; the first shown):", "", "| " + " | ".join(map(str, part["columns"])) + " |",
                   "|" + " --- |" * len(part["columns"])]
            md += ["| " + " | ".join(str(c) for c in row) + " |" for row in part["rows"]]
            page.append(f"<p>table <b>{html.escape(name)}</b></p><table><tr>"
                        + "".join(f"<th>{html.escape(str(c))}</th>" for c in part["columns"]) + "</tr>")
            page += ["<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in part["rows"]]
            page.append("</table>")
    (folder / "audit.md").write_text("\n".join(md) + "\n")
    (folder / "audit.html").write_text("<!doctype html><meta charset='utf-8'><title>audit</title>"
                                       "<style>td,th{border:1px solid #ccc;padding:2px 6px}table{border-collapse:"
                                       "collapse}</style>\n" + "\n".join(page) + "\n")
    return [str(folder / n) for n in ("audit.json", "audit.md", "audit.html")]

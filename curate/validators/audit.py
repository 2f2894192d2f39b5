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
- numbers through `curate.curation.answers.Equivalence`, within the rounding the gold is written to;
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
from pathlib import Path
from typing import Any

from curate.validators.findings import CORRECTING, KINDS, Finding, excerpt, proposed_answer  # noqa: F401

_PLAIN_NUMBER = re.compile(r"^-?(0|[1-9]\d*)(\.\d+)?$")
_ASKS_ORDER = re.compile(r"\b(order(ed)?|sort(ed)?|ascending|descending|rank(ed|ing)? (by|from)|from (the )?(highest|"
                         r"lowest|largest|smallest|most|least|oldest|youngest|first|last)|(highest|lowest) to)\b", re.I)
_QUOTED = re.compile(r"(?<![A-Za-z])'([^']{2,})'(?![A-Za-z])")


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
            from curate.curation.programs.sql import sqlite_copy

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
            from curate.curation.programs.sql import sqlite_copy

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

        from curate.curation.programs.sql import quote_ident

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
    from curate.curation.answers import Equivalence

    decimals = max([_decimals(str(c)) for c in gold_cells if isinstance(c, (str, float))] + [0])
    return Equivalence(abs_tol=0.5 * 10 ** -decimals + 1e-9, ordered=ordered)


def gold_readings(gold: Any, columns: list[str]) -> list[list[Any]]:
    """The gold as flat lists of cells, in every reading it allows: as published (JSON lists,
    `{"columns", "index", "data"}` tables), split at ", " (or whole: values hold commas), and prose
    ("Gender 1: 5") with the labels that name a selected column dropped."""
    from curate.curation.answers import split_list

    if isinstance(gold, str):
        text = gold.strip()
        structured = parsed_structure(text)
        if structured is not None and table_cells(structured) is not None:
            return gold_readings(structured, columns)
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
    cells = table_cells(gold)
    if cells is not None:
        return [cells]
    if isinstance(gold, (dict, list)):  # a structure the audit cannot read: compared as nothing
        return [[]]
    return [[gold]]


# ---------------------------------------------------------------- layouts of a gold (issue 43: presentation
# is not a wrong gold): structures in pandas' orients, prose that states the result, unreadable layouts


def parsed_structure(text: str) -> Any:
    """A gold written as JSON or as a Python literal (MMQA: a pandas `split` dict's repr), else None."""
    from curate.curation.literals import LiteralError, literal

    if text.strip()[:1] not in ("{", "["):
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        try:
            return literal(text)
        except LiteralError:
            return None


def table_cells(value: Any) -> list[Any] | None:
    """The cells, row by row, of a table written in one of pandas' orients: `split` ({"columns",
    "index", "data"}), `records` ([{column: value}]), `columns` ({column: {index: value}}),
    `index` ({index: {column: value}}), or a list (of rows); None for any other structure."""
    cells = _orient_cells(value)
    return cells if cells is not None and not any(isinstance(c, (dict, list)) for c in cells) else None


def _orient_cells(value: Any) -> list[Any] | None:
    def row(r: Any) -> list[Any]:
        return r if isinstance(r, list) else [r]

    if isinstance(value, dict) and isinstance(value.get("data"), list):
        return [c for r in value["data"] for c in row(r)]
    if isinstance(value, list):
        if value and all(isinstance(r, dict) for r in value):
            return [c for r in value for c in r.values()]
        if all(not isinstance(r, dict) and not any(isinstance(c, (dict, list)) for c in row(r)) for r in value):
            return [c for r in value for c in row(r)]
        return None
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        inner = list(dict.fromkeys(k for v in value.values() for k in v))
        outer = list(value)
        if set(inner) <= {str(i) for i in range(len(inner) + 1)} | set(range(len(inner) + 1)):  # `columns`
            return [value[c].get(i) for i in inner for c in outer]
        return [v.get(c) for v in value.values() for c in inner]  # `index`
    return None


def unreadable_layout(gold: Any) -> str | None:
    """Why the audit cannot read the gold's layout (a structure it does not know), or None."""
    if isinstance(gold, str):
        text = gold.strip()
        if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
            value = parsed_structure(text)
            if value is None:
                return "the gold looks like a JSON or Python structure but is neither"
            gold = value
    if isinstance(gold, (dict, list)) and table_cells(gold) is None:
        keys = f" (keys {', '.join(map(str, list(gold)[:5]))})" if isinstance(gold, dict) else ""
        return f"the gold is a structure the audit does not read{keys}"
    return None


_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?![\w])")


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip().replace(",", "")
    return float(text) if _PLAIN_NUMBER.match(text) else None


def stated_in_text(text: str, rows: list[tuple], question: str, bodies: dict[str, Any] | None = None) -> str | None:
    """Why a gold written as prose or pairs states exactly the SQL's result ("2 settlements were made
    with a total amount settled of 2469" for (2, 2469); "Ann Lee (Acme)" for ('Ann Lee', 'Acme')), or
    None. Every distinct result cell must be in the text (numbers within the rounding the text writes
    them to), and what is left must name no other number (but the question's) and no other value of
    the tables (an extra item is not prose)."""
    cells = list(dict.fromkeys(c for r in rows for c in r if c is not None))
    if not cells or not isinstance(text, str) or not text.strip():
        return None
    rest = " " + " ".join(text.split()) + " "
    for cell in sorted(cells, key=lambda c: -len(str(c))):
        number = _as_number(cell)
        if number is not None:  # every mention of it (a result may hold it twice)
            found = [m for m in _NUMBER.finditer(rest)
                     if abs(float(m.group().replace(",", "")) - number) <= 0.5 * 10 ** -_decimals(m.group()) + 1e-9]
            if not found:
                return None
            for m in reversed(found):
                rest = rest[:m.start()] + " " + rest[m.end():]
            continue
        pattern = re.compile(r"(?<!\w)" + re.escape(" ".join(str(cell).split())) + r"(?!\w)", re.I)
        if not pattern.search(rest):
            return None
        rest = pattern.sub(" ", rest)
    if _extra_item(text, cells):
        return None
    asked = {m.group().replace(",", "") for m in _NUMBER.finditer(question)}
    stray = [m.group() for m in _NUMBER.finditer(rest) if m.group().replace(",", "") not in asked]
    if stray:
        return None
    if bodies and _names_other_values(rest, question, bodies, cells):
        return None
    if not re.search(r"[A-Za-z]", rest):
        return "the gold writes the SQL's result in another layout (pairs, brackets, separators)"
    return "the gold states the SQL's result in prose"


def _extra_item(text: str, cells: list[Any]) -> bool:
    """A gold written as a list ("a, b, c") whose short item holds none of the result's cells: an
    extra item, not prose around the result."""
    chunks = [c.strip(" .()[]") for c in re.split(r"(?<!\d),|,(?!\d)|[;\n]", text)]  # not 52,500's comma
    if len(chunks) < 2:
        return False
    folded = [" ".join(str(c).lower().split()) for c in cells]
    for chunk in chunks:
        low = " ".join(chunk.lower().split())
        if not low or len(low.split()) > 3:
            continue
        numbers = [float(m.group().replace(",", "")) for m in _NUMBER.finditer(low)]
        holds = any(f and f in low for f in folded) or any(
            n is not None and any(abs(n - x) <= 0.5 * 10 ** -_decimals(str(x)) + 1e-9 for x in numbers)
            for n in map(_as_number, cells))
        if not holds:
            return True
    return False


def _names_other_values(rest: str, question: str, bodies: dict[str, Any], cells: list[Any], limit: int = 20000) -> bool:
    """Does the text left over name a value of the tables that the result does not hold? (too many
    values to look through: assume it does, so the gold is not excused)"""
    import pyarrow as pa

    asked, held = question.lower(), {str(c).lower() for c in cells}
    words = " " + " ".join(re.findall(r"\w+", rest.lower())) + " "
    seen = 0
    for body in bodies.values():
        for column in body.columns:
            if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
                continue
            for value in set(column.to_pylist()):
                seen += 1
                if seen > limit:
                    return True
                v = " ".join(re.findall(r"\w+", str(value or "").lower()))
                if len(v) < 3 or v in held or v in asked or _PLAIN_NUMBER.match(v):
                    continue
                if f" {v} " in words:
                    return True
    return False


def _cells(rows: list[tuple], columns: tuple[int, ...] | None = None, distinct: bool = False) -> list[Any]:
    picked = [tuple(r[i] for i in columns) if columns is not None else tuple(r) for r in rows]
    if distinct:
        picked = list(dict.fromkeys(picked))
    return [v for r in picked for v in r]


def compare(gold: Any, rows: list[tuple], columns: list[str], sql: str, question: str,
            bodies: dict[str, Any] | None = None) -> tuple[str | None, str]:
    """(kind or None, why): None when the gold is the result; `presentation` when it is the result
    shaped differently (another layout, prose: `stated_in_text`, whose check for extra items reads
    `bodies`); `unreadable_gold` when its layout is one the audit cannot read; `wrong_value` or
    `missing_or_extra_items` when it is not the result."""
    from itertools import combinations

    from curate.curation.answers import normalize_answer

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
    unreadable = unreadable_layout(gold)
    if unreadable:
        return "unreadable_gold", unreadable
    if isinstance(gold, str) and parsed_structure(gold) is None:
        stated = stated_in_text(gold, rows, question, bodies)
        if stated:
            return "presentation", stated
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

    from curate.curation.answers import plain

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
    kind, why = compare(gold, rows, columns, sql, question, engines_of.bodies)
    if note:
        why = f"{why} ({note})"
    if tie and kind is not None:
        return {**out, "kind": "ambiguous", "wrong_gold": False, "confidence": 0.7,
                "detail": f"{why}; but the SQL keeps one of tied rows: {tie}"}
    if kind in ("wrong_value", "missing_or_extra_items"):
        return {**out, "kind": kind, "wrong_gold": True, "confidence": base, "detail": why}
    if kind in ("presentation", "unreadable_gold"):
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

    from curate.curation.answers import plain

    def cell(v: Any) -> Any:
        v = plain(v)
        return round(float(v), 6) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

    return Counter(tuple(cell(v) for v in r) for r in rows)


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


_FILLER = {"what", "is", "was", "are", "were", "the", "a", "an", "of", "all", "in", "table", "total", "sum", "average",
           "mean", "highest", "maximum", "lowest", "minimum", "number", "how", "many", "have", "has", "had", "with",
           "that", "which", "who", "for", "and", "do", "does", "did", "there", "across", "listed", "given", "based",
           "on", "according", "to", "as", "by", "combined", "overall", "at", "least", "or", "more", "greater", "than",
           "above", "over", "less", "below", "under", "fewer", "most", "higher", "lower", "equal", "exceeding",
           "exceed", "exceeds", "be", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
           "any", "each", "their", "its", "'s", "s", "occurred", "happened"}
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10}
_OPS = (("at least", ">="), ("or more", ">="), ("or higher", ">="), ("or above", ">="), ("greater than", ">"),
        ("more than", ">"), ("higher than", ">"), ("above", ">"), ("over", ">"), ("exceeding", ">"),
        ("at most", "<="), ("or less", "<="), ("or fewer", "<="), ("or lower", "<="), ("less than", "<"),
        ("fewer than", "<"), ("lower than", "<"), ("below", "<"), ("under", "<"))


def _tokens(text: str) -> list[str]:
    from curate.curation.semantics import singular

    words = re.findall(r"[^\W_]+(?:'[^\W_]+)?", re.sub(r"\([^)]*\)", " ", text.lower()))
    return [singular(w) if w.isalpha() and len(w) > 3 else w for w in words]


def _units(name: str) -> set[str]:
    """The words of a column's unit in brackets ("sales (billion )": billion)."""
    return {w for part in re.findall(r"\(([^)]*)\)", name.lower()) for w in re.findall(r"[^\W_]+", part)}


def filtered_rule(question: str, body: Any) -> tuple[str, Any] | None:
    """A count, or an aggregate of one numeric column, over the rows a question picks out by values the
    table holds ("in the oil and gas industry": rows whose industry is "oil and gas"; "the ismb beams":
    rows whose text holds the word) and by thresholds on columns it names ("have sales of at least 300
    billion"), answered only when every other word of the question is a function word, a column's own
    words or unit, or one noun naming the rows: a question that says anything more is left alone. The
    general form of the two rules above."""
    import pyarrow as pa

    q = question.strip()
    m = re.match(r"^(?:what (?:is|was) the (?P<agg>total|sum|average|mean|highest|maximum|lowest|minimum|combined)"
                 r"|how many) (?P<rest>[^?]+)\?$", q, re.I)
    if not m:
        return None
    agg = (m.group("agg") or "count").lower()
    numeric = [f.name for f in body.schema if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)]
    texts = [f.name for f in body.schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    words = _tokens(m.group("rest"))
    used = [False] * len(words)

    def find(phrase: list[str], lo: int = 0, hi: int | None = None) -> int:
        hi = len(words) if hi is None else hi
        for i in range(max(lo, 0), hi - len(phrase) + 1):
            if phrase and words[i:i + len(phrase)] == phrase and not any(used[i:i + len(phrase)]):
                return i
        return -1

    def mark(i: int, n: int) -> None:
        for k in range(i, i + n):
            used[k] = True

    def column_at(lo: int, hi: int) -> tuple[str, int, int] | None:
        """The numeric column named in full within words[lo:hi] (the longest name): (column, start, length)."""
        best = None
        for col in numeric:
            cw = _tokens(col)
            i = find(cw, lo, hi)
            if cw and i >= 0 and (best is None or len(cw) > best[2]):
                best = (col, i, len(cw))
        return best

    # thresholds: "<column> [of] <op> N [unit]", "<op> N <column>", "N or more <column>"
    conditions: list[tuple[str, str, float]] = []
    number = re.compile(r"-?\d+(?:\.\d+)?")
    for phrase, op in _OPS:
        pw = phrase.split()
        for i in range(len(words) - len(pw) + 1):
            if words[i:i + len(pw)] != pw or any(used[i:i + len(pw)]):
                continue
            if pw[0] == "or":  # "N or more"
                at = i - 1
                if at < 0 or not number.fullmatch(words[at]):
                    continue
            else:
                at = i + len(pw)
                if at >= len(words) or not (number.fullmatch(words[at]) or words[at] in _NUMBER_WORDS):
                    continue
            value = float(_NUMBER_WORDS.get(words[at], words[at]))
            lo = min(at, i)
            hi = max(at, i + len(pw) - 1) + 1
            found = column_at(max(0, lo - 5), lo)  # the column before: "sales of at least 300"
            if found is None or any(w not in ("of", "a", "an", "the", "is", "was") for w in words[found[1] + found[2]:lo]):
                found = column_at(hi, min(len(words), hi + 5))  # or after: "at least one semifinalist"
                if found is None or found[1] > hi + 1:
                    return None
            conditions.append((found[0], op, value))
            mark(found[1], found[2])
            mark(lo, hi - lo)
            units = _units(found[0])
            if hi < len(words) and words[hi] in units:
                used[hi] = True
    # the measure: the numeric column named in full (the longest), or whose words all appear, for an aggregate
    measure = None
    if agg != "count":
        found = column_at(0, len(words))
        if found is not None:
            measure = found[0]
            mark(found[1], found[2])
        else:
            free = {w for i, w in enumerate(words) if not used[i]}
            named = [c for c in numeric if _tokens(c) and set(_tokens(c)) <= free]
            if len(named) != 1:
                return None
            measure = named[0]
            for i, w in enumerate(words):
                if w in _tokens(measure):
                    used[i] = True
        for i, w in enumerate(words):
            if not used[i] and w in _units(measure):
                used[i] = True
    # values the table holds: a cell value named in full, or a word that cells of one column hold
    keep = [True] * body.num_rows
    named = False
    cells = {c: [("" if v is None else str(v)).lower() for v in body.column(c).to_pylist()] for c in texts}
    for col, values in cells.items():
        chosen = set()
        for v in sorted({v for v in values if len(v) > 2 and v != col.lower()}, key=len, reverse=True):
            i = find(_tokens(v))
            if i >= 0:
                mark(i, len(_tokens(v)))
                chosen.add(v)
        if chosen:  # a cell listing several ("August, September") holds each
            keep = [k and (v in chosen or bool(chosen & {x.strip() for x in re.split(r"[,;/]", v)}))
                    for k, v in zip(keep, values)]
            named = True
            i = find(_tokens(col))  # "in the oil and gas industry": the column's name says what the value is
            if i >= 0:
                mark(i, len(_tokens(col)))
    held = {c: [set(_tokens(v)) for v in values] for c, values in cells.items()}
    for i, w in enumerate(words):
        if used[i] or w in _FILLER or not w.isalpha():
            continue
        holders = [c for c, sets in held.items() if any(w in t for t in sets)]
        if len(holders) == 1:
            keep = [k and w in t for k, t in zip(keep, held[holders[0]])]
            used[i] = named = True
    for col in texts:  # a text column's name: "employers", "the month of"
        i = find(_tokens(col))
        if i >= 0:
            mark(i, len(_tokens(col)))
    left = [i for i, w in enumerate(words) if not used[i] and w not in _FILLER]
    # one word may be left: the noun naming the rows ("how many countries", "of companies", "... beams")
    content = [i for i, w in enumerate(words) if w not in _FILLER]
    if left and (len(left) > 1 or not words[left[0]].isalpha()
                 or not (left[0] in (content[0], content[-1]) or (left[0] > 0 and words[left[0] - 1] in
                                                                   ("of", "all", "the", "many")))):
        return None
    if not conditions and not named and agg == "count":
        return None  # "how many X?" of every row: no rule needed
    for col, op, value in conditions:
        column = body.column(col).to_pylist()
        keep = [k and v is not None and {">": v > value, ">=": v >= value, "<": v < value,
                                         "<=": v <= value}[op] for k, v in zip(keep, column)]
    where = " and ".join([f"{c} {op} {n:g}" for c, op, n in conditions] + (["values named"] if named else []))
    where = where or "all rows"
    if agg == "count":
        return f"count({where})", sum(keep)
    values = [v for k, v in zip(keep, body.column(measure).to_pylist()) if k and v is not None]
    if not values:
        return None
    fn = _AGGREGATES["total" if agg == "combined" else agg]
    value = {"sum": sum(values), "mean": sum(values) / len(values), "max": max(values), "min": min(values)}[fn]
    return f"{fn}({measure} where {where})", round(float(value), 2)


_SUMMARY_LABEL = re.compile(r"^\s*(grand total|sub-?total|totals?|all|overall|average|avg|mean|sum)\b|"
                            r"\b(totals?|subtotal)\s*[:.]?\s*$", re.I)


def _without_summary_rows(body: Any) -> Any:
    """The body without the rows a text cell labels as a summary of others ("Total", "Redemption- New Total")."""
    import pyarrow as pa

    texts = [f.name for f in body.schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    if not texts:
        return body
    columns = [body.column(c).to_pylist() for c in texts]
    keep = [i for i in range(body.num_rows) if not any(isinstance(col[i], str) and _SUMMARY_LABEL.search(col[i])
                                                       for col in columns)]
    return body if len(keep) == body.num_rows else body.take(keep)


def rule_answers(question: str, body: Any) -> list[tuple[str, Any]]:
    """Answers general, data-driven rules derive from the table where one applies, as (rule, answer):
    - `aggregate`: "What is the total/average/highest/lowest <column>?" over all rows, where <column>
      is a numeric column named in full and nothing in the question restricts the rows;
    - `count`: "How many ... have <column> greater than / at least / ... N?" over a numeric column
      named in full;
    - `filtered_rule`: either over the rows the question picks out, where neither applies.
    Rows that sum up others (a label "Total", "X Total", "All", "Average", as cleaning marks them in
    curate's own tables; an imported table keeps them in its body) are left out first, and a count
    of "distinct" or "different" things is not a count of rows: no rule answers it. No rule is
    written for one question."""
    import pyarrow.compute as pc

    out: list[tuple[str, Any]] = []
    q = question.strip()
    if re.search(r"\b(distinct|different|unique)\b", q, re.I):
        return out
    body = _without_summary_rows(body)
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
    if not out:
        found = filtered_rule(question, body)
        if found is not None:
            out.append(found)
    return out


def vote_on_gold(gold: Any, candidates: list[tuple[str, Any]], min_votes: int = 2, min_share: float = 2 / 3
                 ) -> dict[str, Any] | None:
    """The candidates' answers voted with the rule judge (`curate.validators.voting.RuleJudge`): a finding when
    the largest group that agrees holds at least `min_votes` candidates and `min_share` of them, and its
    answer is not the gold; None otherwise (too few or split candidates, or they agree with the gold)."""
    from curate.validators.voting import RuleJudge

    from curate.curation.answers import split_list

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
    from curate.curation.answers import normalize_answer

    g, a = normalize_answer(gold), normalize_answer(largest[0][1])
    g, a = (g if isinstance(g, list) else [g]), (a if isinstance(a, list) else [a])
    kind = "missing_or_extra_items" if len(g) != len(a) else "wrong_value"
    return {"kind": kind, "recomputed": largest[0][1], "wrong_gold": True,
            "confidence": round(0.9 * len(largest) / len(usable), 2), "engines": [w for w, _ in largest],
            "detail": f"{len(largest)} of {len(usable)} candidates agree on {largest[0][1]!r}, not the gold"}


def audit_release(path: str, candidates: dict[str, dict[str, Any]] | None = None,
                  programs: dict[str, dict[str, str]] | None = None, min_votes: int = 2,
                  limit: int | None = None, remarks: dict[str, dict[str, dict[str, Any]]] | None = None
                  ) -> dict[str, Any]:
    """`candidates`: {candidate name: {sample_id: answer}} (replayed model outputs run by `curate
    evaluate`'s replay, see the CLI); `programs` the programs behind them, the same way; `remarks` what
    each candidate's writer said beside it ({name: {source_id or sample_id: {ambiguous, note}}},
    `audit_vote.replay_remarks`)."""
    import pyarrow.parquet as pq

    from curate.curation.arrow_io import table_at, table_index
    from curate.curation.programs import data_view

    release = Path(path)
    files = _listed_files(path)
    manifest = json.loads(files.path("manifest.json").read_text())
    index = table_index([str(files.path("tables/tables.parquet"))])
    findings: list[Finding] = []
    checked = 0
    engines: dict[tuple[str, ...], Engines] = {}
    for file in files.sample_files():
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
                found = _vote_sample(row, prov, index, candidates or {}, programs or {}, remarks or {}, min_votes)
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
            gold = _gold(row, prov)
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
    findings += import_findings(manifest, findings)
    return report(str(release), manifest, checked, findings)


def import_findings(manifest: dict[str, Any], found: list[Finding]) -> list[Finding]:
    """What the import said is odd (`build.import`): a gold SQL that fails (its record left out, or
    only its text-to-SQL twin: then the question's own check has said so already), and an id the
    benchmark uses for more than one question (`duplicate_id`: each kept under its own source_id)."""
    imported = manifest.get("build", {}).get("import") or {}
    said = {(f.source_id, f.kind) for f in found}
    out = []
    for skipped in imported.get("skipped", []):
        source_id = str(skipped.get("source_id", ""))
        if ("SQL" in skipped.get("reason", "") or skipped.get("field") in ("query", "SQL")) and \
                (source_id, "sql_fails") not in said:
            out.append(Finding("", source_id, "sql_fails", None, None, True, 0.95, ["sqlite"], [],
                               f"left out by the import: {skipped.get('reason')}"))
    for flag in imported.get("flags", []):
        if flag.get("kind") == "duplicate_id":
            out.append(Finding("", str(flag.get("source_id", "")), "duplicate_id", None, None, False, 1.0, ["import"],
                               [], f"{flag.get('detail', '')} ({flag.get('where', '')})"))
    return out


def _listed_files(path: str) -> Any:
    """The release's files as `curate.curation.release_files` hands them out: only listed ones, no link
    followed, each hashed; a release that breaks the rule stops the audit, named."""
    from curate.curation.release_files import ReleaseIntegrityError, open_release

    if not (Path(path) / "manifest.json").exists():
        raise SystemExit(f"{path}: not a release (no manifest.json)")
    try:
        files = open_release(path)
        for rel in ("manifest.json", "tables/tables.parquet"):
            files.path(rel)
        files.sample_files()
    except ReleaseIntegrityError as e:
        raise SystemExit(str(e)) from None
    return files


def _gold(row: dict[str, Any], prov: dict[str, Any]) -> Any:
    """The gold as the benchmark published it, or as an annotator corrected it (a corrected release)."""
    answer = json.loads(row["answer"]) if isinstance(row["answer"], str) else row["answer"]
    if "source_answer" in prov and "gold_before_review" not in prov:
        return prov["source_answer"]
    return answer


def _vote_sample(row: dict[str, Any], prov: dict[str, Any], index: dict[str, Any],
                 candidates: dict[str, dict[str, Any]], programs: dict[str, dict[str, str]],
                 remarks: dict[str, dict[str, dict[str, Any]]], min_votes: int = 2) -> Any:
    """A gold without a program: None when nothing could be said, True when checked and fine, else a Finding.
    The candidates' vote is `validators.audit_vote`'s; with no candidate for the sample, the general rules
    alone: one rule answer against the gold is a finding (confidence 0.6)."""
    from curate.curation.arrow_io import table_at
    from curate.curation.programs import data_view
    from curate.validators.audit_vote import vote_sample

    gold = _gold(row, prov)
    bodies = {t.name: data_view(t) for t in (table_at(*index[t]) for t in row["table_ids"] if t in index)}
    rules = rule_answers(row["question"], next(iter(bodies.values()))) if len(bodies) == 1 else []
    found = vote_sample(row, prov, gold, bodies, candidates, programs, remarks, rules, min_votes)
    if found is not None or not rules:
        return found
    voted = vote_on_gold(gold, rules, min_votes=1)
    if voted is None:
        return True
    return Finding(row["id"], str(prov.get("source_id", "")), voted["kind"], gold, voted["recomputed"], True, 0.6,
                   voted["engines"], [], voted["detail"], row["question"], excerpt(bodies, [gold, voted["recomputed"]]))


# --------------------------------------------------------------------------- question and SQL, by a judge


def judge_requests(path: str, rows_shown: int = 3) -> list[dict[str, Any]]:
    """The question/SQL consistency check's prompts, one per sample that ships SQL with a question (a
    question and SQL shared by two samples, MMQA's QA and text-to-SQL twins, asked once): `{sample_ids,
    source_id, prompt}`. Send them to any model (`curate audit --judge-model`), or write them out
    (`--judge-prompts FILE`) and bring the replies back (`--judge-replies FILE`)."""
    import tomllib

    import pyarrow.parquet as pq

    from curate.curation.arrow_io import table_at, table_index
    from curate.curation.programs import data_view

    files = _listed_files(path)
    template = tomllib.loads((Path(__file__).with_name("prompts") / "audit_judge.toml").read_text())
    index = table_index([str(files.path("tables/tables.parquet"))])
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for file in files.sample_files():
        for row in pq.read_table(file, columns=["id", "question", "answer", "table_ids", "provenance"]).to_pylist():
            prov = json.loads(row["provenance"]) if isinstance(row["provenance"], str) else dict(row["provenance"])
            sql = prov.get("source_sql")
            if not sql:
                continue
            key = (row["question"], sql)
            if key in out:
                out[key]["sample_ids"].append(row["id"])
                continue
            shown = []
            for t in (table_at(*index[i]) for i in row["table_ids"] if i in index):
                body = data_view(t)
                lines = [" | ".join(body.column_names)] + [" | ".join(str(v) for v in r.values())
                                                           for r in body.slice(0, rows_shown).to_pylist()]
                shown.append(f"{t.name}:\n" + "\n".join(lines))
            prompt = template["audit_judge"]["prompt"].format(tables="\n\n".join(shown), question=row["question"],
                                                              sql=sql)
            out[key] = {"custom_id": f"sql:{row['id']}", "check": "sql", "sample_ids": [row["id"]],
                        "source_id": str(prov.get("source_id", "")), "prompt": prompt,
                        "question": row["question"], "sql": sql, "gold": _gold(row, prov)}
    return list(out.values())


def judge_verdict(reply: str) -> dict[str, Any] | None:
    """A judge's reply as {consistent, reason}: the JSON object asked for, else a line saying
    "consistent" / "inconsistent"; None when it says neither."""
    m = re.search(r"\{.*\}", reply or "", re.S)
    if m:
        try:
            obj = json.loads(m.group(0))
            if isinstance(obj.get("consistent"), bool):
                return {"consistent": obj["consistent"], "reason": str(obj.get("reason", ""))[:300]}
        except (json.JSONDecodeError, AttributeError):
            pass
    words = re.findall(r"\b(inconsistent|not consistent|consistent)\b", (reply or "").lower())
    if len(set(words)) == 1:
        return {"consistent": words[0] == "consistent", "reason": (reply or "").strip()[:300]}
    return None


def judge_live(requests: list[dict[str, Any]], client: Any, params: dict[str, Any] | None = None) -> dict[str, str]:
    """The prompts put to a model through the LLM layer (`curate.curation.llm`: cached, retried): the first
    sample id of each request -> the reply."""
    from curate.curation.llm.client import require_replies
    from curate.curation.llm.types import ChatRequest

    asked = [ChatRequest(messages=({"role": "user", "content": r["prompt"]},), params=dict(params or {}))
             for r in requests]
    replies = client.complete(asked)
    require_replies(client, replies)  # a server that did not answer: say so (the answers it gave are cached)
    return {r["sample_ids"][0]: resp.text for r, resp in zip(requests, replies) if resp.text}


def judge_replayed(requests: list[dict[str, Any]], path: str) -> dict[str, str]:
    """A file of judge replies made elsewhere, as `--judge-prompts` wrote the prompts: JSON Lines of
    `{custom_id or sample_id or source_id, reply}`, or OpenAI batch output lines (`{custom_id, response: {body:
    <chat.completion>}}`). The first sample id of each request -> the reply. A reply to a vote this run did not
    ask for (the candidates changed) is passed over; any other unknown id is an error."""
    from curate.curation.llm.batch import output_reply  # the one reader of a batch output line

    by_custom = {r["custom_id"]: r["sample_ids"][0] for r in requests if r.get("custom_id")}
    by_sample = {sid: r["sample_ids"][0] for r in requests for sid in r["sample_ids"]}
    by_source: dict[tuple[str, str], str] = {}
    for r in requests:
        if r["source_id"]:
            by_source.setdefault((r.get("check", "sql"), r["source_id"]), r["sample_ids"][0])
            by_source.setdefault(("", r["source_id"]), r["sample_ids"][0])
    out = {}
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{n}: not a JSON line ({e.msg})") from None
        if not isinstance(record, dict):
            raise ValueError(f"{path}:{n}: not a JSON object")
        custom = str(record.get("custom_id") or "")
        check = record.get("check") or (custom.partition(":")[0] if ":" in custom else "")
        target = (by_custom.get(custom) or by_sample.get(record.get("sample_id", ""))
                  or by_source.get((check or "", str(record.get("source_id", "")))))
        if target is None:
            if check == "vote":
                continue
            raise ValueError(f"{path}:{n}: no question asked of the judge in this release has that id")
        reply = record["reply"] if "reply" in record else (output_reply(record, f"{path}:{n}").text or None)
        if reply is not None:
            out[target] = str(reply)
    return out


def apply_judge(report_: dict[str, Any], requests: list[dict[str, Any]], replies: dict[str, str],
                judge: str) -> dict[str, Any]:
    """The judge's verdicts in the report: an inconsistent question and SQL is a `question_sql_disagree`
    finding of the first sample that pairs them (the gold may still be right: `wrong_gold` false,
    confidence 0.5) where nothing else was found for it; beside another finding it is said in its detail."""
    from collections import Counter

    by_sample = {f["sample_id"]: f for f in report_["findings"] if f["sample_id"]}
    judged = inconsistent = 0
    for r in requests:
        sample_id = r["sample_ids"][0]
        verdict = judge_verdict(replies.get(sample_id, ""))
        if verdict is None:
            continue
        judged += 1
        if verdict["consistent"]:
            continue
        inconsistent += 1
        note = f"judge {judge}: the question and the SQL disagree ({verdict['reason']})"
        f = next((by_sample[s] for s in r["sample_ids"] if s in by_sample), None)
        if f is not None:
            f["detail"] = f"{f['detail']}; {note}"
            f["engines"] = [*f["engines"], judge]
            continue
        entry = Finding(sample_id, r["source_id"], "question_sql_disagree", r["gold"], None, False, 0.5, [judge],
                        [f"sql: {r['sql']}"], note, r["question"]).to_dict()
        report_["findings"].append(entry)
        by_sample[sample_id] = entry
    counts = Counter(f["kind"] for f in report_["findings"])
    report_["counts"] = {k: counts.get(k, 0) for k in KINDS}
    report_["judge"] = {"model": judge, "judged": judged, "inconsistent": inconsistent}
    return report_


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
        if f.get("proposed") is not None:
            md.append(f"- proposed correction: `{f['proposed']}`")
        if f.get("needs_review"):
            md.append("- needs a person (`curate audit --queue`, then `curate review push --kind audit`)")
        md += [f"- program: `{p}`" for p in f["programs"] if not f.get("votes")]
        md += _votes_md(f)
        page += [f"<h2>{html.escape(title)}</h2><ul>", f"<li>question: {html.escape(f['question'])}</li>",
                 f"<li>gold: <code>{html.escape(repr(f['gold']))}</code></li>",
                 f"<li>recomputed: <code>{html.escape(repr(f['recomputed']))}</code></li>",
                 f"<li>confidence {f['confidence']:.2f}; engines {html.escape(', '.join(f['engines']))}</li>",
                 f"<li>why: {html.escape(f['detail'])}</li>"]
        if f.get("proposed") is not None:
            page.append(f"<li>proposed correction: <code>{html.escape(f['proposed'])}</code></li>")
        page += [f"<li>program: <code>{html.escape(p)}</code></li>" for p in f["programs"] if not f.get("votes")]
        page.append("</ul>")
        page += _votes_html(f)
        for name, part in (f.get("evidence") or {}).items():
            what = part.get("what") or "rows hold a value of the gold or the recomputed answer"
            md += ["", f"Table `{name}` ({part['matching_rows']} {what}; the first shown):", "",
                   "| " + " | ".join(map(str, part["columns"])) + " |",
                   "|" + " --- |" * len(part["columns"])]
            md += ["| " + " | ".join(str(c) for c in row) + " |" for row in part["rows"]]
            page.append(f"<p>table <b>{html.escape(name)}</b></p><table><tr>"
                        + "".join(f"<th>{html.escape(str(c))}</th>" for c in part["columns"]) + "</tr>")
            page += ["<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in part["rows"]]
            page.append("</table>")
    upheld = (report.get("vote_judge") or {}).get("upheld") or []
    if upheld:
        md += ["", f"## Golds the judge upheld ({len(upheld)})", ""]
        md += [f"- {u['source_id'] or u['sample_id']}: gold upheld ({u['reason']})" for u in upheld]
        page.append(f"<h2>Golds the judge upheld ({len(upheld)})</h2><ul>")
        page += [f"<li>{html.escape(u['source_id'] or u['sample_id'])}: gold upheld ({html.escape(u['reason'])})</li>"
                 for u in upheld]
        page.append("</ul>")
    (folder / "audit.md").write_text("\n".join(md) + "\n")
    (folder / "audit.html").write_text("<!doctype html><meta charset='utf-8'><title>audit</title>"
                                       "<style>td,th{border:1px solid #ccc;padding:2px 6px}table{border-collapse:"
                                       "collapse}</style>\n" + "\n".join(page) + "\n")
    return [str(folder / n) for n in ("audit.json", "audit.md", "audit.html")]


def _who_decided(f: dict[str, Any]) -> str:
    judge = f.get("judge") or {}
    if judge.get("by"):
        from curate.validators.audit_vote import row_ranges

        rows = f" (rows {row_ranges(judge['rows'])})" if judge.get("rows") else ""
        return f"judge {judge['by']}: {str(judge.get('verdict', '')).replace('_', ' ')}{rows}: {judge.get('reason', '')}"
    return str(judge.get("reason", ""))


def _votes_md(f: dict[str, Any]) -> list[str]:
    """The vote behind a finding: each candidate's answer (against the gold: same, format, items or value),
    whether its writer called the question ambiguous and why, its program; then who decided, and why."""
    if not f.get("votes"):
        return []
    out = []
    if f.get("judge"):
        out.append(f"- decided by: {_who_decided(f)}")
    out += ["", "| candidate | answer | against the gold | ambiguous | note |", "| --- | --- | --- | --- | --- |"]
    out += [f"| {v['name']} | `{v['answer']!r}` | {v['versus_gold']} | {'yes' if v['ambiguous'] else ''} | "
            f"{str(v['note']).replace('|', '/')} |" for v in f["votes"]]
    from curate.validators.audit_vote import program_shown

    for v in f["votes"]:
        program = program_shown(str(v["program"]))
        if program and not program.startswith("rule "):
            body = program if program.startswith("```") else f"```\n{program}\n```"
            out += ["", f"{v['name']}'s program:", "", body]
    return out


def _votes_html(f: dict[str, Any]) -> list[str]:
    import html

    from curate.validators.audit_vote import program_shown

    if not f.get("votes"):
        return []
    out = [f"<p>decided by: {html.escape(_who_decided(f))}</p>"] if f.get("judge") else []
    out.append("<table><tr><th>candidate</th><th>answer</th><th>against the gold</th><th>ambiguous</th><th>note</th>"
               "<th>program</th></tr>")
    out += [f"<tr><td>{html.escape(v['name'])}</td><td>{html.escape(repr(v['answer']))}</td><td>{v['versus_gold']}"
            f"</td><td>{'yes' if v['ambiguous'] else ''}</td><td>{html.escape(str(v['note']))}</td><td><pre>"
            f"{html.escape(program_shown(str(v['program'])))}</pre></td></tr>" for v in f["votes"]]
    out.append("</table>")
    return out

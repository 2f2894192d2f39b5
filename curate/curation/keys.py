"""Key inference for tables that declare none: keys a reader could defend, each with its evidence.

A primary key is a column (or a pair of columns) unique and non-null over every row that names
things: an id, a code, a name, or a date in a time series. A measure unique by chance (a count, a
rate, a float, a colour) is no key. A foreign key needs all three of:

- **inclusion**: every distinct value is found in the referenced key, save NULLs and at most
  `MAX_UNMATCHED` values (and `MAX_UNMATCHED_SHARE` of them), each listed in the evidence;
- **matching entities**: no dates, months, quarters, years or row numbers as join columns, and a
  column named like the key it references (or text that is the whole of another table's key);
- **one subject**: a generic entity column (`country`, `state`, `team`) joins only tables of one
  dataset (their names share a stem: `sowc_demographics`, `sowc_child_mortality`) or a table about
  that entity (`state.info`, `usa_states`); otherwise every country panel of a package would join
  every other through a shared column.

Two versions of one dataset are not two related tables, and no key joins them: tables documented
on one page (the same title: tidyr's `table1` .. `table5`, one study's `aidssi` and `aidssi2`),
tables of one schema (`Election08` and `Election16`: one season's standings and another's), and a
table that copies another's columns (`bakers_raw` and `bakers`, `complete` and `surveys`: at least
`COPIED_COLUMNS` shared columns besides the join column, most of them equal on `COPY_AGREEMENT`
of the joined rows). A question joining them asks of one table twice, or across periods by name.

Values decide, names are evidence (`_reference`, `_unmatched`, `_choose`): a placeholder for "none"
(0, "") among at least `MIN_MATCHED_BESIDE_PLACEHOLDERS` found values is no miss; a name that names
the referenced table in any language (`verursacht_durch_schiff_id` -> `schiff`) or ends with the key's
long name (`gemeldet_von_mitarbeiter_id`) is enough even over a dense range; ids no name links are
taken by values alone only from a sparse range and when no other table's key holds them all. A
name that matches beats a name that mentions a table, which beats values alone.

Two tables that each include the other's values (1:1) keep one direction: the referenced table is
the one the column is named after, else the one with fewer unmatched values, else the larger one.
Each inferred key carries its evidence and a confidence, so a user (and `curate keys`) sees why.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

from curate.curation.database import ForeignKey, PrimaryKey

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

MAX_UNMATCHED = 5  # distinct values of a foreign key that may be missing from the referenced key...
MAX_UNMATCHED_SHARE = 0.05  # ...and at most this share of its distinct values (so 0 below 20 values)
MAX_DISTINCT = 200_000
MIN_MATCHED_BESIDE_PLACEHOLDERS = 5  # values found before a "none" (0, "") among them is excused
COPIED_COLUMNS = 2  # shared columns (besides the join column) before two tables may be one table's copies...
COPY_AGREEMENT = 0.9  # ...when most of them hold the same value on at least this share of the joined rows
MAX_COMPOSITE_ROWS = 500_000  # composite keys are looked for in tables up to this size...
MAX_COMPOSITE_COLUMNS = 8  # ...among their first key-like columns
ROW_NUMBER_NAMES = {"rownames", "rowid", "rownumber", "index", "unnamed0", "x", "obs", "n"}
TIME_WORDS = ("date", "time", "day", "week", "month", "quarter", "year", "yr", "period", "season", "jahr",
              "datum", "monat", "tag", "hour", "minute", "timestamp", "yearmonth", "dob")
GENERIC_ENTITIES = {  # columns that name things many unrelated tables describe
    "country": "country", "countries": "country", "countryname": "country", "nation": "country",
    "iso": "country", "iso2": "country", "iso3": "country", "iso2c": "country", "iso3c": "country",
    "isocode": "country", "ccode": "country", "countrycode": "country", "cowcode": "country",
    "state": "state", "statename": "state", "stateabb": "state", "stateab": "state", "abr": "state",
    "st": "state", "province": "province", "region": "region", "county": "county", "city": "city",
    "team": "team", "name": "name", "location": "location", "place": "place", "district": "district",
}
_TIME_VALUE = re.compile(r"^\d{4}([-/.]\d{1,2}([-/.]\d{1,2})?)?([ T]\d|$)|^\d{4} ?(Q\d|[A-Z][a-z]{2}|W\d+)$"
                         r"|^\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}$")
_MEASURE_TEXT = re.compile(r"^[\s\d.,:/%+\-eE$€£()]*$|^#[0-9a-fA-F]{6}$")  # numbers written as text, colours
_DESCRIBES = ("meaning", "label", "labels", "name", "desc", "description", "text")


@dataclass
class _Column:
    table: str
    name: str
    kind: str  # "int" | "str" (text holding whole numbers compares as "int")
    distinct: frozenset
    unique: bool  # unique and non-null over the whole column
    time: bool  # a date, month, quarter or year: orders rows, names no thing
    measure_text: bool  # text that is numbers or colours: a value, not a name
    dense: bool  # whole numbers filling most of their range (1..n): row numbers, which match by chance


def _norm(name: str) -> str:
    """Lower case, accents folded (`länder` reads `lander`), only letters and digits."""
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", name.lower()) if not unicodedata.combining(ch))
    return re.sub(r"[^0-9a-z\u00c0-\uffff]+", "", folded)


def _singular(name: str) -> str:
    n = _norm(name)
    for suffix in ("ies", "es", "s"):
        if n.endswith(suffix) and len(n) > len(suffix) + 2:
            return n[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return n


def _time_name(name: str) -> bool:
    words = [w for w in re.split(r"[^0-9a-z]+", re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower()) if w]
    return any(w in TIME_WORDS or w.endswith(("date", "time")) for w in words) or _norm(name) in TIME_WORDS


def _profile(table: str, body: "pa.Table") -> list[_Column]:
    import pyarrow as pa
    import pyarrow.compute as pc

    out = []
    for name, col in zip(body.column_names, body.columns):
        t = col.type
        if pa.types.is_integer(t):
            kind = "int"
        elif pa.types.is_floating(t) and _whole(col):
            kind = "int"  # an id stored as REAL or DECIMAL (1.0, 2.0): a whole number, as the engines compare it
            col = pc.cast(col, pa.int64())
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            kind = "str"
        elif pa.types.is_date(t) or pa.types.is_timestamp(t):
            kind = "date"
        else:
            continue  # floats and booleans name no rows
        unique_values = pc.unique(col)
        if len(unique_values) > MAX_DISTINCT:
            continue
        values = [v for v in unique_values.to_pylist() if v is not None]
        sample = [str(v) for v in values[:50]]
        time = kind == "date" or _time_name(name) or (kind == "str" and bool(sample)
                                                     and all(_TIME_VALUE.match(v.strip()) for v in sample))
        if kind == "str" and values and all(re.fullmatch(r"-?\d{1,18}", v) for v in values):
            kind, values = "int", [int(v) for v in values]  # Spider's TEXT columns holding integer ids
        measure_text = kind == "str" and not time and bool(sample) and all(_MEASURE_TEXT.match(v) for v in sample)
        unique = col.null_count == 0 and len(values) == len(col) and len(col) >= 2
        dense = kind == "int" and bool(values) and len(values) >= 0.5 * (max(values) - min(values) + 1)
        out.append(_Column(table, name, kind, frozenset(values), unique, time, measure_text, dense))
    return out


def _whole(col: "pa.ChunkedArray") -> bool:
    """Does a float column hold only whole numbers a 64-bit integer can hold (and at least one)?"""
    import pyarrow.compute as pc

    valid = col.drop_null()
    if len(valid) == 0 or not pc.all(pc.is_finite(valid)).as_py():
        return False
    low, high = pc.min_max(valid).values()
    return abs(low.as_py()) < 2**53 and abs(high.as_py()) < 2**53 and pc.all(pc.equal(pc.floor(valid), valid)).as_py()


def _placeholder(value: object) -> bool:
    """A value that stands for "none" in a key column (0, "", "-", "n/a"): no reference, so not a miss."""
    return value in (0, "") or (isinstance(value, str) and value.strip().strip('"').lower() in ("", "-", "na", "n/a",
                                                                                             "none", "null"))


def id_like(name: str) -> bool:
    """Does the name say the column identifies things (`id`, `*_code`, `iso3c`, `state`)?"""
    n = _norm(name)
    return (n == "id" or n.endswith(("id", "code", "key")) or n in GENERIC_ENTITIES
            or n in ("faa", "tailnum", "carrier", "icpsr", "fips", "ccode", "cowcode", "isonum", "iso3c", "iso2c")
            or (n.endswith(("nr", "num", "no", "number")) and n not in ("nr", "num", "no", "number")))  # `No`: a count


def _describes(column: _Column, others: list[_Column]) -> bool:
    """Is this column the wording of a code column beside it (`x048wvsmeaning` of `x048wvs`)?"""
    n = _norm(column.name)
    return any(n != _norm(o.name) and n.startswith(_norm(o.name)) and n[len(_norm(o.name)):] in _DESCRIBES
               for o in others if o.unique)


def _key_like(c: _Column, others: list[_Column]) -> bool:
    """Could this column name the rows (alone or with another)? Ids, codes, names and dates can;
    measures (counts, rates, amounts, numbers written as text) cannot."""
    if _norm(c.name) in ROW_NUMBER_NAMES or c.measure_text:
        return False
    if c.kind == "int":
        return id_like(c.name) or c.time or any(_describes(o, [c]) for o in others)
    return True


def _pk_score(c: _Column, others: list[_Column]) -> float:
    n = _norm(c.name)
    score = 0.5
    if c.time:
        score -= 0.2  # a time series' date is its key only when nothing names the rows
    if id_like(c.name):
        score += 0.3
    table = _singular(c.table)
    if n in ("id", table + "id") or (len(table) >= 4 and n.startswith(table[:4]) and n.endswith("id")):
        score += 0.15  # the table's own id: `customer_id` of Customers, over its `customer_code`
    if c.kind == "str" and not c.time:
        score += 0.05
    if _describes(c, others):
        score -= 0.3  # the code's wording, not the code
    return round(score, 3)


def _names_match(fk: _Column, pk: _Column) -> bool:
    a, b = _norm(fk.name), _norm(pk.name)
    target = _singular(pk.table)
    return (a == b or (b == "id" and (a in (target + "id", target) or (len(a) >= 4 and target.endswith(a))))
            or (len(b) > 2 and a.endswith(b)) or a == target or b == a + "id"
            or (len(a) >= 4 and _norm(pk.table).startswith(a)))


def _stem(a: str, b: str) -> bool:
    """Do two tables' names share a stem of 3+ letters (one dataset: `wvs_immig`, `wvs_ccodes`)?"""
    x, y = _norm(a), _norm(b)
    common = 0
    while common < min(len(x), len(y)) and x[common] == y[common]:
        common += 1
    return common >= 3 and x[:3].isalpha()


def _one_subject(fk: _Column, pk: _Column) -> bool:
    """A generic entity column joins only tables of one dataset, or a table about that entity."""
    entity = GENERIC_ENTITIES.get(_norm(fk.name)) or GENERIC_ENTITIES.get(_norm(pk.name))
    if entity is None:
        return True
    return _stem(fk.table, pk.table) or entity in _norm(pk.table)


def _composite_key(table: str, body: "pa.Table", cols: list[_Column]) -> tuple[str, ...] | None:
    """The best pair of key-like columns that is unique and non-null together (state + year)."""
    if body.num_rows < 2 or body.num_rows > MAX_COMPOSITE_ROWS:
        return None
    eligible = [c for c in cols if _key_like(c, cols) and not c.unique and len(c.distinct) >= 2
                and body.column(c.name).null_count == 0][:MAX_COMPOSITE_COLUMNS]
    best: tuple[float, tuple[str, ...]] | None = None
    for a, b in combinations(eligible, 2):
        if len(a.distinct) * len(b.distinct) < body.num_rows:
            continue
        if body.select([a.name, b.name]).group_by([a.name, b.name]).aggregate([]).num_rows != body.num_rows:
            continue
        score = _pk_score(a, cols) + _pk_score(b, cols) + (0.3 if a.time != b.time else 0.0)  # a thing and a time
        if best is None or score > best[0]:
            best = (score, (a.name, b.name))
    return best[1] if best else None


def key_candidates(body: "pa.Table") -> list[tuple[str, ...]]:
    """Every key a reader could defend from the data alone: each unique key-like column, or, when
    there is none, each unique pair of key-like columns. A key question whose table has more than
    one has no single right answer."""
    cols = _profile("", body)
    single = [(c.name,) for c in cols if c.unique and _key_like(c, cols)]
    if single or body.num_rows < 2 or body.num_rows > MAX_COMPOSITE_ROWS:
        return single
    eligible = [c for c in cols if _key_like(c, cols) and len(c.distinct) >= 2
                and body.column(c.name).null_count == 0][:MAX_COMPOSITE_COLUMNS]
    return [(a.name, b.name) for a, b in combinations(eligible, 2)
            if len(a.distinct) * len(b.distinct) >= body.num_rows
            and body.select([a.name, b.name]).group_by([a.name, b.name]).aggregate([]).num_rows == body.num_rows]


def copies(a: "pa.Table", b: "pa.Table", column: str, ref_column: str) -> bool:
    """Is `a` another version of `b`, joined on `column` = `ref_column`: at least `COPIED_COLUMNS`
    shared column names besides the join's, and either the same schema (two thirds of each table's
    other columns shared: Election08 and Election16, one season's standings and another's) or most
    shared columns equal (as text, nulls alike) on `COPY_AGREEMENT` of the joined rows (a raw and a
    cleaned copy, a subset)?"""
    import pyarrow as pa
    import pyarrow.compute as pc

    shared = [c for c in a.column_names if c in b.column_names and c not in (column, ref_column)]
    if len(shared) < COPIED_COLUMNS:
        return False
    if all(3 * len(shared) >= 2 * (t.num_columns - 1) for t in (a, b)):
        return True  # one schema twice: the same things in two periods or places, not related things

    def side(body: "pa.Table", key: str, tag: str) -> "pa.Table":
        cols = {"__key": pc.cast(body.column(key), pa.string())}
        cols.update({f"{tag}{i}": pc.fill_null(pc.cast(body.column(c), pa.string()), "\0")
                     for i, c in enumerate(shared)})
        return pa.table(cols).drop_null()

    joined = side(a, column, "a").join(side(b, ref_column, "b"), "__key", join_type="inner")
    if joined.num_rows == 0:
        return False
    agreeing = sum(pc.mean(pc.cast(pc.equal(joined.column(f"a{i}"), joined.column(f"b{i}")), pa.int8())).as_py()
                   >= COPY_AGREEMENT for i in range(len(shared)))
    return agreeing * 2 > len(shared)


def infer_keys(bodies: dict[str, "pa.Table"], declared_pks: dict[str, tuple[str, ...]] | None = None,
               titles: dict[str, str] | None = None) -> tuple[list[PrimaryKey], list[ForeignKey]]:
    """Primary keys (tables without a declared one) and foreign keys between the given tables.
    `titles` (a table's documentation title) says which tables one page documents: versions of one
    dataset, which no key joins."""
    declared_pks = declared_pks or {}
    titles = {t: title.strip() for t, title in (titles or {}).items() if title and title.strip()}
    profiles = {t: _profile(t, body) for t, body in bodies.items()}
    pks: list[PrimaryKey] = []
    candidates: dict[str, list[_Column]] = {}  # columns another table may reference: unique, key-like, no time
    for table, cols in profiles.items():
        keys = sorted((c for c in cols if c.unique and _key_like(c, cols)), key=lambda c: -_pk_score(c, cols))
        candidates[table] = [c for c in keys if not c.time]
        if table in declared_pks:
            continue
        if keys and not (keys[0].time and _composite_key(table, bodies[table], cols)):
            best = keys[0]
            pks.append(PrimaryKey(table, (best.name,), "inferred", _pk_score(best, cols),
                                  f"unique and non-null in all {len(bodies[table])} rows"))
            continue
        pair = _composite_key(table, bodies[table], cols)
        if pair:
            pks.append(PrimaryKey(table, pair, "inferred", 0.7,
                                  f"({', '.join(pair)}) unique and non-null together in all {len(bodies[table])} "
                                  "rows; no single column is"))
    found: list[tuple[ForeignKey, _Column, _Column, int]] = []
    for table, cols in profiles.items():
        for c in cols:
            if (_norm(c.name) in ROW_NUMBER_NAMES or _norm(c.name) == "id" or len(c.distinct) < 2 or c.time
                    or c.measure_text):
                continue  # a bare "id" names its own rows; dates and measures relate nothing
            viable: list[tuple[float, _Column, list, str]] = []
            for ref_table, keys in candidates.items():
                if (ref_table == table or bodies[ref_table].equals(bodies[table])
                        or titles.get(table, table) == titles.get(ref_table, ref_table)):
                    continue  # a copy of a table, or another of one page's versions, is no other table
                for pk in keys:
                    found_by = _reference(c, pk)
                    if found_by is None:
                        continue
                    unmatched = _unmatched(c, pk, found_by != "values")
                    if unmatched is None:
                        continue
                    if copies(bodies[table], bodies[ref_table], c.name, pk.name):
                        continue  # one table's copy (raw and cleaned, a subset): a join asks of it twice
                    confidence = (1 - len(unmatched) / len(c.distinct)) * (1.0 if found_by != "values" else 0.75)
                    viable.append((confidence, pk, unmatched, found_by))
            chosen = _choose(viable)
            if chosen:
                confidence, pk, unmatched, found_by = chosen
                evidence = f"{len(c.distinct) - len(unmatched)} of {len(c.distinct)} distinct values found in " \
                           f"{pk.table}.{pk.name}"
                if unmatched:
                    evidence += "; not found: " + ", ".join(map(str, unmatched))
                stray = sorted((v for v in c.distinct - pk.distinct if _placeholder(v)), key=str)
                if stray:
                    evidence += "; placeholders for none: " + ", ".join(repr(v) for v in stray)
                evidence += {"name": "; names match", "table": "; the column's name names the table",
                             "values": "; found by values alone (the only key that holds them all, and no "
                                       "range of row numbers)"}[found_by]
                key = ForeignKey(table, (c.name,), pk.table, (pk.name,), "inferred", round(confidence, 3), evidence)
                found.append((key, c, pk, len(unmatched)))
    fks = _one_direction(found)
    return _link_tables(pks, fks, bodies), fks


def _reference(c: _Column, pk: _Column) -> str | None:
    """How `c` could reference `pk`, judged before the values are compared: "name" (the names
    match), "table" (the column's name names the referenced table: `verursacht_durch_schiff_id` ->
    `schiff`), "values" (nothing in the names, so only values that cannot match by chance will do),
    or None (no reference: another kind, a dense range no name points to, too few values)."""
    if pk.kind != c.kind or pk is c:
        return None
    named = _names_match(c, pk)
    mentions = _mentions_table(c, pk)
    table = _names_the_table(c, pk) or mentions
    if c.kind == "int" and not ((named and (id_like(pk.name) or id_like(c.name)))
                                or (table and (id_like(c.name) or mentions))):
        if pk.dense or len(c.distinct) < 3 or c.unique or not (id_like(c.name) and id_like(pk.name)):
            return None  # integer ranges (ages, counts, squares, 1..n) overlap by chance everywhere
        return "values"  # ids from a sparse range, named ids both: inclusion is no chance
    if pk.dense and not (table or _same_long_name(c, pk) or _ends_with_key(c, pk)):
        return None  # any numbers fall in a dense range (1..n): only a name says they are its rows
    if len(c.distinct) < 3 and not (table or (_same_long_name(c, pk) and _norm(c.name).endswith("id"))):
        return None  # two groups of a design (treated, control; No 1, 2) are no reference
    if c.unique and not named:
        return None  # a 1:1 pair (a table's own id beside another's) could point either way
    if not (named or table) and len(c.distinct) < 3:
        return None  # too little evidence
    if not _one_subject(c, pk):
        return None
    return "name" if named else "table" if table else "values"


def _unmatched(c: _Column, pk: _Column, named: bool) -> list | None:
    """The values of `c` not found in `pk` (placeholders for none aside), or None when there are too
    many: at most `MAX_UNMATCHED` and `MAX_UNMATCHED_SHARE` of them, or one stray value among ten or
    more when the names say the reference."""
    missing = c.distinct - pk.distinct
    allowed = min(MAX_UNMATCHED, MAX_UNMATCHED_SHARE * len(c.distinct))
    if named and len(c.distinct) >= 10:
        allowed = max(allowed, 1)
    unmatched = []
    for v in missing:  # stops at the first value past those allowed: two columns of years differ in thousands
        if not _placeholder(v):
            unmatched.append(v)
            if len(unmatched) > allowed:
                return None
    if len(unmatched) < len(missing) and len(c.distinct & pk.distinct) < MIN_MATCHED_BESIDE_PLACEHOLDERS:
        return None  # a flag (0, 1) is no reference: a placeholder is excused only beside real references
    return sorted(unmatched, key=str)


def _choose(viable: list[tuple[float, _Column, list, str]]) -> tuple[float, _Column, list, str] | None:
    """The key a column references: one whose name matches, else one its name mentions, else one
    found by values alone, and that only where no other table's key holds the values too (else which
    one it names is a guess)."""
    if not viable:
        return None
    strength = {"name": 2, "table": 1, "values": 0}  # names that match beat a name that mentions the table
    best = max(viable, key=lambda v: (strength[v[3]], v[0]))
    if best[3] == "values" and len(viable) > 1:
        return None
    return best


def _words(name: str) -> list[str]:
    return [_norm(w) for w in re.split(r"[^0-9a-zA-Z\u00c0-\uffff]+|(?<=[a-z])(?=[A-Z])", name) if w]


def _mentions_table(fk: _Column, pk: _Column) -> bool:
    """Is one of the column's words the referenced table's name, as one word of any language
    (`gastgebende_stadt` -> `stadt`, `aktuelle_adresse` -> `adressen`, `schiff_id` -> `schiff`)?"""
    table_words = [w for w in _words(pk.table) if len(w) >= 4]
    if len(table_words) != 1:
        return False  # a table of several words is named by them all (`_names_the_table`)
    target = table_words[0]
    stem = target[: max(4, len(target) - 2)]
    return any(len(w) >= 4 and w.startswith(stem) for w in _words(fk.name))


def _ends_with_key(fk: _Column, pk: _Column) -> bool:
    """Does the column's name end with the key's own long name (`gemeldet_von_mitarbeiter_id` ->
    `mitarbeiter_id`)? A role of the same thing."""
    a, b = _norm(fk.name), _norm(pk.name)
    return a != b and a.endswith(b) and len(b.removesuffix("id")) >= 4


def _link_tables(pks: list[PrimaryKey], fks: list[ForeignKey], bodies: dict[str, "pa.Table"]) -> list[PrimaryKey]:
    """A table whose inferred key is one of two or more foreign keys links the tables they
    reference (a pet's owner): its key is the pair of references, when that pair is unique."""
    out = []
    for key in pks:
        refs = [k.columns[0] for k in fks if k.table == key.table]
        body = bodies[key.table]
        if len(key.columns) == 1 and key.columns[0] in refs and len(refs) >= 2:
            other = next(c for c in refs if c != key.columns[0])
            pair = (key.columns[0], other) if refs.index(key.columns[0]) < refs.index(other) else (other, key.columns[0])
            if body.select(list(pair)).group_by(list(pair)).aggregate([]).num_rows == body.num_rows:
                key = PrimaryKey(key.table, pair, "inferred", 0.7,
                                 f"({', '.join(pair)}) unique together in all {body.num_rows} rows; both are "
                                 "foreign keys, so the table links the rows they reference")
        out.append(key)
    return out


def _names_the_table(fk: _Column, pk: _Column) -> bool:
    """Does the column's name say which table it references (`plot_id` -> plots)?"""
    a, target = _norm(fk.name), _singular(pk.table)
    stem = a.removesuffix("id")
    words = [_singular(w) for w in re.split(r"[^0-9a-zA-Z\u00c0-\uffff]+|(?<=[a-z])(?=[A-Z])", pk.table) if w]
    return a in (target + "id", _norm(pk.table) + "id") or len(target) >= 3 and (a.startswith(target[: max(4, len(target) - 2)]) or (len(target) >= 4 and target in a)
                                 or (len(stem) >= 3 and target.startswith(stem)) or (len(stem) >= 4 and target.endswith(stem))
                                 or any(len(w) >= 4 and stem.endswith(w) for w in words))


def _same_long_name(fk: _Column, pk: _Column) -> bool:
    """The same key name, long enough to mean something: `student_id` in both tables, where `pid`,
    `uid` or `No` of two studies are row numbers that match by construction."""
    a, b = _norm(fk.name), _norm(pk.name)
    return a == b and len(b.removesuffix("id")) >= 4


def _one_direction(found: list[tuple[ForeignKey, "_Column", "_Column", int]]) -> list[ForeignKey]:
    """Of two keys that reference each other (1:1), keep the one a reader would draw."""
    by_pair = {(k.table, k.columns, k.ref_table, k.ref_columns): (k, c, pk, missing) for k, c, pk, missing in found}
    out = []
    for k, c, pk, missing in found:
        reverse = by_pair.get((k.ref_table, k.ref_columns, k.table, k.columns))
        if reverse is not None:
            rk, rc, rpk, rmissing = reverse
            mine = (_names_the_table(c, pk), -missing, len(pk.distinct), k.ref_table)
            theirs = (_names_the_table(rc, rpk), -rmissing, len(rpk.distinct), rk.ref_table)
            if theirs > mine:
                continue
        out.append(k)
    return out

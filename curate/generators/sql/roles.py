"""Column roles for SQL templates: which columns a `num`, `cat`, `label` or `date` slot may take.

Key columns (any primary- or foreign-key column, and id-like names) take no role: summing ids
or asking for "the customer_id of ..." makes no question worth asking. A key that is the row's name
as people say it (a country's name; the synthesizer passes it on) may be a label, and a code beside a
name is not one ("Sierra Leone", not "SLE").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from curate.curation.semantics import ColumnInfo

MAX_CATEGORIES = 30  # a categorical column has at most this many distinct values...
MAX_CATEGORY_SHARE = 0.6  # ...and repeats: distinct values are at most this share of its rows
MAX_LABEL_CHARS = 60  # ...and short enough to be an answer
# R's rownames (a row number); standard codes of states and countries (ICPSR, FIPS, COW), no measures
_ID_LIKE = re.compile(r"(^|_)u?id$|[a-z]Id$|ID$|^rownames$|^Unnamed: \d+$|^(?i:icpsr|fips|ccode|cowcode|iso_?num)$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
# a label names a row as a reader would ("the supplier "Oren""); a number or an amount does not
# ("the product supplier "15752.45"", a price stored as text)
_NUMBER_TEXT = re.compile(r"^\s*[-+]?[$€£]?\s*\d[\d.,\s]*%?\s*$")
_AMOUNT_NAME = re.compile(r"(^|[^a-z])(price|amount|cost|total|sum|salary|value|balance|revenue|fee)s?($|[^a-z])"
                          r"|betrag|preis|kosten|summe|gehalt|saldo|umsatz|gebühr")  # German: in compounds too
_YEAR_NAME = re.compile(r"(^|_)(year|yr|jahr|season)s?($|_)", re.IGNORECASE)


def column_roles(body: "pa.Table", key_columns: set[str]) -> dict[str, list[str]]:
    """Role -> column names, in the table's column order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    roles: dict[str, list[str]] = {"num": [], "cat": [], "label": [], "date": []}
    rows = body.num_rows
    if rows == 0:
        return roles
    for name, column in zip(body.column_names, body.columns):
        if name in key_columns or _ID_LIKE.search(name):
            continue
        kind = column.type
        valid = column.drop_null()
        if len(valid) < 2:
            continue
        distinct = len(pc.unique(valid))
        if pa.types.is_boolean(kind):
            continue  # engines disagree on how to print them (true vs 1)
        if pa.types.is_date(kind):
            roles["date"].append(name)
        elif pa.types.is_integer(kind) or pa.types.is_floating(kind):
            if pa.types.is_floating(kind):
                finite = pc.is_finite(valid)
                if not pc.all(finite).as_py():
                    continue  # inf/nan compare differently across engines
            if pa.types.is_integer(kind) and (_YEAR_NAME.search(name) or _all_years(valid)):
                roles["date"].append(name)  # a year orders and compares like a date; its sum means nothing
            elif pa.types.is_integer(kind) and distinct <= 12 and distinct <= MAX_CATEGORY_SHARE * rows:
                roles["cat"].append(name)
            elif distinct >= 3:
                roles["num"].append(name)
        elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
            sample = valid.slice(0, 20).to_pylist()
            if all(_ISO_DATE.match(v) for v in sample):
                roles["date"].append(name)
            elif 2 <= distinct <= MAX_CATEGORIES and distinct <= MAX_CATEGORY_SHARE * rows:
                roles["cat"].append(name)
            elif distinct == len(valid) and distinct >= 3:  # a label names one row: "sp." of six genera does not
                longest = pc.max(pc.utf8_length(valid)).as_py() or 0
                if longest <= MAX_LABEL_CHARS and not _names_no_row(name, sample):
                    roles["label"].append(name)
    names = [c for c in roles["label"] if not is_code(body.column(c))]
    if names:  # "Sierra Leone", not the country with code "SLE": a code names a row only where nothing else does
        roles["label"] = names
    return roles


def is_code(values: "pa.ChunkedArray") -> bool:
    """Are the values codes (ISO "SLE", "USA"): capitals and digits, no space, all of one length, at most 4?"""
    import pyarrow.compute as pc

    valid = values.drop_null()
    lengths = pc.utf8_length(valid)
    low, high = pc.min_max(lengths).values()
    return high.as_py() is not None and low.as_py() == high.as_py() <= 4 \
        and pc.all(pc.match_substring_regex(valid, r"^[A-Z0-9]+$")).as_py()


def summable(column: str, info: "ColumnInfo | None") -> bool:
    """May a SUM add this measure up? Counts and amounts (hits, votes, dollars) add up to a whole;
    a height, a rate, a year or an average does not ("the total height in inches of the players").
    The words are the rule generator's (`rules.profile.additive`), so one rule says it for both."""
    from curate.curation.semantics import COUNT
    from curate.generators.rules.profile import ADDITIVE, NOT_ADDITIVE

    if info is not None and info.role == COUNT:
        return True
    words = " ".join(filter(None, (re.sub(r"([a-z])([A-Z])", r"\1 \2", column).replace("_", " ").replace(".", " "),
                                   info.label if info else "", info.unit if info else "")))
    return bool(ADDITIVE.search(words)) and not NOT_ADDITIVE.search(words)


# a birth or a death: a person's life event, whose month, day or place of death nobody groups people by
_LIFE_EVENT = re.compile(r"birth|death|born|died|(^|_)dob($|_)", re.IGNORECASE)
_MONTH_NAME = re.compile(r"month|(^|_)mon($|_)|monat", re.IGNORECASE)


def life_detail(column: str, info: "ColumnInfo | None") -> bool:
    """Is the column the month or the day of a birth or a death (Lahman's `birthMonth`, "month of birth"),
    or the place of a death (`deathCountry`)? "The average salary of players born in June", "the stints of
    players who died at sea" are trivia, not questions about a group (where one was born is one)."""
    words = f"{column} {info.label if info is not None else ''}"
    if not _LIFE_EVENT.search(words):
        return False
    return re.search(r"month|day", words, re.IGNORECASE) is not None \
        or re.search(r"death|died", words, re.IGNORECASE) is not None \
        and re.search(r"country|state|city|place", words, re.IGNORECASE) is not None


def is_month(column: str, info: "ColumnInfo | None", values: "pa.ChunkedArray") -> bool:
    """Is the column a month written as a number: its name or label says month, its values are 1 to 12?
    A question says the month's name ("flights in March"), not "month 3"."""
    import pyarrow as pa

    if not _MONTH_NAME.search(f"{column} {info.label if info is not None else ''}") or not pa.types.is_integer(values.type):
        return False
    present = set(values.drop_null().unique().to_pylist())
    return bool(present) and present <= set(range(1, 13))


def _names_no_row(name: str, sample: list[str]) -> bool:
    """Is a text column of distinct values a number or an amount, not a name a reader calls a row by?"""
    numeric = sum(bool(_NUMBER_TEXT.match(v)) for v in sample)
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower()  # "unitPrice": unit price
    return bool(_AMOUNT_NAME.search(words)) or numeric * 2 > len(sample)


def _all_years(values: "pa.Array") -> bool:
    import pyarrow.compute as pc

    low, high = pc.min_max(values).values()
    return 1800 <= low.as_py() and high.as_py() <= 2100

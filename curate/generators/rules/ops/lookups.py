"""Questions that find a cell or a row: a cell by row and column (`lookup`), the row that holds a
value found in no other row (`reverse_lookup`), a cell by the row key typed as a user types it
(`fuzzy_lookup`), and the rows a condition picks out (`select`)."""

from __future__ import annotations

import re

import numpy as np

from curate.generators.rules.engine import Context, table_masks, value_type
from curate.generators.rules.ops import op
from curate.generators.rules.profile import show

NUMBERISH = re.compile(r"[\d\s,.;:/+-]+")


@op("lookup", params=())
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
        value = p.cell(r, column)
        ctx.emit({"key_column": p.key, "key": show(key), "row": p.row_name(key), "column": column},
                 value, spec=spec, answer_type=value_type(p, column), decimals=shown_decimals(value))


def shown_decimals(value: object) -> int | None:
    """2 for a computed value a sheet shows rounded (3.91052122067465, stored with its float's noise;
    more below 0.1, so three figures stay): the gold is stated as a reader sees it and the question says
    so; None for a value written as it is."""
    if not isinstance(value, float) or not np.isfinite(value) or value == 0:
        return None
    text = repr(value)
    if "e" in text or len(text.partition(".")[2]) <= 6:
        return None
    return max(2, 2 - int(np.floor(np.log10(abs(value)))))


@op("reverse_lookup", params=())
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
        # "general" is not the only "General": a reader matches a word, not its case (the program would)
        codes = np.unique(np.array([" ".join(str(v).split()).casefold() for v in values[present]])
                          if values.dtype == object else values[present], return_inverse=True, return_counts=True)
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
    """A name as a user types it: lower case, punctuation dropped, single spaces ("honda civic"); what
    the program's SQL compares (ASCII letters and digits: lowering and letter classes beyond them differ
    between DuckDB and Python, as Greek's final sigma and Turkish's dotted I do)."""
    kept = "".join(ch for ch in text if ch == " " or (ch.isascii() and ch.isalnum()))
    return " ".join(kept.split()).lower()


MARKUP = re.compile(r"[\\{}<>]")  # a LaTeX command or an HTML tag in a row label: not a name anyone types


def _loses_letters(text: str) -> bool:
    """Whether typing the name so would drop letters: "San Martín" is not "san martn"."""
    return any(ch.isalnum() and not ch.isascii() for ch in text)


@op("fuzzy_lookup", params=())
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
        if not n or counts[n] > 1:  # counted over every key as the SQL sees it: "Zürich" is "zrich" too
            ctx.reject("normalised_key_not_unique", len(cols))
            continue
        if _loses_letters(p.keys[r]):
            ctx.reject("letters_beyond_ascii", len(cols))
            continue
        if MARKUP.search(p.keys[r]):  # "\cite{HSAuR:Elwoodetal1974}" typed as "citehsaurelwoodetal1974" names nothing
            ctx.reject("markup_in_key", len(cols))
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


@op("select", params=("conditions", "max_rows"))
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

"""Why two answers differ: in writing only ("1,062" and "1062" are one number) or in value (11 and 12 are
two). The audit's vote groups candidates and compares them with the gold under this one equivalence, so a
gold that is only written differently is never called wrong.

`difference(gold, answer, context)` -> (kind, reasons): `same` (equal up to trivial spelling: "2.0" and "2"),
`format` (one answer written differently: a thousands separator, a percent sign or a percent written as a
fraction ("45%" and 0.45), a unit or scale word on one side only ("12 km" and 12, "1.5 million" and 1500000),
letter case, spacing, a full-width list comma, rounding stated on one side only (the finer number rounded half
away from zero, or cut, gives the coarser: 18.33 and 18.3, never 18.01 and 19), a sign where the table writes
none, the column's name added to a cell value, a comparison stated as a word where the other gives the
difference: "higher" and "202.5"),
`items` (some items in common, some missing or extra) or `value`. Built on
`curation.answers` (normalize_answer, Equivalence), the rule every metric and judge applies.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from curate.curation.answers import Equivalence, normalize_answer, round_number, split_list

SAME, FORMAT, ITEMS, VALUE = "same", "format", "items", "value"
_DECIMALS = re.compile(r"\.(\d+)\s*%?\s*$")
_WORD = re.compile(r"[^\W_]+")
# a comparison stated as a word: its direction, which the sign of a difference states too ("higher" and +202.5)
_ABOVE = frozenset({"higher", "more", "greater", "larger", "bigger", "above", "increase", "increased", "higher than"})
_BELOW = frozenset({"lower", "less", "fewer", "smaller", "below", "decrease", "decreased", "lower than"})
_EXACT = Equivalence()


@dataclass(frozen=True)
class Context:
    """What the table says about writing: the words of its column names (a gold may add them to a cell
    value: "Series Three" for the cell "three"), and whether any cell holds a negative number (where none
    does, a sign is something the table never wrote: "-36.2" and "36.2" are one answer)."""

    header_words: frozenset[str] = frozenset()
    signed: bool = True


def context_of(columns: list[str], rows: list[list[Any]] | list[dict[str, Any]]) -> Context:
    words = frozenset(w for c in columns for w in _WORD.findall(str(c).lower()))
    cells = (c for r in rows for c in (r.values() if isinstance(r, dict) else r))
    signed = any(isinstance(v := normalize_answer(c), float) and v < 0 for c in cells
                 if isinstance(c, (int, float, str)) and not isinstance(c, bool))
    return Context(words, signed)


def parts(answer: Any) -> list[Any]:
    """An answer as its items: a list as it is (nested lists flattened), a text split at ", " (TableBench
    writes some with a full-width comma), one value otherwise."""
    if isinstance(answer, (list, tuple)):
        return [p for a in answer for p in (parts(a) if isinstance(a, (list, tuple)) else [a])]
    if isinstance(answer, str):
        split = split_list(answer.replace("，", ", ").strip())
        return split if isinstance(split, list) else [split]
    return [answer]


def _decimals(raw: Any) -> int:
    """Decimals an answer states ("4.70": 1, its trailing zero says nothing; 3209008: 0)."""
    if isinstance(raw, float):
        return 0 if raw.is_integer() else len(repr(raw).split(".")[1].split("e")[0])
    m = _DECIMALS.search(str(raw))
    return len(m.group(1).rstrip("0")) if m else 0


def _near(g: float, a: float, gold: Any, answer: Any) -> str | None:
    """None when two numbers differ; "" when equal; why, when the more precise one rounded (half away from zero)
    or cut to the coarser writing gives the other (18.33 and 18.3; 3209008.86 and 3209008), or one is the other
    as a percent written as a fraction ("45%" and 0.45)."""
    if _EXACT.same(a, g):
        return ""
    dg, da = _decimals(gold), _decimals(answer)
    if dg != da:
        coarse, fine, places = (g, a, dg) if dg < da else (a, g, da)
        if coarse == round_number(fine, places) or coarse == math.trunc(fine * 10 ** places) / 10 ** places:
            return f"rounding (the gold states {dg} decimals, the answer {da})"
    for percent, fraction, raw in ((g, a, gold), (a, g, answer)):
        if str(raw).strip().endswith("%") and percent != 0 and \
                _near(percent / 100, fraction, _shift(raw), fraction if raw is gold else gold) == "":
            return "a percent written as a fraction"
    return None


def _shift(percent: Any) -> str:
    """A percent's writing as a fraction: "45.5%" states 3 decimals as 0.455."""
    return "0." + "0" * (_decimals(percent) + 2) if _decimals(percent) + 2 else "0"


_UNIT = re.compile(r"^\s*(?P<pre>[$€£¥])?\s*(?P<num>[-+]?[\d.,]*\d%?)\s*(?P<unit>[^\W\d_][^\d]{0,24})?\s*$")
_SCALE = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9,
          "trillion": 1e12}


def _with_unit(text: Any) -> tuple[float, str, float] | None:
    """A number written with a unit or a currency sign ("12 km", "$1,062", "1.5 million"): (the number, the unit,
    the scale its word says); None for a plain number or anything else."""
    m = _UNIT.match(str(text)) if isinstance(text, str) else None
    if not m or not (m.group("pre") or m.group("unit")):
        return None
    number = normalize_answer(m.group("num"))
    if not isinstance(number, float):
        return None
    unit = " ".join(filter(None, (m.group("pre"), (m.group("unit") or "").strip().lower())))
    return number, unit, _SCALE.get((m.group("unit") or "").strip().lower().rstrip("s"), 1.0)


def _unit_difference(gold: Any, answer: Any, ctx: Context) -> str | None:
    """Why a number with a unit and the bare number are one answer ("12 km" and 12; "1.5 million" and 1500000:
    the unit or scale word written on one side only), None when they are not. A unit is a currency sign, a
    scale word, or words the table's column names hold ("km" of "distance (km)"): "1982 Limerick" is no 1982."""
    for with_unit, bare, raw in ((gold, answer, answer), (answer, gold, gold)):
        said, plain_number = _with_unit(with_unit), normalize_answer(bare)
        if said is None or not isinstance(plain_number, float) or _with_unit(bare) is not None:
            continue
        number, unit, scale = said
        words = _WORD.findall(unit)
        if scale == 1.0 and not (set(unit) & set("$€£¥")) and not (words and set(words) <= ctx.header_words):
            continue
        for value in {number, number * scale}:
            near = _near(plain_number, value, raw, str(number) if value == number else repr(value))
            if near is not None:
                return ", ".join(filter(None, [f"a unit written on one side only ({unit})", near]))
    return None


def close(gold: Any, answer: Any, rel_tol: float) -> bool:
    """Every number of the gold within `rel_tol` of the answer's, item by item in order, and the texts the same:
    how near a forecast must be to count as the same forecast by another method (`audit_vote.FORECAST_TOLERANCE`)."""
    gp, ap = parts(gold), parts(answer)
    if len(gp) != len(ap):
        return False
    for g, a in zip(gp, ap):
        ng, na = normalize_answer(g), normalize_answer(a)
        if isinstance(ng, float) and isinstance(na, float):
            if abs(ng - na) > rel_tol * max(abs(na), 1e-12):
                return False
        elif item_difference(g, a)[0] not in (SAME, FORMAT):
            return False
    return True


def _direction(word: Any, number: Any) -> str | None:
    """Why a comparison word and a difference are one answer ("higher" and 202.5: the difference states the
    direction and its size), None when they are not (the sign says the other direction, or no comparison)."""
    if not isinstance(word, str) or not isinstance(number, float) or number == 0:
        return None
    if (word in _ABOVE and number > 0) or (word in _BELOW and number < 0):
        return f"a comparison stated as a word ({word!r}) where the other gives the difference"
    return None


def item_difference(gold: Any, answer: Any, ctx: Context = Context()) -> tuple[str, str]:
    """One item against one item: (same | format | value, why)."""
    g, a = normalize_answer(gold), normalize_answer(answer)
    written_g, written_a = str(gold).strip(), str(answer).strip()
    compared = _direction(g, a) or _direction(a, g) or _unit_difference(gold, answer, ctx)
    if compared:
        return FORMAT, compared
    if isinstance(g, float) and isinstance(a, float):
        reasons = []
        if ("," in written_g) != ("," in written_a):
            reasons.append("thousands separator")
        if written_g.endswith("%") != written_a.endswith("%"):
            reasons.append("percent sign")
        near = _near(g, a, gold, answer)
        if near is None and g != 0 and (a < 0) != (g < 0):
            near = _near(g, -a, gold, str(answer).replace("-", "", 1))
            if near is not None:
                if ctx.signed:
                    return VALUE, f"{written_g} and {written_a} differ in sign, and the table writes signs"
                reasons.append("sign (the table writes no negative number)")
        if near is None:
            return VALUE, f"{written_g} is not {written_a}"
        reasons += [near] if near else []
        return (FORMAT, ", ".join(reasons)) if reasons else (SAME, "")
    if _EXACT.same(a, g):
        if written_g != written_a and written_g.lower() == written_a.lower():
            return FORMAT, "letter case"
        return SAME, ""
    if isinstance(g, str) and isinstance(a, str):
        if re.sub(r"\s+", "", g) == re.sub(r"\s+", "", a):
            return FORMAT, "spacing"
        tg, ta = _WORD.findall(g), _WORD.findall(a)
        for longer, shorter, who in ((tg, ta, "the gold"), (ta, tg, "the answer")):
            extra = list(longer)
            if shorter and all(w in extra and not extra.remove(w) for w in shorter) \
                    and extra and all(w in ctx.header_words for w in extra):
                return FORMAT, f"{who} adds the column's name ({' '.join(extra)})"
    return VALUE, f"{written_g!r} is not {written_a!r}"


def difference(gold: Any, answer: Any, ctx: Context = Context()) -> tuple[str, list[str]]:
    """The gold against an answer, item by item in any order: (same | format | items | value, reasons)."""
    if not isinstance(gold, (list, tuple)) and not isinstance(answer, (list, tuple)):
        kind, why = item_difference(gold, answer, ctx)
        if kind != VALUE:
            return kind, [why] if why else []
    gp, ap = parts(gold), parts(answer)
    rest, reasons, unmatched = list(ap), [], []
    for g in gp:
        judged = [(i, item_difference(g, x, ctx)) for i, x in enumerate(rest)]
        best = next((j for kind in (SAME, FORMAT) for j in judged if j[1][0] == kind), None)
        if best is None:
            unmatched.append(g)
            continue
        if best[1][0] == FORMAT:
            reasons.append(best[1][1])
        del rest[best[0]]
    if not unmatched and not rest:
        if len(gp) > 1 and isinstance(gold, str) and "，" in gold:
            reasons.append("list separator")
        reasons = list(dict.fromkeys(r for r in reasons if r))
        return (FORMAT if reasons else SAME), reasons
    if len(gp) != len(ap) and (not unmatched or not rest):
        common = len(gp) - len(unmatched)
        return ITEMS, [f"the gold has {len(gp)} items, the answer {len(ap)}, {common} in common"]
    if rest:
        return VALUE, [item_difference(unmatched[0], rest[0], ctx)[1]]
    return VALUE, [f"{unmatched[0]!r} is not in the answer"]


def same_answer(a: Any, b: Any, ctx: Context = Context()) -> bool:
    """One answer, however written (`same` or `format`): how the vote groups candidates."""
    return difference(a, b, ctx)[0] in (SAME, FORMAT)

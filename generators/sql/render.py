"""Deterministic English for SQL questions: template phrasings filled with readable labels.

`customer_orders` reads "customer orders", `MplsStops` reads "mpls stops"; string values are
quoted, numbers are written plainly. An LLM rephrasing step can replace this text later; this
rendering is the default, and never shows SQL or raw identifiers.
"""

from __future__ import annotations

import re
from typing import Any

_PLACEHOLDER = re.compile(r"\{([^}]*)\}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])")
_ARTICLE = re.compile(r"\b([Aa]n?) (?=(\"?)(\w))")


def label(name: str) -> str:
    """An identifier as words: underscores and camel case split, lower case unless an acronym."""
    words = _CAMEL.sub(" ", name.replace("_", " ").replace(".", " ")).split()
    return " ".join(w if (w.isupper() and len(w) > 1) else w.lower() for w in words) or name


def value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    if isinstance(value, int):
        return str(value)
    return f'"{value}"'


def render(text: str, tables: dict[str, str], columns: dict[str, str], values: dict[str, Any]) -> str:
    """Fill `{A}` (a table), `{a.num}` (a column slot) and `{v}` (a value)."""
    def fill(match: re.Match) -> str:
        ref = match.group(1)
        if ref in tables:
            return label(tables[ref])
        if ref in columns:
            return label(columns[ref])
        if ref in values:
            return value_text(values[ref])
        raise KeyError(ref)

    out = _ARTICLE.sub(_article, _PLACEHOLDER.sub(fill, text))
    return out[:1].upper() + out[1:]


UNNAMED_TABLES = {"A": ("record", "records"), "B": ("related record", "related records"),
                  "C": ("record linked to those", "records linked to those")}


def without_table_names(text: str) -> str:
    """A template's question with its tables unnamed, as MMQA's retrieval questions read: "{A}
    entries" -> "records", "{B} entry" -> "related record". The columns and values it names are what
    point to the tables."""
    for letter, (one, many) in UNNAMED_TABLES.items():
        text = text.replace(f"{{{letter}}} entries", many).replace(f"{{{letter}}} entry", one)
        text = text.replace(f"{{{letter}}}", many)
    return text


def _article(match: re.Match) -> str:
    """"a"/"an" by the sound of the next word's first letter (a filled label may change it)."""
    word = match.group(1)
    an = match.group(3).lower() in "aeiou"
    fixed = ("an" if an else "a") if word.islower() else ("An" if an else "A")
    return fixed + " "

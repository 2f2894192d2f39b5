"""The column key shown under a table: what each header stands for, from the table's documentation.

A question names a column by what it means ("wins", "wild card berth") and a reader finds the
header that meaning stands for (`W`, `WCWin`) in the key, as BIRD gives its SQL questions the
database's column descriptions. Without it, a question has to paste the header beside the label
("wild card berth (`WCWin`)"), which no person writes. One rule serves both sides: every prompt
that shows a table shows its key (`curate evaluate`, and each model role of a build), and a
generator names a column by its label alone only where `keyed_columns` says the key lists it.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # pragma: no cover
    from curate.curation.semantics import ColumnInfo

MAX_ENTRIES = 60  # lines of a key (Lahman's Teams has 48 documented columns)
MAX_LABEL = 160  # characters of one label


def _bare(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def entries(infos: Iterable["ColumnInfo"], columns: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """(header, label) for each of the table's `columns`, in their order, whose documented label says
    more than the header ("W" -> "wins"; not "year" -> "Year"). Only columns the table shows: a
    copy whose headers were hidden for a naming question must not have them told back."""
    labels = {info.name: " ".join(info.label.split()) for info in infos if info.label and info.label.strip()}
    out = []
    for column in columns:
        label = labels.get(column, "")
        if label and _bare(label) != _bare(column):
            out.append((column, label if len(label) <= MAX_LABEL else label[:MAX_LABEL - 3] + "..."))
    return tuple(out[:MAX_ENTRIES])


def keyed_columns(infos: Iterable["ColumnInfo"], columns: Iterable[str]) -> frozenset[str]:
    """The columns a question may name by their label alone: those the key of a table with these
    `columns` lists, where no other column there has the same label (`pop_2018` and `pop_2030`
    both "population": the header must be said). Computed once per table."""
    listed = [(column, _bare(label)) for column, label in entries(infos, columns)]
    counts = Counter(label for _, label in listed)
    return frozenset(column for column, label in listed if counts[label] == 1)


def key_text(pairs: Iterable[tuple[str, str]]) -> str:
    """The key as a prompt shows it under its table ("" for none)."""
    lines = [f"- {column}: {label}" for column, label in pairs]
    return "\nColumn key:\n" + "\n".join(lines) if lines else ""

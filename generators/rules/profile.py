"""What the templates need to know about one table, computed once: column roles and conditions.

Columns are typed by what questions they can carry: a *key* (unique values that name a row),
*numeric* measures, *categorical* columns (few distinct values, good for conditions and groups),
and a *time* axis (unique years, for growth rates). Rows and columns that cleaning marked as
summaries, empty or constant are left out, so no question counts a "Total" row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa

from curation.answers import plain
from curation.programs import data_view
from curation.programs.chain import Frame, condition_mask, frame_from_arrow
from curation.table import Table

ID_NAME = re.compile(r"(^|[^a-z])(id|ids|index|idx|no|nr|num|code|key|obs|row|rownames|case|subject)$", re.I)
TIME_NAME = re.compile(r"^(year|yr|years|time|date|period|season)$", re.I)
MAX_CATEGORIES = 12
MAX_EXACT = 2.0 ** 53
WORDS = {"==": "is", "!=": "is not", ">": "is greater than", ">=": "is at least", "<": "is less than", "<=": "is at most"}


@dataclass(frozen=True, slots=True)
class Condition:
    """One row condition: `column op value`, with its row mask and its English phrase."""

    column: str
    op: str  # == != > >= < <=
    value: Any
    mask: np.ndarray = field(compare=False, repr=False)

    def phrase(self) -> str:
        return f"{self.column} {WORDS[self.op]} {show(self.value)}"

    def triple(self) -> list[Any]:
        return [self.column, self.op, self.value]


def show(value: Any) -> str:
    """A value as a question writes it: 6 not 6.0, 0.1 not 0.1000000000000000055."""
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)


class TableProfile:
    def __init__(self, table: Table) -> None:
        self.table = table
        self.view = data_view(table)
        self.frame: Frame = frame_from_arrow(self.view)
        self.n_rows = self.view.num_rows
        self.text_columns = {f.name for f in self.view.schema if pa.types.is_string(f.type)}
        self.date_columns = {f.name for f in self.view.schema if pa.types.is_date(f.type) or pa.types.is_timestamp(f.type)}
        excluded = set(table.summary_columns) | set(table.empty_columns) | set(table.constant_columns)
        # SQL identifiers ignore case: "IOD" and "iod" cannot both be named in a program
        folded = [c.casefold() for c in table.columns]
        excluded |= {i for i, f in enumerate(folded) if folded.count(f) > 1}
        self.usable = [c for i, c in enumerate(table.columns) if i not in excluded]
        self.key = self._find_key()
        self.time = self._find_time()
        self.numeric = [c for c in self.usable if self._is_measure(c)]
        self.categorical = [c for c in self.usable if c != self.key and self._is_categorical(c)]
        self.dates = [c for c in self.usable if c in self.date_columns and c != self.key]

    # -- column roles -----------------------------------------------------------------------
    def present(self, column: str) -> np.ndarray:
        v = self.frame[column]
        if v.dtype == object:
            return np.array([x is not None for x in v], dtype=bool)
        if v.dtype.kind == "f":
            return np.isfinite(v)  # infinities are no answer anyone can check by eye
        return np.ones(len(v), dtype=bool)

    def _unique(self, column: str) -> bool:
        v = self.frame[column]
        if not self.present(column).all():
            return False
        return len(set(v.tolist())) == len(v)

    def _find_key(self) -> str | None:
        """A column whose values name rows: unique text first (`rownames` preferred), then ids."""
        text = [c for c in self.usable if self.frame[c].dtype == object and self._unique(c)
                and all(isinstance(x, str) and x.strip() for x in self.frame[c])]
        text.sort(key=lambda c: (c != "rownames", self.table.columns.index(c)))
        if text:
            return text[0]
        if "rownames" in self.usable and self.frame["rownames"].dtype.kind == "i" and self._unique("rownames"):
            return "rownames"
        return None

    def _find_time(self) -> str | None:
        for c in self.usable:
            v = self.frame[c]
            if TIME_NAME.match(c) and v.dtype.kind in "if" and self._unique(c) and self.n_rows >= 3:
                x = v.astype(np.float64)
                if np.all(x == np.round(x)) and x.min() >= 1000 and x.max() <= 2200:
                    return c
        return None

    def row_name(self, key: Any) -> str:
        """A row as a question names it: "Mazda RX4", or "row 12" for a numeric row label."""
        if isinstance(key, str):
            return key
        return f"row {show(key)}" if self.key == "rownames" else f"the row with {self.key} {show(key)}"

    def _is_measure(self, column: str) -> bool:
        v = self.frame[column]
        if v.dtype.kind not in "if" or column in (self.key, self.time) or column == "rownames":
            return False
        if TIME_NAME.match(column):  # a sum of years means nothing
            return False
        if v.dtype.kind == "f" and np.isinf(v).any():
            return False
        x = v[self.present(column)].astype(np.float64)
        if len(x) < 2 or np.all(x == x[0]) or np.abs(x).max() >= MAX_EXACT:
            return False
        if v.dtype.kind == "i" and ID_NAME.search(column) and len(np.unique(x)) == len(x):
            return False  # an identifier, not a measure
        return True

    def _is_categorical(self, column: str) -> bool:
        if column in self.date_columns:
            return False
        v = self.frame[column]
        present = self.present(column)
        if present.sum() < 4 or v.dtype.kind == "f":
            return False
        if v.dtype == object and not all(isinstance(x, str) for x in v[present]):
            return False
        distinct = len(set(v[present].tolist()))
        return 2 <= distinct <= min(MAX_CATEGORIES, present.sum() // 2)

    # -- values -------------------------------------------------------------------------
    @cached_property
    def matrix(self) -> np.ndarray:
        """The numeric columns as one float matrix (rows x columns), NaN where missing."""
        if not self.numeric:
            return np.zeros((self.n_rows, 0))
        return np.column_stack([self.frame[c].astype(np.float64) for c in self.numeric])

    def is_int(self, column: str) -> bool:
        return self.frame[column].dtype.kind == "i"

    def cell(self, row: int, column: str) -> Any:
        cache = self.__dict__.setdefault("_plain_columns", {})
        values = cache.get(column)
        if values is None:
            array = self.frame[column]
            values = array.tolist()  # Python ints, floats and strings already
            if array.dtype.kind == "f":
                values = [None if v != v else v for v in values]
            cache[column] = values
        return values[row]

    @cached_property
    def keys(self) -> list[Any]:
        return [plain(v) for v in self.frame[self.key]] if self.key else []

    def categories(self, column: str) -> list[tuple[Any, int]]:
        """(value, count) for each value of a categorical column, most frequent first, then by value."""
        cache = self.__dict__.setdefault("_category_counts", {})
        if column not in cache:
            cache[column] = self._categories(column)
        return cache[column]

    def _categories(self, column: str) -> list[tuple[Any, int]]:
        v = self.frame[column][self.present(column)].tolist()
        counts: dict[Any, int] = {}
        for x in v:
            counts[x] = counts.get(x, 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))

    # -- conditions ---------------------------------------------------------------------
    def mask(self, column: str, op: str, value: Any) -> np.ndarray:
        """The rows where `column op value` holds: the chain interpreter's own test, so a
        condition means the same in generation and in a re-run chain."""
        return self.present(column) & condition_mask(self.frame, column, op, value)

    def conditions(self, rng: np.random.Generator, limit: int) -> list[Condition]:
        """Single-column conditions that keep some rows but not all, chosen at random."""
        out: list[Condition] = []
        for c in self.categorical:
            values = [(v, n) for v, n in self.categories(c) if n < self.n_rows]
            for value, _ in values[:6]:
                out.append(Condition(c, "==", value, self.mask(c, "==", value)))
        for c in self.numeric:
            ordered = np.sort(self.frame[c][self.present(c)])
            for q in (0.25, 0.5, 0.75):
                threshold = plain(ordered[int(q * (len(ordered) - 1))])
                for op in (">", "<"):
                    mask = self.mask(c, op, threshold)
                    if 0 < mask.sum() < self.n_rows:
                        out.append(Condition(c, op, threshold, mask))
        unique: dict[tuple, Condition] = {}
        for cond in out:
            unique.setdefault((cond.column, cond.op, cond.value), cond)
        out = list(unique.values())
        if len(out) > limit:
            out = [out[i] for i in sorted(rng.choice(len(out), size=limit, replace=False))]
        return out

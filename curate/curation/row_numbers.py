"""A column that numbers the rows: a rule about values alone, shared by the column roles
(`semantics`) and the arithmetic structure (`arithmetic`), which reads the roles' inputs: here so that
neither imports the other for it."""

from __future__ import annotations

from typing import Any


def numbers_the_rows(values: list[Any], at_least: int = 5) -> bool:
    """A column whose values run 1, 2, 3 ... down the rows in order (blank rows skipped, at most
    one in ten), `at_least` of them: it numbers the rows (pump 1 to pump 13, a form's line numbers),
    it measures nothing. Fewer values say so only where the header says it too (`semantics`)."""
    present = [v for v in values if v is not None and not (isinstance(v, float) and v != v)]
    return len(present) >= at_least and 10 * len(present) >= 9 * len(values) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in present) and present == list(range(1, len(present) + 1))

"""Answers the same as the gold: `curate.curation.answers.Equivalence` asked, numbers relative to the gold."""

from __future__ import annotations

from typing import Any

from curate.curation.answers import Equivalence
from curate.evaluation.metrics import Score, metric


def _matches(prediction: Any, gold: Any, rel_tol: float) -> bool:
    """The one answer equivalence (`curate.curation.answers.Equivalence`), numbers within `rel_tol` of the gold."""
    return Equivalence(rel_tol=rel_tol).same(prediction, gold)


@metric("exact_match")
def exact_match(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    return Score(float(_matches(prediction, gold, 0.0)))


@metric("numeric_match")
def numeric_match(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    rel_tol = float(context.get("rel_tol", 0.01))
    return Score(float(_matches(prediction, gold, rel_tol)), {"rel_tol": rel_tol})


@metric("tolerance_10pct")
def tolerance_10pct(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    return Score(float(_matches(prediction, gold, 0.10)), {"rel_tol": 0.10})

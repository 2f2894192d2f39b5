"""Answers as sets of items: F1, the share of the gold's items found, MMQA's key selection."""

from __future__ import annotations

from collections import Counter
from typing import Any

from curate.evaluation.metrics import Score, answer_items, answer_keys, metric


@metric("set_f1")
def set_f1(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    p, g = set(answer_keys(prediction)), set(answer_keys(gold))
    if not p or not g:
        return Score(float(p == g))
    common = len(p & g)
    if not common:
        return Score(0.0, {"precision": 0.0, "recall": 0.0})
    precision, recall = common / len(p), common / len(g)
    return Score(2 * precision * recall / (precision + recall), {"precision": precision, "recall": recall})


@metric("partial_match")
def partial_match(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    p, g = Counter(answer_keys(prediction)), Counter(answer_keys(gold))
    return Score(sum((p & g).values()) / max(1, sum(g.values())))


_QUOTES = str.maketrans("", "", "`\"'[] ")


def _key_name(value: Any) -> str:
    """"Orders.`customer_id`" -> "orders.customer_id"; a foreign key "a.x → b.y" -> "a.x->b.y"."""
    return str(value).replace("→", "->").translate(_QUOTES).lower()


@metric("key_selection")
def key_selection(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    """1 when the predicted keys are exactly the gold's: primary keys as table.column, foreign keys as
    table.column -> table.column."""
    p = {_key_name(x) for x in answer_items(prediction)}
    g = {_key_name(x) for x in answer_items(gold)}
    common = len(p & g)
    precision, recall = (common / len(p) if p else 0.0), (common / len(g) if g else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if common else 0.0
    return Score(float(p == g), {"precision": precision, "recall": recall, "f1": f1})

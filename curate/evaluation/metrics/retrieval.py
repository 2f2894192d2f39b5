"""Retrieval: precision, recall and F1 of the first K items (K: the task's `metric_settings`)."""

from __future__ import annotations

from typing import Any

from curate.evaluation.metrics import Score, answer_keys, metric


@metric("retrieval_prf_at_k")
def retrieval_prf_at_k(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    k = int(context.get("k", 5))
    ranked = []
    for item in answer_keys(prediction):
        if item not in ranked:
            ranked.append(item)
    top = ranked[:k]
    relevant = set(answer_keys(gold))
    hits = sum(1 for x in top if x in relevant)
    precision = hits / len(top) if top else 0.0
    recall = hits / len(relevant) if relevant else 0.0
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return Score(f1, {"k": k, "precision": precision, "recall": recall})

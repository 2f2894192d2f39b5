"""PASS@1 of a drawn chart (RealHiTBench's CG tasks, TableBench's chart metric): the same kind of
chart (`curate.evaluation.charts.chart_kind`) showing the same y values as a sorted multiset, to 1% or 0.01;
a pie by shares of its total."""

from __future__ import annotations

import math
from typing import Any

from curate.evaluation.charts import chart_kind
from curate.evaluation.metrics import Score, metric


def _numbers(values: Any) -> list[float] | None:
    """The values as floats, a missing one (None or NaN: TableBench's `np.nan` golds) as NaN."""
    try:
        return [float("nan") if v is None else float(v) for v in values]
    except (TypeError, ValueError):
        return None


def _present(values: list[float]) -> list[float]:
    return [v for v in values if not math.isnan(v)]


def _shares(values: list[float]) -> list[float]:
    total = sum(values)
    return [v / total for v in values] if total else values


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= max(0.01 * abs(b), 0.01)


@metric("chart_pass")
def chart_pass(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    if not isinstance(gold, dict) or "y" not in gold:
        return Score(0.0, {"error": "the gold answer is not a chart ({chart_type, x, y})"})
    if not isinstance(prediction, dict) or "y" not in prediction:
        return Score(0.0, {"error": "no chart was drawn"})
    kind, gold_kind = chart_kind(prediction.get("chart_type")), chart_kind(gold.get("chart_type"))
    predicted, expected = _numbers(prediction["y"]), _numbers(gold["y"])
    if expected is None:
        return Score(0.0, {"error": "the gold chart's y values are not numbers"})
    details: dict[str, Any] = {"chart_type": kind, "gold_chart_type": gold_kind, "values": len(predicted or []),
                               "gold_values": len(expected)}
    if kind != gold_kind:
        return Score(0.0, {**details, "mismatch": "chart type"})
    if predicted is None or len(predicted) != len(expected):
        return Score(0.0, {**details, "mismatch": "number of values"})
    if len(_present(predicted)) != len(_present(expected)):  # missing values (NaN) must be missing in both
        return Score(0.0, {**details, "mismatch": "missing values"})
    predicted, expected = _present(predicted), _present(expected)
    if kind == "pie":
        predicted, expected = _shares(predicted), _shares(expected)
        same = all(abs(p - g) <= 0.005 for p, g in zip(sorted(predicted), sorted(expected)))
    else:
        same = all(_close(p, g) for p, g in zip(sorted(predicted), sorted(expected)))
    return Score(float(same), details if same else {**details, "mismatch": "values"})

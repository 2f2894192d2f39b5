"""Metrics by name (the taxonomy's `metric` of each task), scoring one prediction against its gold.

Each metric is a function in a module of this package, registered by `@metric("name")` (`METRICS`
lists them from the source, imports a module when its metric is first used): `answers.py`,
`sets.py`, `retrieval.py`, `text.py`, `execution.py`, `chart.py`. Adding a metric is one new module.

Each metric takes (prediction, gold, context) and returns a Score in [0, 1] with details. The
prediction is the extracted answer (None when nothing was extracted: 0). Maintained libraries do
the text metrics (rouge-score for ROUGE-L, sacrebleu for BLEU); nothing is re-implemented that a
library does. `context` carries what a metric may need beyond the two answers: the sample's
program and tables (execution accuracy), the tolerance, K for retrieval.

| metric             | what it compares                                                        |
| ------------------ | ----------------------------------------------------------------------- |
| exact_match        | equal after normalization: 42 = "42.0" = "42.00", case and spacing      |
|                    | ignored, lists in any order                                             |
| numeric_match      | numbers within `rel_tol` (default 1%): 0.947 ~ 0.95; else exact_match   |
| tolerance_10pct    | numbers within 10% (TableBench)                                         |
| token_f1           | SQuAD's token F1                                                        |
| rouge_l            | ROUGE-L F (rouge-score, stemmed)                                        |
| bleu               | sentence BLEU / 100 (sacrebleu)                                         |
| set_f1             | F1 of the two answers as sets                                           |
| partial_match      | share of the gold's items present in the prediction                     |
| retrieval_prf_at_k | precision, recall and F1 of the first K retrieved items (score: F1)     |
| key_selection      | MMQA's key selection accuracy: the same set of table.column keys (case, |
|                    | quoting and spacing ignored); precision, recall and F1 in the details   |
| chart_pass         | PASS@1 of a drawn chart: same chart type and values (`chart.py`)       |
| execution_match    | predicted SQL run in DuckDB over the sample's tables: same result set   |
|                    | as the gold program (as multisets; in order only when the gold has      |
|                    | ORDER BY and the question asks for an order: "sorted", "top 5", ...)    |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from curate.curation.answers import normalize_answer
from curate.curation.registry import Registry


@dataclass(frozen=True)
class Score:
    value: float
    details: dict[str, Any] = field(default_factory=dict)


Metric = Callable[[Any, Any, dict[str, Any]], Score]

METRICS = Registry("metric", plugins="curate.evaluation.metrics.*")
metric = METRICS.decorator
# scored by a judge model the evaluator asks (curate/evaluation/judge.py), not from the two answers alone
JUDGED_METRICS = ("llm_judge",)


def score(metric: str, prediction: Any, gold: Any, context: dict[str, Any] | None = None) -> Score:
    if prediction is None:
        return Score(0.0, {"unextracted": True})
    return METRICS.get(metric)(prediction, gold, context or {})


def answer_items(value: Any) -> list[Any]:
    v = normalize_answer(value)
    return v if isinstance(v, list) else [v]


def answer_keys(value: Any) -> list[Any]:
    """The items of an answer as set members, for metrics that compare answers as sets: equal keys
    are equal items. Numbers to 9 decimals; a boolean is keyed apart from numbers, since Python's
    True == 1 would let "yes" match a gold of 1 (and 1 a gold of True) in a set."""
    return [(bool, v) if isinstance(v, bool) else round(v, 9) if isinstance(v, float) else v
            for v in answer_items(value)]


def answer_text(value: Any) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)

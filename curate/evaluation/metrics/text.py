"""Free-text answers: SQuAD's token F1, ROUGE-L (rouge-score) and BLEU (sacrebleu)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from curate.evaluation.metrics import Score, answer_text, metric

_TOKEN = re.compile(r"\w+", re.UNICODE)
_ARTICLES = {"a", "an", "the"}


def _tokens(value: Any) -> list[str]:
    text = " ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return [t for t in _TOKEN.findall(text.lower()) if t not in _ARTICLES]


@metric("token_f1")
def token_f1(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    p, g = _tokens(prediction), _tokens(gold)
    if not p or not g:
        return Score(float(p == g))
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return Score(0.0)
    precision, recall = common / len(p), common / len(g)
    return Score(2 * precision * recall / (precision + recall), {"precision": precision, "recall": recall})


_ROUGE: Any = None


@metric("rouge_l")
def rouge_l(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    global _ROUGE
    if _ROUGE is None:
        from rouge_score import rouge_scorer

        _ROUGE = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    result = _ROUGE.score(answer_text(gold), answer_text(prediction))["rougeL"]
    return Score(result.fmeasure, {"precision": result.precision, "recall": result.recall})


@metric("bleu")
def bleu(prediction: Any, gold: Any, context: dict[str, Any]) -> Score:
    import sacrebleu

    return Score(sacrebleu.sentence_bleu(answer_text(prediction), [answer_text(gold)]).score / 100.0)

"""TableBench's official scoring (`eval_tablebench_script.py` and `metrics/` of the authors'
repository, the 2025-04 revision), reproduced from reading that code:

- **parsing** (their parse script): DP, TCoT and SCoT replies give the text after the first
  "Final Answer: " on its line; PoT gives the first such line of what the program printed, else
  all it printed; a chart is the program's figure compared with `y_references`. Parse@1: the share
  of replies that gave anything.
- **normalisation** before every metric (SQuAD's): lower case, punctuation removed (so "1,157" is
  "1157", and "9.34" is "934"), articles removed, spaces collapsed.
- **EM** (`compute_em`): the answer split at commas (none are left after normalisation), item by
  item in order; numbers rounded to the reference's decimals, percentages as fractions; text equal.
  **EM_with_error_k**: numbers within k% of the reference. Each averaged over questions.
- **ROUGE-L**: `evaluate`'s `rouge` (rouge-score's F-measure, no stemming) aggregated by a
  1,000-sample bootstrap whose median is the number printed. The authors' run seeds numpy from OS
  entropy, so their ROUGE-dependent numbers move from run to run (by up to about a point on 21
  questions); here the bootstrap is seeded (`seed`) and reproducible.
- **per type**: FactChecking and NumericalReasoning by EM; DataAnalysis's **Mix_Metric** pools
  ImpactAnalysis by EM, Correlation/Trend/Statistical by EM_with_error_10 and the rest by ROUGE-L
  (each pool's bootstrap over its questions, not an average of subtypes), weighted by count;
  Visualization by ECR@1 and Pass@1 (the drawn y values, rounded to 2 decimals, sorted, equal;
  a pie by shares). **Overall Mix_Metric** weights EM, EM_with_error_10, ROUGE-L and Pass@1 by
  their counts, with Pass@1 entered as a fraction (0-1) beside percentages, as their code does.

Known defects, reported beside curate's corrected number (the task's own metric: numbers by
value, "1,157" one number, case folded once, lists as multisets): the normalisation deletes
decimal points and minus signs before numbers are compared ("2.5" scores as "25", "-3" as "3",
and the 10% tolerance is applied to those digit strings), EM on a raw answer splits "1,157" into
two answers and compares text case-sensitively (masked here by the normalisation that runs first),
and Overall mixes a fraction with percentages. The chart read-back is curate's sandbox's
(`sandbox_worker._plotted`), not the live `plt.gca()` of the authors' process: bars, horizontal
bars, lines, pies and scatter points are read the same way.
"""

from __future__ import annotations

import re
import string
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from curate.evaluation.official import profile

_FINAL = re.compile(r"Final Answer: (.+)")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?%?$")
_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
TOLERANCE_SUBTYPES = ("CorrelationAnalysis", "TrendForecasting", "StatisticalAnalysis")
EM_SUBTYPES = ("ImpactAnalysis",)
BOOTSTRAP_SAMPLES = 1000


# ------------------------------------------------------------------------------ parsing


def parse_reply(reply: str) -> str:
    """The text after the first "Final Answer: " (to the end of its line), or ""."""
    found = _FINAL.search(reply or "")
    return found.group(1) if found else ""


def parse_program_output(output: str) -> str:
    """PoT: the first Final Answer line of what the program printed, else all of it, stripped."""
    return parse_reply(output) or (output or "").strip()


# ------------------------------------------------------------------------------ the metric engine


def normalize(text: str) -> str:
    text = "".join(ch for ch in str(text).lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _is_number(text: str) -> bool:
    return bool(_NUMBER.match(text.strip()))


def _decimal(text: str) -> Decimal:
    if text.endswith("%"):
        return (Decimal(text.rstrip("%")) / Decimal(100)).quantize(Decimal("1.0000"), rounding=ROUND_HALF_UP)
    return Decimal(text)


def _decimals(values: list[str]) -> int:
    places = [len(v.split(".")[-1]) if "." in v else 0 for v in values if not v.endswith("%")]
    return min(places) if places else 0


def _rounded(value: Decimal, places: int) -> str:
    return str(value.quantize(Decimal("1." + "0" * places), rounding=ROUND_HALF_UP))


def _by_position(reference: str, prediction: str, same_number: Any) -> float:
    """TableBench's comparison of comma parts, position by position: text parts equal, number
    parts by `same_number(ref, pred)` (Decimals); each part weighs 1/len(reference parts)."""
    refs = [x.strip() for x in reference.split(",")]
    preds = [x.strip() for x in prediction.split(",")]
    weight, score = 1.0 / len(refs), 0.0
    for r, p in zip(refs, preds):
        if not _is_number(r):
            score += weight if r == p else 0.0
            continue
        try:
            same = same_number(r, p)
        except (InvalidOperation, ValueError):
            continue
        score += weight if same else 0.0
    return score


def em_one(reference: str, prediction: str) -> float:
    """`compute_em` for one pair (already normalised): numbers equal at the reference's decimals
    (a percentage exactly)."""
    places = _decimals([r.strip() for r in reference.split(",") if _is_number(r.strip()) and not r.strip().endswith("%")])
    return _by_position(reference, prediction, lambda r, p: (_decimal(r) == _decimal(p)) if r.endswith("%") else (
        _rounded(_decimal(r), places) == _rounded(_decimal(p), places)))


def em_tolerance_one(reference: str, prediction: str, percent: float) -> float:
    """`compute_em_with_tolerance` for one pair: numbers within `percent`% of the reference."""
    def close(r: str, p: str) -> bool:
        ref, pred = _decimal(r), _decimal(p)
        return (pred == ref) if ref == 0 else (abs(ref - pred) / abs(ref) <= percent / 100)

    return _by_position(reference, prediction, close)


_SCORER: Any = None


def rouge_l_scores(references: list[str], predictions: list[str]) -> list[float]:
    """rouge-score's ROUGE-L F per pair, as `evaluate`'s rouge computes it (no stemming)."""
    global _SCORER
    if _SCORER is None:
        from rouge_score import rouge_scorer

        _SCORER = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    return [_SCORER.score(r, p)["rougeL"].fmeasure for r, p in zip(references, predictions)]


def bootstrap_median(values: list[float], seed: int) -> float:
    """rouge-score's BootstrapAggregator: the median of 1,000 means of resamples (with
    replacement) of the per-question scores, drawn with numpy's global generator (seeded here,
    and its state given back)."""
    import numpy as np
    from rouge_score import scoring

    state = np.random.get_state()
    try:
        np.random.seed(seed)
        aggregator = scoring.BootstrapAggregator(n_samples=BOOTSTRAP_SAMPLES)
        for v in values:
            aggregator.add_scores({"rougeL": scoring.Score(precision=v, recall=v, fmeasure=v)})
        return float(aggregator.aggregate()["rougeL"].mid.fmeasure)
    finally:
        np.random.set_state(state)


def compute(references: list[str], predictions: list[str], seed: int = 0) -> dict[str, float]:
    """`QAMetric.compute`: EM, EM_with_error_2/5/10 and ROUGE-L in percent, rounded to 2 decimals."""
    refs, preds = [normalize(r) for r in references], [normalize(p) for p in predictions]
    n = len(refs)
    mean = lambda xs: sum(xs) / n if n else 0.0  # noqa: E731
    out = {"EM": round(mean([em_one(r, p) for r, p in zip(refs, preds)]) * 100, 2)}
    for k in (2, 5, 10):
        out[f"EM_with_error_{k}"] = round(mean([em_tolerance_one(r, p, k) for r, p in zip(refs, preds)]) * 100, 2)
    out["ROUGE-L"] = round(bootstrap_median(rouge_l_scores(refs, preds), seed) * 100, 2) if n else 0.0
    return out


# ------------------------------------------------------------------------------ charts


def _flat(values: Any) -> list[float]:
    out: list[float] = []
    for v in values:
        out += _flat(v) if isinstance(v, list) else [v]
    return out


def _same_values(references: list[float], predictions: list[float]) -> bool:
    import math

    number = lambda x: float("nan") if x is None else round(float(x), 2)  # noqa: E731 - None: the gold's np.nan
    a, b = sorted(map(number, references)), sorted(map(number, predictions))
    return len(a) == len(b) and all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b))


def chart_passes(chart_type: str, series: list[Any], drawn: Any) -> bool:
    """Their chart test: the drawn values of the gold's chart type, rounded to 2 decimals and
    sorted, equal the references'; a pie compares each wedge's share of the circle with each
    reference's share of the total."""
    from curate.evaluation.charts import chart_kind

    if not isinstance(drawn, dict) or not isinstance(drawn.get("y"), list):
        return False
    if chart_kind(drawn.get("chart_type")) != chart_kind(chart_type):
        return False
    references = _flat(series)
    if chart_kind(chart_type) == "pie":
        total = sum(references)
        if not total:
            return False
        shares = [round(r / total, 2) for r in references]
        drawn_shares = [round(d / 360.0, 2) for d in drawn["y"]]
        return _same_values(shares, drawn_shares)
    return _same_values(references, drawn["y"])


# ------------------------------------------------------------------------------ the profile


def harness_program(program: str) -> str:
    """A chart program as their parse script runs it: once to see that it runs (ECR), then again,
    with the test appended, in the same pyplot state (no figure closed in between), before reading
    `plt.gca()`. A program that draws on the current axes without making a figure of its own
    therefore draws its bars twice, and fails; one that makes its figure is read from the new one."""
    return f"{program}\n{program}\n"


def drawn_on_current_axes(figures: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What `plt.gca()` shows after the program: the last figure that has a chart."""
    from curate.evaluation.charts import plotted_chart

    for figure in reversed(figures):
        chart = plotted_chart([figure])
        if chart:
            return chart
    return None


def _parsed(sample: Any, row: dict[str, Any], program_mode: bool, rerun: dict[str, Any] | None = None
            ) -> dict[str, Any]:
    p = sample.provenance
    item: dict[str, Any] = {"sample_id": sample.id, "source_id": p.get("source_id", ""), "qtype": p.get("qtype", ""),
                            "qsubtype": p.get("qsubtype", ""), "answer": p.get("source_answer", "")}
    if item["qtype"] == "Visualization":
        executed = bool(row.get("program")) and (row.get("error") or "") in ("", "the program drew no chart")
        result = rerun.get(row["key"]) if executed and rerun else None
        drawn = drawn_on_current_axes(result.figures) if result is not None and result.ok else None
        passed = executed and chart_passes(p.get("chart_type", ""), sample.answer.get("series", sample.answer.get("y", [])),
                                           drawn)
        return {**item, "prediction": "", "parse": executed, "ecr": executed, "pass": passed}
    if program_mode:  # the program ran here, or a replay brought what it printed
        executed = bool(row.get("program") or row.get("program_output")) and not row.get("error")
        prediction = parse_program_output(row.get("program_output") or "") if executed else ""
        return {**item, "prediction": prediction, "parse": prediction != "", "ecr": executed}
    prediction = parse_reply(row.get("reply") or "")
    return {**item, "prediction": prediction, "parse": prediction != "", "ecr": None}


def _pct(flags: list[Any]) -> float:
    return round(sum(1 for f in flags if f is True) / len(flags) * 100, 2) if flags else 0.0


def _qa(items: list[dict[str, Any]], seed: int, program_mode: bool) -> dict[str, Any]:
    scores: dict[str, Any] = compute([i["answer"] for i in items], [i["prediction"] for i in items], seed)
    scores["total"] = len(items)
    if program_mode:
        scores["ECR@1"] = _pct([i["ecr"] for i in items])
    scores["Parse@1"] = _pct([i["parse"] for i in items])
    return scores


def _charts(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"total": len(items), "ECR@1": _pct([i["ecr"] for i in items]), "Pass@1": _pct([i["pass"] for i in items])}


def official_scores(items: list[dict[str, Any]], seed: int = 0, program_mode: bool = False) -> dict[str, Any]:
    """The two files their script writes: scores by "qtype_qsubtype", and by qtype with Overall."""
    subtypes: dict[str, Any] = {}
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        groups.setdefault(f"{item['qtype']}_{item['qsubtype']}", []).append(item)
    for name, group in groups.items():
        if name == "Visualization_ChartGeneration":
            subtypes[name] = {**_charts(group), "Parse@1": _pct([i["parse"] for i in group])}
        else:
            subtypes[name] = _qa(group, seed, program_mode)
    types: dict[str, Any] = {}
    by_type = {t: [i for i in items if i["qtype"] == t] for t in ("FactChecking", "NumericalReasoning",
                                                                   "DataAnalysis", "Visualization")}
    for t in ("FactChecking", "NumericalReasoning"):
        if by_type[t]:
            types[t] = _qa(by_type[t], seed, program_mode)
    da = by_type["DataAnalysis"]
    em_part = [i for i in da if i["qsubtype"] in EM_SUBTYPES]
    tolerance_part = [i for i in da if i["qsubtype"] in TOLERANCE_SUBTYPES]
    rouge_part = [i for i in da if i["qsubtype"] not in EM_SUBTYPES + TOLERANCE_SUBTYPES]

    def pool(part: list[dict[str, Any]], metric: str) -> float:
        return compute([i["answer"] for i in part], [i["prediction"] for i in part], seed)[metric] if part else 0.0

    if da:
        mix = (pool(em_part, "EM") * len(em_part) + pool(tolerance_part, "EM_with_error_10") * len(tolerance_part)
               + pool(rouge_part, "ROUGE-L") * len(rouge_part)) / len(da)
        types["DataAnalysis"] = {**_qa(da, seed, program_mode), "Mix_Metric": round(mix, 2)}
    vis = by_type["Visualization"]
    if vis:
        types["Visualization"] = _charts(vis)
    overall_em = [i for t in ("FactChecking", "NumericalReasoning") for i in by_type[t]] + em_part
    weighted = (pool(overall_em, "EM") * len(overall_em) + pool(tolerance_part, "EM_with_error_10") * len(tolerance_part)
                + pool(rouge_part, "ROUGE-L") * len(rouge_part)
                + (sum(1 for i in vis if i["pass"]) / len(vis) if vis else 0.0) * len(vis))  # a fraction, as theirs
    counted = len(overall_em) + len(tolerance_part) + len(rouge_part) + len(vis)
    types["Overall"] = {"Mix_Metric": round(weighted / counted, 2) if counted else 0.0,
                        "Parse@1": _pct([i["parse"] for i in items])}
    if program_mode:
        types["Overall"]["ECR@1"] = _pct([i["ecr"] for i in items])
    return {"subtypes": subtypes, "types": types}


def headline(qtype: str, qsubtype: str) -> str:
    """The official metric of a subtype (their CSV's choice)."""
    if qtype == "Visualization":
        return "Pass@1"
    if qtype == "DataAnalysis" and qsubtype in TOLERANCE_SUBTYPES:
        return "EM_with_error_10"
    if qtype == "DataAnalysis" and qsubtype not in EM_SUBTYPES:
        return "ROUGE-L"
    return "EM"


def _official_one(item: dict[str, Any]) -> float:
    """One question's official score under its subtype's headline metric (0-1)."""
    metric = headline(item["qtype"], item["qsubtype"])
    if metric == "Pass@1":
        return float(bool(item.get("pass")))
    ref, pred = normalize(item["answer"]), normalize(item["prediction"])
    if metric == "EM":
        return em_one(ref, pred)
    if metric == "EM_with_error_10":
        return em_tolerance_one(ref, pred, 10)
    return rouge_l_scores([ref], [pred])[0]


@profile("tablebench")
def score(data: Any, samples: list[Any], predictions: list[dict[str, Any]], results: list[dict[str, Any]],
          seed: int = 0, rerun: Any = None) -> dict[str, Any]:
    """Per (mode, configuration) of the run: the official numbers, curate's beside them, and the
    questions where the two disagree (the official code's defects, or curate's). `rerun([(sample,
    config, code), ...])` runs programs in the evaluator's sandbox (charts are re-run as their
    harness runs them); without it no chart passes."""
    from curate.evaluation.modes import effective_mode

    by_id = {s.id: s for s in samples}
    charts = [(by_id[r["sample_id"]], r["config"], harness_program(r["program"]), r["key"]) for r in predictions
              if r["sample_id"] in by_id and by_id[r["sample_id"]].provenance.get("qtype") == "Visualization"
              and r.get("program")]
    reran = dict(zip([key for *_, key in charts], rerun([c[:3] for c in charts]))) if rerun and charts else {}
    curate = {(r["sample_id"], r["mode"], r["config"]): (r["score"], r["metric"]) for r in results}
    runs: dict[str, Any] = {}
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in predictions:
        if row["sample_id"] in by_id:
            grouped.setdefault((row["mode"], row["config"]), []).append(row)
    for (mode, config), rows in sorted(grouped.items()):
        program_mode = mode == "pot"
        items = []
        for row in sorted(rows, key=lambda r: r["sample_id"]):
            sample = by_id[row["sample_id"]]
            item = _parsed(sample, row, program_mode and effective_mode(mode, sample.task) == "pot", reran)
            item["curate"], item["curate_metric"] = curate.get((sample.id, mode, config), (None, ""))
            items.append(item)
        official = official_scores(items, seed, program_mode)
        side_by_side = []
        for name, scores in sorted(official["subtypes"].items()):
            qtype, _, qsubtype = name.partition("_")
            group = [i for i in items if i["qtype"] == qtype and i["qsubtype"] == qsubtype]
            values = [i["curate"] for i in group if i["curate"] is not None]
            metric = headline(qtype, qsubtype)
            side_by_side.append({"subtype": name, "metric": metric, "official": scores.get(metric),
                                 "curate": round(sum(values) / len(values) * 100, 2) if values else None,
                                 "curate_metric": group[0].get("curate_metric", "") if group else "",
                                 "total": len(group)})
        disagreements = []
        for item in items:
            one = _official_one(item)
            if item["curate"] is not None and abs(one - item["curate"]) > 1e-9:
                disagreements.append({"sample_id": item["sample_id"], "source_id": item["source_id"],
                                      "subtype": f"{item['qtype']}_{item['qsubtype']}", "gold": item["answer"],
                                      "parsed": item["prediction"], "official": round(one, 4),
                                      "curate": round(float(item["curate"]), 4)})
        scored = [i["curate"] for i in items if i["curate"] is not None]
        runs[f"{mode}:{config}"] = {
            **official, "side_by_side": side_by_side,
            "curate_overall": round(sum(scored) / len(scored) * 100, 2) if scored else None,
            "disagreements": disagreements, "seed": seed, "bootstrap_samples": BOOTSTRAP_SAMPLES,
            "note": "ROUGE-L (and DataAnalysis Mix_Metric, Overall) is the median of a seeded 1,000-sample "
                    "bootstrap; the authors' script seeds it from OS entropy, so their printed digits are one draw"}
    return {"runs": runs}

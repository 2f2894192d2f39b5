"""RealHiTBench's scoring, as its paper defines it: Fact Checking, Numerical Reasoning and
Structure Comprehending by exact match (EM) and token F1 of the answer after SQuAD's normalisation
(case, punctuation, articles, spaces); Data Analysis by ROUGE-L (rouge-score's F, no stemming);
Visualization by ECR@1 (the program ran) and Pass@1 (the drawn values, TableBench's chart test,
which RealHiTBench reuses: curate's `chart_pass`). Scores in percent per question type and subtype.

The authors' `metrics/` code was not available to read here (the public index holds only its
compiled files), so this follows the paper, not their code; the answer is read from the last
"Final Answer:" line. Their GPT-based scoring of analysis answers is curate's `--judge-model`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from curate.evaluation.official import profile
from curate.evaluation.official.tablebench import normalize, rouge_l_scores


def token_f1(reference: str, prediction: str) -> float:
    ref, pred = normalize(reference).split(), normalize(prediction).split()
    common = sum((Counter(ref) & Counter(pred)).values())
    if not ref or not pred or not common:
        return float(ref == pred)
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


@profile("realhitbench")
def score(data: Any, samples: list[Any], predictions: list[dict[str, Any]], results: list[dict[str, Any]],
          seed: int = 0, rerun: Any = None) -> dict[str, Any]:
    from curate.curation.answers import final_answer_line
    from curate.evaluation.scoring import _executed

    by_id = {s.id: s for s in samples}
    curate = {(r["sample_id"], r["mode"], r["config"]): r["score"] for r in results}
    grouped: dict[tuple[str, str], list[tuple[Any, dict]]] = {}
    for row in sorted(predictions, key=lambda r: r["sample_id"]):
        if row["sample_id"] in by_id:
            grouped.setdefault((row["mode"], row["config"]), []).append((by_id[row["sample_id"]], row))
    runs: dict[str, Any] = {}
    for (mode, config), pairs in grouped.items():
        per: dict[str, dict[str, list[float]]] = {}
        mine: dict[str, list[float]] = {}
        for sample, row in pairs:
            p = sample.provenance
            qtype, subtype = p.get("question_type", ""), p.get("subtype", "")
            name = f"{qtype}_{subtype}"
            scores = per.setdefault(name, {})
            theirs = curate.get((sample.id, mode, config))
            if theirs is not None:
                mine.setdefault(name, []).append(theirs)
            if qtype == "Visualization":
                ran = bool(_executed(row, sample.task))
                scores.setdefault("ECR@1", []).append(float(ran))
                scores.setdefault("Pass@1", []).append(float(theirs or 0.0))
                continue
            stated = final_answer_line(row.get("reply") or "") or ""
            gold = p.get("source_answer", "")
            if qtype == "Data Analysis":
                scores.setdefault("ROUGE-L", []).extend(rouge_l_scores([normalize(gold)], [normalize(stated)]))
            else:
                scores.setdefault("EM", []).append(float(normalize(gold) == normalize(stated)))
                scores.setdefault("F1", []).append(token_f1(gold, stated))
        pct = lambda xs: round(sum(xs) / len(xs) * 100, 2) if xs else None  # noqa: E731
        subtypes = {name: {**{m: pct(v) for m, v in s.items()}, "total": len(next(iter(s.values())))}
                    for name, s in sorted(per.items())}
        types: dict[str, Any] = {}
        for name, s in per.items():
            qtype = name.split("_")[0]
            bucket = types.setdefault(qtype, {})
            for metric, values in s.items():
                bucket.setdefault(metric, []).extend(values)
        headline = lambda name: ("Pass@1" if name.startswith("Visualization") else  # noqa: E731
                                 "ROUGE-L" if name.startswith("Data Analysis") else "EM")
        runs[f"{mode}:{config}"] = {
            "subtypes": subtypes,
            "types": {t: {m: pct(v) for m, v in s.items()} for t, s in sorted(types.items())},
            "side_by_side": [{"subtype": name, "metric": headline(name), "official": subtypes[name][headline(name)],
                              "curate": pct(mine.get(name, [])), "total": subtypes[name]["total"]}
                             for name in subtypes],
            "curate_overall": pct([v for vs in mine.values() for v in vs]), "disagreements": [],
            "note": "RealHiTBench's metrics as its paper defines them (the authors' metrics code was not available)"}
    return {"runs": runs}

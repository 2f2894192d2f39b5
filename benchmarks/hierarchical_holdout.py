"""Structure categories and header trees on RealHiTBench's sheets, judged on a half nobody tuned on.

The 105 spreadsheets of ../shared/data/realhitbench are split in two by the md5 of the file's stem
(`_swap` variants left out): `held_back` when the md5 is even, `tuning` when it is odd. The split
was fixed before any rule was tuned (issue 28); rules are tuned on `tuning` only, and the number
that counts is the one on `held_back`. For each half this prints the recall (and precision) of each
RealHiTBench category (`CompStrucCata`) against what `curate inspect` detects, and the hand-drawn
header trees of `tests/header_tree_holdout.json` (all from the held-back half) right or wrong.

Each category is a score (the weighted signs of `curate.curation.sources.structure.SIGNS`) against a
threshold, fitted recall first within a budget of claims per sheet (`structure.fit_thresholds`). The
shipped thresholds (`structure.THRESHOLDS`) were fitted on the 105 sheets and `more_tuning`, so the
plain figures on those are in-sample. `--cross-fit` is the honest figure on the 105: two-fold
cross-validation, thresholds fitted on one half and measured on the other, both ways. The signs
themselves (what counts as evidence, and their weights) were written having looked at sheets of both
halves of the 105 and of `more_tuning`; only the thresholds are fitted.

`--more` also reads the 100 sheets of ../shared/data/realhitbench/more (issue 44), split by the same
rule, fixed before any tuning on them: the rules are tuned on their odd part (`more_tuning`) and the
105 above, and the figure that counts is the one on their even part (`more_held_back`, 46 sheets),
with the claims per sheet (how many categories are reported on a sheet, on average). With
`--cross-fit`, the thresholds are also fitted on everything tuned on (the 105 and `more_tuning`) and
measured on `more_held_back`.

    python benchmarks/hierarchical_holdout.py [--data PATH] [--json] [--cross-fit] [--more]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HALVES = ("tuning", "held_back")
MORE = "more_"  # the prefix of more/'s sheets and halves: `more_tuning`, `more_held_back`
MORE_HALVES = (MORE + "tuning", MORE + "held_back")


def half_of(stem: str) -> str:
    """`held_back` when the md5 of the file's stem is even, else `tuning` (fixed before tuning);
    a sheet of more/ (its name prefixed `more_`) falls in `more_held_back` or `more_tuning`."""
    if stem.startswith(MORE):
        return MORE + half_of(stem[len(MORE):])
    return "held_back" if int(hashlib.md5(stem.encode()).hexdigest(), 16) % 2 == 0 else "tuning"


def category_recall(detected: dict[str, list[str]], gold: dict[str, str],
                    halves: tuple[str, ...] = HALVES) -> dict[str, dict]:
    """Per half and category: labelled, flagged, hits, recall, precision and the sheets missed."""
    from curate.curation.sources.structure import REALHITBENCH_CATEGORIES

    out: dict[str, dict] = {}
    for half in halves:
        names = [t for t in detected if half_of(t) == half]
        rows = {}
        for category in REALHITBENCH_CATEGORIES:
            labelled = [t for t in names if gold[t] == category]
            found = [t for t in names if category in detected[t]]
            hits = [t for t in labelled if category in detected[t]]
            rows[category] = {"labelled": len(labelled), "flagged": len(found), "hits": len(hits),
                              "recall": round(len(hits) / len(labelled), 3) if labelled else None,
                              "precision": round(len(hits) / len(found), 3) if found else None,
                              "missed": sorted(set(labelled) - set(hits))}
        out[half] = {"sheets": len(names), "categories": rows,
                     "claims_per_sheet": round(sum(len(detected[t]) for t in names) / len(names), 2) if names else None}
    return out


def detect(scores: dict[str, dict[str, float]], thresholds: dict[str, float]) -> dict[str, list[str]]:
    """The categories each sheet's scores reach."""
    return {t: sorted(c for c, v in s.items() if v > 0 and v >= thresholds[c]) for t, s in scores.items()}


def fit(scores: dict[str, dict[str, float]], gold: dict[str, str], names: list[str]) -> dict[str, float]:
    """Thresholds fitted on the sheets `names` (structure.fit_thresholds: recall first, within the claims budget)."""
    from curate.curation.sources.structure import fit_thresholds

    return fit_thresholds([scores[t] for t in names], [gold[t] for t in names])


def cross_fit(scores: dict[str, dict[str, float]], gold: dict[str, str]) -> dict[str, dict]:
    """Two folds: thresholds fitted on one half, recall and precision measured on the other."""
    out = {}
    for fitted_on, measured_on in (("tuning", "held_back"), ("held_back", "tuning")):
        thresholds = fit(scores, gold, [t for t in scores if half_of(t) == fitted_on])
        result = category_recall(detect(scores, thresholds), gold, (measured_on,))[measured_on]
        out[f"fit on {fitted_on}, measured on {measured_on}"] = {"thresholds": thresholds, **result}
    originals = [t for t in scores if half_of(t) in HALVES]
    out["fit on all 105"] = {"thresholds": fit(scores, gold, originals)}
    if any(half_of(t) in MORE_HALVES for t in scores):
        tuned = [t for t in scores if half_of(t) != MORE_HALVES[1]]
        thresholds = fit(scores, gold, tuned)
        result = category_recall(detect(scores, thresholds), gold, (MORE_HALVES[1],))[MORE_HALVES[1]]
        out["fit on the 105 and more_tuning, measured on more_held_back"] = {"thresholds": thresholds, **result}
    return out


def _print_table(title: str, result: dict) -> None:
    fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    print(f"\n{title} ({result['sheets']} sheets, {fmt(result['claims_per_sheet'])} categories claimed per sheet)")
    print(f"{'category':24} {'labelled':>8} {'flagged':>7} {'hits':>5} {'recall':>7} {'precision':>9}  missed")
    for category, row in result["categories"].items():
        print(f"{category:24} {row['labelled']:>8} {row['flagged']:>7} {row['hits']:>5} {fmt(row['recall']):>7} "
              f"{fmt(row['precision']):>9}  {', '.join(row['missed'])}")


def labelled_scores(folder: Path, questions_file: str, prefix: str = "") -> tuple[dict, dict]:
    """Gold category and category scores of each spreadsheet of `folder/tables` that the questions
    name (`_swap` variants have no questions of their own), keyed `prefix + stem`."""
    from curate.curation.sources.readers.xlsx import category_scores

    questions = json.loads((folder / questions_file).read_text())
    questions = next(iter(questions.values())) if isinstance(questions, dict) else questions
    gold = {prefix + q["FileName"]: q["CompStrucCata"] for q in questions}
    scores = {prefix + path.stem: category_scores(str(path)) for path in sorted((folder / "tables").glob("*.xlsx"))
              if prefix + path.stem in gold}
    return gold, scores


def main() -> None:
    from curate.curation.sources.structure import THRESHOLDS
    from tests.header_tree_holdout import check_all

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cross-fit", action="store_true",
                        help="two-fold cross-validation of the category thresholds (fit on one half, measure on the other)")
    parser.add_argument("--more", action="store_true",
                        help="also the 100 sheets of realhitbench/more, judged on their even part (more_held_back)")
    args = parser.parse_args()
    folder = Path(args.data) / "realhitbench"
    started = time.perf_counter()
    gold, scores = labelled_scores(folder, "QA_subset.json")
    halves = HALVES
    if args.more:
        more_gold, more_scores = labelled_scores(folder / "more", "QA_more.json", MORE)
        gold, scores, halves = {**gold, **more_gold}, {**scores, **more_scores}, HALVES + MORE_HALVES
    recall = category_recall(detect(scores, THRESHOLDS), gold, halves)
    folds = cross_fit(scores, gold) if args.cross_fit else None
    trees = [] if args.cross_fit else check_all(folder / "tables")
    seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps({"categories": recall, "cross_fit": folds, "header_trees": trees,
                          "seconds": round(seconds, 1)}, indent=1))
        return
    for half in halves:
        _print_table(f"{half}, shipped thresholds" + (" (held out: the figure that counts)" if half == MORE_HALVES[1]
                                                      else " (in-sample)"), recall[half])
    if folds:
        for name, fold in folds.items():
            print(f"\n{name}: thresholds " + ", ".join(f"{c} {v:g}" for c, v in fold["thresholds"].items()))
            if "categories" in fold:
                _print_table(name, fold)
    if trees:
        right = sum(t["right"] for t in trees)
        print(f"\nhand-drawn header trees (held_back half): {right} of {len(trees)} right")
        for t in trees:
            print(f"  {'ok ' if t['right'] else 'BAD'} {t['sheet']}: {'; '.join(t['errors']) or 'matches'}")
    print(f"\n{seconds:.1f} s")


if __name__ == "__main__":
    main()

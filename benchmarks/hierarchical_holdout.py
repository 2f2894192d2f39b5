"""Structure categories and header trees on RealHiTBench's sheets, judged on a half nobody tuned on.

The 105 spreadsheets of ../shared/data/realhitbench are split in two by the md5 of the file's stem
(`_swap` variants left out): `held_back` when the md5 is even, `tuning` when it is odd. The split
was fixed before any rule was tuned (issue 28); rules are tuned on `tuning` only, and the number
that counts is the one on `held_back`. For each half this prints the recall (and precision) of each
RealHiTBench category (`CompStrucCata`) against what `curate inspect` detects, and the hand-drawn
header trees of `tests/header_tree_holdout.json` (all from the held-back half) right or wrong.

    python benchmarks/hierarchical_holdout.py [--data PATH] [--json]
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


def half_of(stem: str) -> str:
    """`held_back` when the md5 of the file's stem is even, else `tuning` (fixed before tuning)."""
    return "held_back" if int(hashlib.md5(stem.encode()).hexdigest(), 16) % 2 == 0 else "tuning"


def category_recall(detected: dict[str, list[str]], gold: dict[str, str]) -> dict[str, dict]:
    """Per half and category: labelled, hits, recall, precision and the sheets missed."""
    from curation.sources.structure import REALHITBENCH_CATEGORIES

    out: dict[str, dict] = {}
    for half in HALVES:
        names = [t for t in detected if half_of(t) == half]
        rows = {}
        for category in REALHITBENCH_CATEGORIES:
            labelled = [t for t in names if gold[t] == category]
            found = [t for t in names if category in detected[t]]
            hits = [t for t in labelled if category in detected[t]]
            rows[category] = {"labelled": len(labelled), "hits": len(hits),
                              "recall": round(len(hits) / len(labelled), 3) if labelled else None,
                              "precision": round(len(hits) / len(found), 3) if found else None,
                              "missed": sorted(set(labelled) - set(hits))}
        out[half] = {"sheets": len(names), "categories": rows}
    return out


def main() -> None:
    from curation.sources.readers.xlsx import sheet_structures
    from tests.header_tree_holdout import check_all

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    folder = Path(args.data) / "realhitbench"
    questions = json.loads((folder / "QA_subset.json").read_text())
    questions = next(iter(questions.values())) if isinstance(questions, dict) else questions
    gold = {q["FileName"]: q["CompStrucCata"] for q in questions}
    started = time.perf_counter()
    detected = {}
    for path in sorted((folder / "tables").glob("*.xlsx")):
        if path.stem in gold:
            detected[path.stem] = sorted({s["realhitbench_category"] for sheet in sheet_structures(str(path))
                                          for s in sheet["structures"]})
    recall = category_recall(detected, gold)
    trees = check_all(folder / "tables")
    seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps({"categories": recall, "header_trees": trees, "seconds": round(seconds, 1)}, indent=1))
        return
    for half in HALVES:
        print(f"\n{half} ({recall[half]['sheets']} sheets)")
        print(f"{'category':24} {'labelled':>8} {'hits':>5} {'recall':>7} {'precision':>9}  missed")
        for category, row in recall[half]["categories"].items():
            fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
            print(f"{category:24} {row['labelled']:>8} {row['hits']:>5} {fmt(row['recall']):>7} "
                  f"{fmt(row['precision']):>9}  {', '.join(row['missed'])}")
    right = sum(t["right"] for t in trees)
    print(f"\nhand-drawn header trees (held_back half): {right} of {len(trees)} right")
    for t in trees:
        print(f"  {'ok ' if t['right'] else 'BAD'} {t['sheet']}: {'; '.join(t['errors']) or 'matches'}")
    print(f"\n{seconds:.1f} s")


if __name__ == "__main__":
    main()

"""`curate audit` without a model on TableBench's original release, judged against the authors' corrections
(../shared/data/tablebench/original_release): the general rules (validators.audit.rule_answers) are the only
candidates, and one rule answer that disagrees with the gold is a finding (`min_votes=1`).

The 98 questions are split by the md5 of their id, fixed before the rules were tuned: odd = `tuning` (the
rules were written looking at these), even = `held_back` (never looked at while tuning). A wrong gold is a
correction of kind `value` or `items`; precision and recall of the flags per half, and the flags on TableBench's
149 cleaned questions and RealHiTBench's (golds taken as right there):

    python benchmarks/audit_tablebench_holdout.py [--show]
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("CURATE_SHARED_DATA", ROOT.parent / "shared" / "data")) / "tablebench" / "original_release"


def half(source_id: str) -> str:
    return "held_back" if int(hashlib.md5(source_id.encode()).hexdigest(), 16) % 2 == 0 else "tuning"


def measure(data: Path = DATA) -> dict:
    from curate.importers import write_import
    from curate.validators.audit import audit_release

    corrections = {c["id"]: c for c in json.loads((data / "corrections.json").read_text())}
    questions = [json.loads(x) for x in (data / "TableBench_original_subset.jsonl").read_text().splitlines() if x]
    with tempfile.TemporaryDirectory() as tmp:
        write_import("tablebench", [str(data / "TableBench_original_subset.jsonl")], name="tb",
                     releases=Path(tmp) / "releases")
        report = audit_release(str(Path(tmp) / "releases" / "tb" / "1.0.0"), min_votes=1)
    flagged = {f["source_id"]: f for f in report["findings"] if f["wrong_gold"]}
    out = {"checked": report["checked"], "halves": {}}
    for name in ("tuning", "held_back"):
        ids = {q["id"] for q in questions if half(q["id"]) == name}
        wrong = {i for i in ids if corrections.get(i, {}).get("kind") in ("value", "items")}
        flags = {i for i in flagged if i in ids}
        hit = flags & wrong
        out["halves"][name] = {
            "questions": len(ids), "wrong_golds": len(wrong), "flags": len(flags), "right_flags": len(hit),
            "precision": round(len(hit) / len(flags), 3) if flags else None,
            "recall": round(len(hit) / len(wrong), 3) if wrong else None,
            "false_flags": [{"id": i, "question": next(q["question"] for q in questions if q["id"] == i),
                             "gold": flagged[i]["gold"], "recomputed": flagged[i]["recomputed"],
                             "rule": flagged[i]["engines"], "correction": corrections.get(i, {}).get("kind")}
                            for i in sorted(flags - wrong)],
            "right": [{"id": i, "gold": flagged[i]["gold"], "recomputed": flagged[i]["recomputed"],
                       "cleaned": corrections[i]["cleaned_answer"], "rule": flagged[i]["engines"]}
                      for i in sorted(hit)]}
    return out


def precision_elsewhere(shared: Path = DATA.parents[1]) -> dict:
    """Flags where every gold is taken as right: TableBench's 149 cleaned questions (its authors' reviewed
    golds) and RealHiTBench's 506 imported questions; every flag there is a false alarm unless checked."""
    from curate.importers import write_import
    from curate.validators.audit import audit_release

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, fmt, paths in (("tablebench_cleaned", "tablebench", [shared / "tablebench" / "TableBench_DP_subset.jsonl"]),
                                 ("realhitbench", "realhitbench", [shared / "realhitbench" / "QA_subset.json",
                                                                   shared / "realhitbench" / "tables"])):
            if not all(p.exists() for p in paths):
                continue
            write_import(fmt, [str(p) for p in paths], name=name, releases=Path(tmp))
            report = audit_release(str(Path(tmp) / name / "1.0.0"))
            out[name] = {"answered": report["checked"], "flags": [
                {"id": f["source_id"], "question": f["question"], "gold": f["gold"], "recomputed": f["recomputed"]}
                for f in report["findings"] if f["wrong_gold"]]}
    return out


if __name__ == "__main__":
    result = measure()
    result["elsewhere"] = precision_elsewhere()
    print(json.dumps(result, indent=2, ensure_ascii=False))

"""`curate audit` with three candidate sets on TableBench's original release, judged against the authors'
corrections (../shared/data/tablebench/original_release): precision and recall of the wrong-gold flags on the 16
golds the authors corrected in value or items (the one disputed correction left out), the format-only corrections
flagged as wrong (should be none), and what was reported ambiguous.

The 98 questions are split by the md5 of their id (as benchmarks/audit_tablebench_holdout.py does, decided before
any outcome was looked at): odd = `tuning` (the vote and its rules were designed looking at these), even =
`held_back` (reported first, never looked at while designing). With no judge replies the rule judge decides alone;
with `--judge-replies FILE` (replies made elsewhere from the exported prompts, never kept in the repository) the
LLM judge decides the disagreements.

    python benchmarks/audit_tablebench_vote.py [--judge-replies FILE ...] [--isolation bwrap|none] [--cache DIR]
        [--export-requests FILE] [--errata DIR] [--report FILE]

`--cache DIR` keeps each candidate file's executed answers (running 294 programs takes minutes).
`--export-requests FILE` writes the judge's requests (every disagreement the vote found, both halves, nothing
that says which half or which gold was corrected) as OpenAI batch input lines; answer them elsewhere from each
line's messages alone and bring the output (batch output lines, or `{custom_id, reply}` lines) back with
`--judge-replies`. `--errata DIR` writes the audit's errata (audit.md: each finding's evidence as a reviewer reads it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("CURATE_SHARED_DATA", ROOT.parent / "shared" / "data")) / "tablebench" / "original_release"
HALVES = ("held_back", "tuning", "all")


def half(source_id: str) -> str:
    return "held_back" if int(hashlib.md5(source_id.encode()).hexdigest(), 16) % 2 == 0 else "tuning"


def candidate_answers(release: Path, path: Path, isolation: str, cache: Path | None) -> tuple[dict, dict]:
    """One candidate file's executed answers by sample id (cached by the file's and the release's content)."""
    from curate.evaluation.candidates import replayed_answers

    fingerprint = json.loads((release / "manifest.json").read_text())["fingerprint"]
    key = hashlib.sha256(path.read_bytes() + fingerprint.encode()).hexdigest()[:16]
    hit = cache / f"{path.stem}-{key}.json" if cache else None
    if hit and hit.exists():
        saved = json.loads(hit.read_text())
        return saved["answers"], saved["programs"]
    answers, programs = replayed_answers(str(release), str(path), isolation)
    if hit:
        hit.parent.mkdir(parents=True, exist_ok=True)
        hit.write_text(json.dumps({"answers": answers, "programs": programs}, default=str))
    return answers, programs


def audit(data: Path, judge_replies: list[Path], isolation: str, cache: Path | None,
          export: Path | None = None) -> dict:
    from curate.importers import write_import
    from curate.validators.audit import apply_judge, audit_release, judge_replayed, judge_requests
    from curate.validators.audit_vote import apply_vote_judge, judge_batch_lines, replay_remarks, vote_judge_requests

    files = sorted((data / "candidates").glob("*.jsonl"))
    with tempfile.TemporaryDirectory() as tmp:
        write_import("tablebench", [str(data / "TableBench_original_subset.jsonl")], name="tb",
                     releases=Path(tmp) / "releases")
        release = Path(tmp) / "releases" / "tb" / "1.0.0"
        answers, programs = {}, {}
        for f in files:
            answers[f.stem], programs[f.stem] = candidate_answers(release, f, isolation, cache)
        remarks = {f.stem: replay_remarks(str(f)) for f in files}
        report = audit_release(str(release), candidates=answers, programs=programs, remarks=remarks)
        if export:
            requests = judge_requests(str(release)) + vote_judge_requests(str(release), report)
            export.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n"
                                      for line in judge_batch_lines(requests, "judge")))
        for replies_file in judge_replies:
            sql, vote = judge_requests(str(release)), vote_judge_requests(str(release), report)
            replies = judge_replayed(sql + vote, str(replies_file))
            report = apply_judge(report, sql, replies, replies_file.stem) if sql else report
            report = apply_vote_judge(report, vote, replies, replies_file.stem)
    return report


def score(report: dict, data: Path = DATA) -> dict:
    corrections = {c["id"]: c for c in json.loads((data / "corrections.json").read_text())}
    questions = [json.loads(x) for x in (data / "TableBench_original_subset.jsonl").read_text().splitlines() if x]
    by_source = {f["source_id"]: f for f in report["findings"] if f["source_id"]}
    out = {}
    for name in HALVES:
        ids = {q["id"] for q in questions if name == "all" or half(q["id"]) == name}
        ids -= {i for i in ids if corrections.get(i, {}).get("disputed")}
        wrong = {i for i in ids if corrections.get(i, {}).get("kind") in ("value", "items")}
        written = {i for i in ids if corrections.get(i, {}).get("kind") == "format"}
        flags = {i for i in ids if i in by_source and by_source[i]["wrong_gold"]}
        hit = flags & wrong
        out[name] = {
            "questions": len(ids), "wrong_golds": len(wrong), "flags": len(flags), "right_flags": len(hit),
            "precision": round(len(hit) / len(flags), 3) if flags else None,
            "recall": round(len(hit) / len(wrong), 3) if wrong else None,
            "format_only_flagged_wrong": sorted(flags & written),
            "format_only_as_presentation": len({i for i in written if by_source.get(i, {}).get("kind") == "presentation"}),
            "ambiguous": len({i for i in ids if by_source.get(i, {}).get("kind") == "ambiguous"}),
            "false_flags": [{"id": i, "gold": by_source[i]["gold"], "recomputed": by_source[i]["recomputed"],
                             "correction": corrections.get(i, {}).get("kind"), "detail": by_source[i]["detail"][:300]}
                            for i in sorted(flags - wrong)],
            "missed": [{"id": i, "gold": corrections[i]["original_answer"], "corrected": corrections[i]["cleaned_answer"],
                        "finding": by_source.get(i, {}).get("kind"), "detail": by_source.get(i, {}).get("detail", "")[:300]}
                       for i in sorted(wrong - flags)]}
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge-replies", type=Path, action="append", default=[])
    parser.add_argument("--isolation", default="bwrap", choices=["bwrap", "none"])
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--report", type=Path, default=None, help="write the audit's report here too")
    parser.add_argument("--export-requests", type=Path, default=None,
                        help="write the judge's requests here as OpenAI batch input lines")
    parser.add_argument("--errata", type=Path, default=None, help="write the audit's errata here (audit.md, ...)")
    args = parser.parse_args()
    result = audit(DATA, args.judge_replies, args.isolation, args.cache, args.export_requests)
    if args.report:
        args.report.write_text(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    if args.errata:
        from curate.validators.audit import write_errata

        write_errata(result, str(args.errata))
    print(json.dumps({"judge": result.get("vote_judge"), **score(result)}, indent=2, ensure_ascii=False, default=str))

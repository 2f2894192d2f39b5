"""The `review` build stage: the annotators' decisions applied to the checked samples.

It runs after the checks (select, classify, vote) and before `verify`, so what the annotators
changed is re-validated like everything else. Per sample (`curate.annotation.review.outcome`):

- **accept**: the sample stays as it is, its quality now "human-annotated";
- **fix**: the corrected answer (typed as the task wants it) becomes the gold, the old one kept
  in `provenance["gold_before_review"]`; quality "human-annotated";
- **reject**: the sample leaves the release; the stage report lists it with the reasons;
- **open** (not reviewed yet, annotators in conflict, a corrected answer that does not fit the
  task): the sample stays as it was, marked `provenance["review"] = "pending"`.

Each applied sample gets one `Review` record per annotator, who is named by a pseudonym
(`annotator-<hash of the email>`): a release is published, and annotators' emails stay in the
workspace's review state. With `[review] required = true`,
samples still waiting for a human (queued and not decided) are held back from the release.

The decisions come from `<workspace>/review/review.sqlite`, which `curate review pull` fills.
The build puts their hash into this stage's config (`decisions`), so the stage's signature
changes exactly when a decision does; the stage checks that the file still holds what the hash
says, so a pull during a build cannot slip half-applied decisions into a release.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from curate.curation.config import with_defaults
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import ReviewReport
from curate.curation.pipeline.stage import Plan, Stage, merge_counts

DEFAULTS: dict[str, Any] = {"required": False, "decisions": ""}
MAX_LISTED = 50  # open or held-back samples listed in the report (rejected ones are all listed)


def settings(config: dict[str, Any]) -> dict[str, Any]:
    out = with_defaults("review", config, DEFAULTS)
    if not isinstance(out["required"], bool):
        raise ValueError(f"[review] required must be true or false, got {out['required']!r}")
    return out


def pseudonym(annotator: str) -> str:
    """A stable name for an annotator in what a release publishes (their email stays local)."""
    from curate.curation.hashing import content_hash

    return "annotator-" + content_hash("annotator", annotator)[:8]


def reviewed_sample(sample: Any, result: dict[str, Any]) -> Any:
    """The sample after an accept or a fix: the new gold, quality, one Review per annotator."""
    from curate.curation.sample import Review, ReviewState

    provenance = dict(sample.provenance)
    answer = sample.answer
    if result["verdict"] == "fix":
        provenance["gold_before_review"] = json.dumps(sample.answer, ensure_ascii=False, sort_keys=True)
        answer = result["answer"]
    provenance["review"] = (ReviewState.FIXED if result["verdict"] == "fix" else ReviewState.ACCEPTED).value
    agreement = [a for a in result["agreement"].values() if a is not None]
    if agreement:
        provenance["review_agreement"] = f"{min(agreement):.2f}"
    ratings = sorted(r["difficulty"] for r in result["reviews"] if r.get("difficulty"))
    if ratings:
        provenance["review_difficulty"] = str(ratings[len(ratings) // 2])
    reviews = tuple(Review(annotator=pseudonym(r["annotator"]), decision=r["verdict"],
                           answer=json.loads(r["answer"]) if r.get("answer") else None,
                           comment=r.get("comment") or "", at=str(r.get("updated_at") or ""))
                    for r in result["reviews"])
    return replace(sample, answer=answer, quality="human-annotated", reviews=sample.reviews + reviews,
                   provenance=provenance)


@stage("review", outputs=("samples",), inputs={"samples": ("imported", "<samples")}, latest=("samples",), kind="review",
       section=("review",), settings="curate.annotation.apply:settings", after=("*check",))
class ReviewStage(Stage):
    """The `review` stage: the checked samples in, the reviewed release candidates out."""

    version = "1"

    report_type = ReviewReport

    def plan(self, config: dict[str, Any], inputs: list[Any]) -> Plan:
        from curate.annotation.review import review_snapshot, reviewed_samples, snapshot_digest

        s = settings(config)
        snapshot = review_snapshot(inputs[0].workspace_root)
        if snapshot_digest(snapshot) != s["decisions"]:
            raise ValueError("the review decisions changed while the build ran (a `curate review pull`?): "
                             "build again to apply them")
        return Plan(tasks=[str(p) for p in inputs[0].files("samples")],
                    shared={"reviewed": reviewed_samples(snapshot)})

    def run_part(self, task: str, shared: dict[str, Any], config: dict[str, Any]):
        import pyarrow.parquet as pq

        from curate.annotation.review import outcome
        from curate.curation.arrow_io import samples_from_arrow, samples_to_arrow
        from curate.curation.sample import ReviewState

        s = settings(config)
        kept = []
        summary: dict[str, Any] = {"samples_in": 0, "samples": 0, "applied": {}, "open": 0, "queued_not_pushed": 0,
                                   "held_back": 0, "rejected": [], "open_examples": [], "held_back_examples": []}
        for sample in samples_from_arrow(pq.read_table(task)):
            summary["samples_in"] += 1
            reviewed = shared["reviewed"].get(sample.id)
            result = outcome(reviewed, sample.answer_type) if reviewed else None
            if result and result["verdict"] == "reject":
                summary["applied"]["reject"] = summary["applied"].get("reject", 0) + 1
                summary["rejected"].append({"id": sample.id, "task": sample.task, "question": sample.question[:200],
                                            "reasons": result["reasons"],
                                            "annotators": sorted({pseudonym(r["annotator"]) for r in result["reviews"]})})
                continue
            if result and result["verdict"] in ("accept", "fix"):
                summary["applied"][result["verdict"]] = summary["applied"].get(result["verdict"], 0) + 1
                kept.append(reviewed_sample(sample, result))
                continue
            waiting = result is not None or sample.review_state is ReviewState.QUEUED
            if result is not None:  # pushed and still open
                summary["open"] += 1
                if len(summary["open_examples"]) < MAX_LISTED:
                    summary["open_examples"].append({"id": sample.id, "why": result["why"]})
                sample = sample.with_review(ReviewState.PENDING)
            elif waiting:
                summary["queued_not_pushed"] += 1
            if waiting and s["required"]:
                summary["held_back"] += 1
                if len(summary["held_back_examples"]) < MAX_LISTED:
                    summary["held_back_examples"].append(sample.id)
                continue
            kept.append(sample)
        summary["samples"] = len(kept)
        return {"samples": samples_to_arrow(kept)}, summary

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        report = merge_counts(summaries)
        for key in ("open_examples", "held_back_examples"):
            report[key] = report.get(key, [])[:MAX_LISTED]
        report["rejected"] = sorted(report.get("rejected", []), key=lambda r: r["id"])
        report["required"] = settings(config)["required"]
        return report


def errata(workspace_root: str, original_files: list[str], reviewed_files: list[str],
           review_report: dict[str, Any]) -> dict[str, Any]:
    """What a corrected build of a release changed, for its card: each gold an annotator corrected
    (the published gold, the new one, whether it is the audit's proposed answer or the annotator's own,
    the audit finding behind it), each sample removed (with the reasons), and each audit finding an
    annotator checked and found the gold right for."""
    import pyarrow.parquet as pq

    from curate.annotation.review import audit_queue
    from curate.curation.arrow_io import samples_from_arrow

    findings = {f["sample_id"]: f for f in (audit_queue(workspace_root) or {}).get("findings", [])}
    original = {s.id: s for path in original_files for s in samples_from_arrow(pq.read_table(path))}
    corrected, confirmed = [], []
    for path in reviewed_files:
        for s in samples_from_arrow(pq.read_table(path)):
            finding = findings.get(s.id, {})
            entry = {"id": s.id, "source_id": s.provenance.get("source_id", ""), "task": s.task,
                     "question": s.question[:300], "finding": finding.get("kind", ""),
                     "annotators": sorted({r.annotator for r in s.reviews})}
            if s.provenance.get("review") == "fixed":
                before = original[s.id].answer if s.id in original else json.loads(s.provenance["gold_before_review"])
                proposed = finding.get("proposed")
                entry.update(gold_before=before, gold=s.answer,
                             by="the audit's recomputed answer, confirmed" if proposed is not None and
                             _same_text(proposed, s.answer) else "the annotator's answer")
                corrected.append(entry)
            elif s.provenance.get("review") == "accepted" and s.id in findings:
                confirmed.append({**entry, "gold": s.answer})
    removed = []
    for r in review_report.get("rejected", []):
        s = original.get(r["id"])
        removed.append({**r, "source_id": s.provenance.get("source_id", "") if s else "",
                        "finding": findings.get(r["id"], {}).get("kind", ""),
                        "gold": s.answer if s else None})
    return {"corrected": sorted(corrected, key=lambda e: e["id"]), "removed": removed,
            "confirmed": sorted(confirmed, key=lambda e: e["id"])}


def _same_text(proposed: str, answer: Any) -> bool:
    from curate.curation.answers import normalize_answer, split_list

    value = split_list(proposed) if isinstance(answer, list) else proposed
    return normalize_answer(value) == normalize_answer(answer)

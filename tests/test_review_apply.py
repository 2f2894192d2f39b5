"""The `review` build stage: annotators' decisions applied to the checked samples (accept, fix,
reject; open ones marked), its signature following the decisions, `[review] required` holding
back what still waits for a person, and re-validation treating a human fix as the gold.

These tests fill the review state directly (as `curate review pull` does); the round trip through
a real Label Studio is in test_review.py."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from curate.annotation.apply import pseudonym
from curate.annotation.review import ReviewState, outcome, review_snapshot, snapshot_digest
from curate.curation.answers import parse_typed_text
from curate.curation.pipeline.runner import run_stage
from curate.curation.sample import Program, Sample
from curate.curation.table import Table
from curate.curation.workspace import Workspace
from tests.files import finished_dataset

TABLE = Table(name="towns", body=pa.table({"town": ["Oslo", "Bergen", "Tromsø"], "people": [700, 290, 77]}))


def sample(n: int, answer=None, answer_type="number", program=None, queued=True) -> Sample:
    return Sample(task="TBO/table_query", question=f"Question {n} about the towns?", answer=700 + n if answer is None
                  else answer, answer_type=answer_type, table_ids=(TABLE.id,), origin="rule" if program else "import",
                  program=program, quality="low" if queued else "rule-based",
                  provenance={"review": "queued"} if queued else {})


def annotation(sample_id: str, annotator: str, verdict: str, answer=None, reason: str = "", kind: str = "answer",
               annotation_id: int | None = None, updated: str = "2026-11-22T10:00:00") -> dict:
    return {"annotation_id": annotation_id or abs(hash((sample_id, annotator, kind))) % 10**9, "sample_id": sample_id,
            "kind": kind, "task_id": 1, "annotator": annotator, "verdict": verdict,
            "answer": json.dumps(answer), "reason": reason, "difficulty": 3, "comment": "", "criteria": "{}",
            "updated_at": updated}


def reviewed(decisions: dict, kinds=("answer",)) -> dict:
    return {"kinds": list(kinds), "decisions": decisions}


def one(verdict: str, answer=None, reasons=(), annotators=("a",)) -> dict:
    rows = [{"annotator": a, "verdict": verdict, "answer": json.dumps(answer), "updated_at": "t"} for a in annotators]
    return {"verdict": verdict, "answer": answer, "reasons": list(reasons), "agreement": None, "reviews": rows}


# ------------------------------------------------------------------ the outcome of one sample


def test_a_fix_types_the_corrected_answer_as_the_task_wants_it():
    assert outcome(reviewed({"answer": one("fix", "1,234")}), "number")["answer"] == 1234
    assert outcome(reviewed({"answer": one("fix", "Oslo, Bergen")}), "list")["answer"] == ["Oslo", "Bergen"]
    assert outcome(reviewed({"answer": one("fix", "yes")}), "bool")["answer"] is True
    chart = '{"chart_type": "bar", "x": ["Oslo"], "y": [700]}'
    assert outcome(reviewed({"answer": one("fix", chart)}), "chart")["answer"]["y"] == [700]


def test_a_fix_that_does_not_fit_the_task_stays_open_with_the_reason():
    result = outcome(reviewed({"answer": one("fix", "about seven hundred")}), "number")
    assert result["verdict"] == "open" and "must be a number" in result["why"]["unreadable fix"]
    assert outcome(reviewed({"answer": one("fix", None)}), "number")["why"] == {
        "fix without an answer": "the fix gives no corrected answer"}


def test_a_reject_of_either_review_kind_wins_and_every_kind_pushed_must_be_decided():
    both = ("answer", "question")
    rejected = outcome(reviewed({"question": one("reject", reasons=["clarity"])}, both), "number")
    assert rejected["verdict"] == "reject" and rejected["reasons"] == ["question: clarity"]
    waiting = outcome(reviewed({"answer": one("accept")}, both), "number")
    assert waiting["verdict"] == "open" and list(waiting["why"]) == ["question review not done"]
    assert outcome(reviewed({"answer": one("accept"), "question": one("accept")}, both), "number")["verdict"] == "accept"
    conflict = outcome(reviewed({"answer": one("conflict")}), "number")
    assert list(conflict["why"]) == ["answer review in conflict"]


def test_answers_a_person_types_are_read_by_the_answer_type():
    assert parse_typed_text(" 12.5 ", "number") == 12.5
    assert parse_typed_text('["a", "b"]', "list") == ["a", "b"] and parse_typed_text("Oslo", "list") == ["Oslo"]
    assert parse_typed_text("Bergen ", "text") == "Bergen"
    for text, kind in (("", "text"), ("", "list"), ("x", "bool"), ("{bad", "chart"), ("3", "table")):
        with pytest.raises(ValueError):
            parse_typed_text(text, kind)


# ------------------------------------------------------------------ the stage


@pytest.fixture
def checked(tmp_path):
    """A workspace whose vote queued 5 samples (one of them executed: a rule computed it) and left 1 alone."""
    program = Program("sql", "SELECT people FROM t WHERE town = 'Oslo'", "duckdb")
    samples = [sample(n) for n in range(4)] + [sample(4, answer=700, program=program), sample(5, queued=False)]
    workspace = Workspace(tmp_path / "ws")
    dataset = finished_dataset(workspace.stages_dir, "vote", samples, [TABLE])
    workspace.set_current("vote", [dataset])
    return workspace, dataset, samples


def run_review(workspace, dataset, **config):
    digest = snapshot_digest(review_snapshot(workspace.root))
    return run_stage("review", {**config, "decisions": digest}, [dataset], workspace.stages_dir)


def output(run) -> dict[str, Sample]:
    return {s.id: s for s in run.dataset.records("samples")}


def test_decisions_are_applied_fix_accept_reject_and_open_samples_are_marked_pending(checked):
    workspace, dataset, samples = checked
    state = ReviewState(workspace.root)
    state.record_tasks("answer", 1, [(s.id, n + 1, "vote 2/3") for n, s in enumerate(samples[:5])])
    state.upsert_decisions([
        annotation(samples[0].id, "ann@x", "fix", "702"), annotation(samples[0].id, "bob@x", "fix", "702"),
        annotation(samples[1].id, "ann@x", "reject", reason="ambiguous"),
        annotation(samples[2].id, "ann@x", "accept"),
        annotation(samples[3].id, "ann@x", "accept"), annotation(samples[3].id, "bob@x", "reject", reason="bad question"),
    ])
    run = run_review(workspace, dataset)
    out = output(run)
    fixed = out[samples[0].id]
    assert fixed.answer == 702 and fixed.quality == "human-annotated"
    assert json.loads(fixed.provenance["gold_before_review"]) == 700
    assert fixed.provenance["review"] == "fixed" and fixed.provenance["review_agreement"] == "1.00"
    # one review per annotator, named by a pseudonym: a release does not publish annotators' emails
    assert sorted(r.annotator for r in fixed.reviews) == sorted([pseudonym("ann@x"), pseudonym("bob@x")])
    assert fixed.reviews[0].decision == "fix" and not any("@" in r.annotator for r in fixed.reviews)
    assert samples[1].id not in out
    assert run.report["rejected"] == [{"id": samples[1].id, "task": "TBO/table_query",
                                       "question": samples[1].question, "reasons": ["ambiguous"],
                                       "annotators": [pseudonym("ann@x")]}]
    accepted = out[samples[2].id]
    assert (accepted.answer, accepted.quality, accepted.provenance["review"]) == (702, "human-annotated", "accepted")
    assert out[samples[3].id].provenance["review"] == "pending"  # a 1-1 conflict waits for a third annotator
    assert out[samples[4].id].provenance["review"] == "pending"  # pushed, not annotated
    assert out[samples[5].id] == samples[5]  # never queued: untouched
    assert run.report["applied"] == {"fix": 1, "reject": 1, "accept": 1}
    assert (run.report["open"], run.report["queued_not_pushed"], run.report["held_back"]) == (2, 0, 0)


def test_the_stage_reruns_exactly_when_a_decision_changes(checked):
    workspace, dataset, samples = checked
    state = ReviewState(workspace.root)
    state.record_tasks("answer", 1, [(samples[0].id, 1, "vote 2/3")])
    state.upsert_decisions([annotation(samples[0].id, "ann@x", "fix", "many", annotation_id=7)])
    first = run_review(workspace, dataset)
    assert output(first)[samples[0].id].provenance["review"] == "pending"  # "many" is no number
    assert run_review(workspace, dataset).cached
    # the annotator corrects the annotation in Label Studio; the pull replaces it
    state.upsert_decisions([annotation(samples[0].id, "ann@x", "fix", "705", annotation_id=7,
                                       updated="2026-11-22T11:00:00")])
    second = run_review(workspace, dataset)
    assert not second.cached and output(second)[samples[0].id].answer == 705


def test_a_pull_during_the_build_is_refused_rather_than_half_applied(checked):
    workspace, dataset, samples = checked
    state = ReviewState(workspace.root)
    state.record_tasks("answer", 1, [(samples[0].id, 1, "")])
    stale = snapshot_digest(review_snapshot(workspace.root))
    state.upsert_decisions([annotation(samples[0].id, "ann@x", "accept")])
    with pytest.raises(ValueError, match="changed while the build ran"):
        run_stage("review", {"decisions": stale}, [dataset], workspace.stages_dir)


def test_review_required_holds_back_every_sample_still_waiting_for_a_person(checked):
    workspace, dataset, samples = checked
    state = ReviewState(workspace.root)
    state.record_tasks("answer", 1, [(samples[0].id, 1, ""), (samples[1].id, 2, "")])
    state.upsert_decisions([annotation(samples[0].id, "ann@x", "accept")])
    run = run_review(workspace, dataset, required=True)
    out = output(run)
    # accepted: kept; pushed and open: held back; queued, never pushed: held back; never queued: kept
    assert set(out) == {samples[0].id, samples[5].id}
    assert (run.report["open"], run.report["queued_not_pushed"], run.report["held_back"]) == (1, 3, 4)
    with pytest.raises(ValueError, match="required must be true or false"):
        run_review(workspace, dataset, required="yes")


def test_the_release_refuses_samples_waiting_for_review_when_review_is_required(checked, tmp_path):
    from curate.exports.release import ReleaseInputs, write_release

    workspace, dataset, _ = checked
    inputs = ReleaseInputs(sample_files=[str(p) for p in dataset.files("samples")],
                           table_files=[str(p) for p in dataset.files("tables")],
                           build={"signature": "x", "config": {"review": {"required": True}}})
    with pytest.raises(ValueError, match="5 samples are still waiting for review"):
        write_release(inputs, tmp_path / "releases", {"name": "waiting"})
    inputs.build["config"]["review"]["required"] = False
    assert write_release(inputs, tmp_path / "releases", {"name": "waiting"})["status"] == "written"


def test_reverification_counts_a_human_fix_apart_from_a_mismatch(checked):
    from curate.validators.execution import verify

    workspace, dataset, samples = checked
    state = ReviewState(workspace.root)
    state.record_tasks("answer", 1, [(samples[4].id, 1, "")])
    state.upsert_decisions([annotation(samples[4].id, "ann@x", "fix", "701")])  # its program computes 700
    reviewed_dataset = run_review(workspace, dataset).dataset
    report = verify([str(p) for p in reviewed_dataset.files("samples")], [str(p) for p in dataset.files("tables")])
    assert (report["checked"], report["matched"], report["human_fixed"], report["mismatch_count"]) == (1, 0, 1, 0)
    # the same gold without an annotator behind it is a mismatch
    from dataclasses import replace

    fixed = next(s for s in reviewed_dataset.records("samples") if s.id == samples[4].id)
    unsigned = replace(fixed, provenance={k: v for k, v in fixed.provenance.items() if k != "review"})
    other = finished_dataset(workspace.root / "other", "select", [unsigned], [TABLE])
    report = verify([str(p) for p in other.files("samples")], [str(p) for p in other.files("tables")])
    assert (report["human_fixed"], report["mismatch_count"]) == (0, 1)


def test_review_status_says_what_is_open_and_why_and_creates_no_state_where_there_is_none(checked, tmp_path):
    from click.testing import CliRunner

    from curate.annotation.review import state_path, status
    from curate.curation.cli import main

    empty = Workspace(tmp_path / "empty")
    assert status(empty)["open"] == 0 and not state_path(empty.root).exists()
    workspace, _, samples = checked
    state = ReviewState(workspace.root)
    state.record_tasks("answer", 1, [(s.id, n, "") for n, s in enumerate(samples[:3])])
    state.upsert_decisions([annotation(samples[0].id, "ann@x", "fix", "a lot"), annotation(samples[1].id, "ann@x", "accept")])
    shown = CliRunner().invoke(main, ["review", "status", "--workspace", str(workspace.root)])
    assert shown.exit_code == 0, shown.output
    assert "3 pushed, 1 decided (accept 1), 2 still open" in shown.output
    assert "open because: answer review not done 1, unreadable fix 1" in shown.output
    assert f"{samples[0].id}: the corrected answer 'a lot' does not fit the task" in shown.output

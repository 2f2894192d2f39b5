"""The audit's errata loop end to end: a published benchmark imported, audited, its suspect golds pushed to a
real Label Studio on 127.0.0.1, annotated through its API, pulled, the corrected release built beside the
original with the errata in its card, and `curate diff` showing exactly the corrected samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curate.annotation.tasks import decision
from tests.conftest import shared
from tests.test_audit import MMQA_NOTES, MMQA_WRONG
from tests.test_cli import invoke
from curate.validators.audit import proposed_answer

# per test; the build of .envs/labelstudio and its migrated data folder (fixtures) are not counted
pytestmark = [pytest.mark.timeout(300, func_only=True)]


def test_an_audit_verdict_maps_to_the_decision_the_build_applies():
    data = {"proposed": "60.5"}
    verdict = lambda v, *extra: [{"from_name": "verdict", "type": "choices", "value": {"choices": [v]}}, *extra]  # noqa: E731
    confirm = decision("audit", verdict("confirm"), data)
    assert (confirm["verdict"], confirm["answer"]) == ("fix", "60.5")
    typed = {"from_name": "corrected_answer", "type": "textarea", "value": {"text": ["61"]}}
    assert decision("audit", verdict("correct", typed), data)["answer"] == "61"
    assert decision("audit", verdict("keep"), data)["verdict"] == "accept"
    ambiguous = decision("audit", verdict("ambiguous"), data)
    assert (ambiguous["verdict"], ambiguous["reason"]) == ("reject", "ambiguous")
    assert decision("audit", verdict("maybe"), data)["verdict"] == ""  # not a verdict: no decision


def test_the_proposed_correction_is_the_recomputed_answer_written_as_the_gold_is():
    assert proposed_answer("63.0", [[60.5]]) == "60.5"
    assert proposed_answer("Treasury, 115897", [["Treasury", 231794.0]]) == "Treasury, 231794"
    assert proposed_answer("a, b, c", [["a"], ["b"], ["a"]]) == "a, b"  # rows a SQL without DISTINCT repeats: once
    assert proposed_answer(["a"], [["a"], ["b"]]) == '["a", "b"]'  # a JSON gold gets JSON
    assert proposed_answer("x", None) is None and proposed_answer("x", []) is None
    assert proposed_answer("12", 13.0) == "13"  # a candidate's answer


@pytest.fixture
def server(label_studio_template, tmp_path):
    from tests.label_studio import fresh_server

    s = fresh_server(tmp_path / "ls")
    yield s
    s.stop()


@pytest.mark.integration
def test_import_audit_review_in_label_studio_build_the_corrected_release_and_diff_shows_exactly_the_corrections(
        server, tmp_path, monkeypatch):
    from label_studio_sdk import LabelStudio

    from curate.importers import write_import

    samples_file = shared("mmqa", "mmqa_samples.json")
    releases, ws = tmp_path / "releases", tmp_path / "ws"
    write_import("mmqa", [str(samples_file)], name="mmqa", releases=releases)
    original = releases / "mmqa" / "1.0.0"

    # audit: the findings that need a person are queued in the workspace
    out = invoke("audit", original, "--queue", "-w", ws, "--json")
    assert out.exit_code == 1, out.output  # wrong golds found
    findings = {int(f["source_id"]): f for f in json.loads(out.output)}
    queued = {s for s, f in findings.items() if f["needs_review"]}
    assert queued == set(MMQA_WRONG) | {s for s, k in MMQA_NOTES.items() if k != "presentation"}
    sample_of = {s: f["sample_id"] for s, f in findings.items()}

    # push: the token from the environment, as users run it
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", server.token)
    out = invoke("review", "push", "--kind", "audit", "-w", ws, "--url", server.url, "--json")
    assert out.exit_code == 0, out.output
    pushed = json.loads(out.output)
    assert (pushed["queued"], pushed["imported"]) == (len(queued), len(queued))
    again = json.loads(invoke("review", "push", "--kind", "audit", "-w", ws, "--url", server.url, "--json").output)
    assert (again["imported"], again["already_there"]) == (0, len(queued))  # nothing imported twice

    client = LabelStudio(base_url=server.url, api_key=server.token)
    tasks = {int(t.data["source_id"]): t for t in client.tasks.list(project=pushed["project_id"], fields="all")}
    assert set(tasks) == queued
    shown = tasks[2].data  # what the annotator sees: question, table, gold, recomputed answer, evidence
    assert shown["question"] and "<table" in shown["table_html"] and shown["gold"] == "63.0"
    assert shown["recomputed"] == "[[60.5]]" and shown["proposed"] == "60.5"
    assert "wrong_value" in shown["evidence_html"] and "<td>" in shown["evidence_html"]  # the rows behind it

    def annotate(source_id, verdict, answer=None):
        result = [{"from_name": "verdict", "to_name": "question", "type": "choices", "value": {"choices": [verdict]}}]
        if answer is not None:
            result.append({"from_name": "corrected_answer", "to_name": "question", "type": "textarea",
                           "value": {"text": [answer]}})
        client.annotations.create(id=tasks[source_id].id, result=result)

    # the annotator's verdicts, from the hand labels of tests/test_audit.py: 2, 3 and 7 as the audit recomputed
    # them; 0 corrected by hand (its SQL is wrong too: Homeland Security has the most employees, 208000); 9's gold
    # is right; 11 marked ambiguous, to take the removal path (its SQL never filters on the theme it names)
    for source_id in (2, 3, 7):
        annotate(source_id, "confirm")
    annotate(0, "correct", "Homeland Security, 208000")
    annotate(9, "keep")
    annotate(11, "ambiguous")
    out = invoke("review", "pull", "--kind", "audit", "-w", ws, "--url", server.url, "--json")
    assert out.exit_code == 0, out.output
    pulled = json.loads(out.output)
    assert (pulled["pulled_new"], pulled["decided"], pulled["open"]) == (6, 6, 0)
    assert pulled["verdicts"] == {"fix": 4, "accept": 1, "reject": 1}

    # the corrected release: the next version of the same name, beside the original
    out = invoke("build", original, "-w", ws, "--json")
    assert out.exit_code == 0, out.output
    built = json.loads(out.output)["release"]
    assert (built["status"], built["version"], built["parent"]) == ("written", "2.0.0", "1.0.0")
    corrected = Path(built["path"])
    assert corrected == releases / "mmqa" / "2.0.0"

    out = invoke("diff", original, corrected, "--json")
    assert out.exit_code == 0, out.output
    diff = json.loads(out.output)["samples"]
    fixed = {sample_of[s] for s in (0, 2, 3, 7)}
    assert {e["id"] for e in diff["answers_changed"]} == fixed and diff["answer_changed"] == 4
    assert diff["removed"] == 1 and [e["id"] for e in diff["examples"]["removed"]] == [sample_of[11]]
    assert diff["added"] == 0 and diff["changed"] == 5  # the 4 corrected and 9, now marked human-annotated
    new = {e["id"]: e["new_answer"] for e in diff["answers_changed"]}
    assert new[sample_of[2]] == 60.5 and new[sample_of[3]] == "Homeland Security"
    # list golds stay lists, written as the import wrote them (['Treasury', '115897'])
    assert new[sample_of[0]] == ["Homeland Security", "208000"]
    assert new[sample_of[7]] == ["Grand Falls/Grand-Sault", "Perth-Andover"]

    rows = {json.loads(line)["id"]: json.loads(line) for p in corrected.rglob("*.jsonl") for line in p.open()}
    assert sample_of[11] not in rows and len(rows) == 41
    assert json.loads(rows[sample_of[2]]["provenance"]["gold_before_review"]) == "63.0"
    assert rows[sample_of[9]]["quality"] == "human-annotated" and rows[sample_of[9]]["answer"] == "Aroostook"

    card = (corrected / "README.md").read_text()
    assert "## Errata" in card and "4 gold answers corrected, 1 samples removed" in card
    assert f"| 2 | {sample_of[2]} |" in card and "| 60.5 |" in card and "the audit's recomputed answer" in card
    assert f"| 0 | {sample_of[0]} |" in card and "the annotator's answer" in card
    assert f"| 11 | {sample_of[11]} |" in card  # removed, with its reason
    manifest = json.loads((corrected / "manifest.json").read_text())
    assert manifest["build"]["import"]["profile"] == "mmqa"  # still scored by the benchmark's official metrics
    assert manifest["build"]["corrected"]["from"]["version"] == "1.0.0"
    assert invoke("release", "verify", corrected).exit_code == 0

    # the corrected release audited again: what the audit recomputed is the gold now; 0's gold, corrected
    # by hand, still disagrees with its (wrong) SQL
    again = invoke("audit", corrected, "--json")
    assert {f["source_id"] for f in json.loads(again.output) if f["wrong_gold"]} == {"0"}

    # nothing new decided: the build writes nothing
    rerun = json.loads(invoke("build", original, "-w", ws, "--json").output)
    assert rerun["release"]["status"] == "up_to_date" and rerun["reran"] == []


@pytest.mark.integration
def test_a_corrected_build_reads_only_the_release_it_names_as_it_was_written(tmp_path):
    """With no decision the corrected build writes nothing new (same content); a release edited since it was
    written is refused before anything is applied."""
    from curate.importers import write_import

    releases = tmp_path / "releases"
    write_import("mmqa", [str(shared("mmqa", "mmqa_samples.json"))], name="mmqa", releases=releases)
    original = releases / "mmqa" / "1.0.0"
    out = invoke("build", original, "-w", tmp_path / "ws", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["release"]["status"] == "unchanged"  # nothing decided: no new version
    read_back = json.loads(out.output)["steps"][0]  # the imported stage's typed report, in one line
    assert read_back["stage"] == "imported" and read_back["summary"].endswith(" tables of mmqa 1.0.0")
    assert invoke("build", original, "-w", tmp_path / "ws", "--until", "select").exit_code != 0  # not a step here

    import pyarrow as pa
    import pyarrow.parquet as pq

    edited = next((original / "samples").glob("*/*.parquet"))  # gold answers swapped between samples
    edited.chmod(0o644)
    data = pq.read_table(edited)
    swapped = pa.array(data.column("answer").to_pylist()[::-1], type=data.schema.field("answer").type)
    pq.write_table(data.set_column(data.schema.get_field_index("answer"), "answer", swapped), edited)
    out = invoke("build", original, "-w", tmp_path / "ws2", "--json")
    assert out.exit_code != 0 and "fingerprint" in out.output and "changed since" in out.output

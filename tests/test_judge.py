"""The `llm_judge` metric: free-text answers graded 0-100 by a judge model, each distinct answer
once, the prompt recorded; without a judge, or with an unreadable verdict, a row stays unscored."""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pytest

QUESTIONS = {
    "What trend does the population show?": ("It grows every year.", "Steady growth."),
    "Which town stands out, and why?": ("Oslo, by far the largest.", "Oslo: largest."),
    "What would you predict for next year?": ("About 720.", "UNREADABLE"),
}


@pytest.fixture
def judged_release(tmp_path):
    from curate.curation.sample import Sample
    from curate.curation.table import Table
    from tests.files import release_of

    table = Table(name="towns", body=pa.table({"town": ["Oslo", "Bergen"], "people": [700, 290]}))
    samples = [Sample(task="RH/DA/summary_analysis", question=q, answer=gold, answer_type="text",
                      table_ids=(table.id,), origin="llm") for q, (gold, _) in QUESTIONS.items()]
    samples.append(Sample(task="TBO/table_query", question="How many people live in Oslo?", answer=700,
                          answer_type="number", table_ids=(table.id,), origin="rule"))
    return release_of(tmp_path, samples, [table]), samples


def _model(request):
    prompt = request.messages[-1]["content"]
    if "Oslo?" in prompt:
        return "Final Answer: 700"
    question = re.search(r"Question: (.*)\n", prompt).group(1)
    return f"Final Answer: {QUESTIONS[question][1]}"


def _judge(request):
    prompt = request.messages[0]["content"]  # (a retry adds the parse error after it)
    assert "Reference answer:" in prompt and request.params.get("response_format")  # schema-constrained
    answer = re.search(r"Model's answer: (.*)\n", prompt).group(1)
    return {"Steady growth": '{"score": 90, "reason": "same trend"}',
            "Oslo: largest": '{"score": 60, "reason": "no reason given"}'}.get(answer, "I cannot grade this.")


def _client(reply, model):
    from curate.curation.llm.client import ChatClient
    from curate.curation.llm.backends.scripted import ScriptedBackend

    backend = ScriptedBackend(reply, model)
    backend.structured_output = "json_schema"
    return ChatClient(backend), backend


def test_free_text_answers_are_graded_by_the_judge_once_per_distinct_answer(judged_release, tmp_path):
    import pandas as pd

    from curate.evaluation.evaluate import Evaluator, Settings
    from curate.evaluation.judge import AnswerJudge

    release, samples = judged_release
    model, _ = _client(_model, "scripted-model")
    judge_client, judge_backend = _client(_judge, "scripted-judge")
    settings = Settings(modes=["tcot", "icot"])  # two modes, the same answers: each judged once
    Evaluator(release, tmp_path / "out", settings, model, {}, judge=AnswerJudge(judge_client, {})).run()
    results = pd.read_parquet(tmp_path / "out" / "results.parquet")
    by_question = {s.question: results[results["sample_id"] == s.id] for s in samples}
    assert list(by_question["What trend does the population show?"]["score"]) == [0.9, 0.9]
    assert list(by_question["Which town stands out, and why?"]["score"]) == [0.6, 0.6]
    unreadable = by_question["What would you predict for next year?"]
    assert unreadable["score"].isna().all()
    assert "unreadable" in json.loads(unreadable["details"].iloc[0])["unscored"]
    assert list(by_question["How many people live in Oslo?"]["score"]) == [1.0, 1.0]  # its own metric
    # three distinct answers judged; the unreadable one asked twice (the client's retry)
    assert len(judge_backend.calls) == 4
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert "Reference answer: {gold}" in run["judge"]["prompt"] and run["judge"]["name"] == "scripted:scripted-judge"
    details = json.loads(by_question["Which town stands out, and why?"]["details"].iloc[0])
    assert details == {"judge_score": 60.0, "reason": "no reason given"}
    # a rerun asks the judge nothing again
    Evaluator(release, tmp_path / "out", settings, model, {}, judge=AnswerJudge(judge_client, {})).run()
    assert len(judge_backend.calls) == 4


def test_without_a_judge_free_text_answers_are_reported_unscored(judged_release, tmp_path):
    import pandas as pd

    from curate.evaluation.evaluate import Evaluator, Settings

    release, _ = judged_release
    model, _ = _client(_model, "scripted-model")
    Evaluator(release, tmp_path / "out", Settings(), model, {}).run()
    results = pd.read_parquet(tmp_path / "out" / "results.parquet")
    judged = results[results["metric"] == "llm_judge"]
    assert len(judged) == 3 and judged["score"].isna().all()
    assert all("--judge-model" in json.loads(d)["unscored"] for d in judged["details"])
    assert "llm_judge needs --judge-model" in (tmp_path / "out" / "report.md").read_text()

"""The LLM steps of earlier stages with canned replies: phrasing SQL samples (MMQA), questions from
RealHiTBench's per-type prompts, and TReB's question classification."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from curate.curation.answers import parse_typed_answer
from curate.curation.llm import BACKENDS
from curate.curation.pipeline.executor import LocalExecutor
from curate.curation.pipeline.runner import run_stage
from curate.curation.sample import Program, Sample
from curate.curation.table import Table
from curate.generators.llm_writing import compared_values
from tests.canned_backend import CannedBackend
from tests.files import finished_dataset

BACKENDS.register("canned", "tests.canned_backend:CannedBackend")
TOWNS = Table(name="towns", body=pa.table({"town": ["Oslo", "Bergen", "Bodø"], "people": [700, 290, 52]}))


def dataset(root, name, samples=(), tables=(TOWNS,)):
    return finished_dataset(root / "stages", name, samples, tables)


def canned(model, rules, default="junk"):
    CannedBackend.calls_by_model.pop(model, None)
    return {"backend": "canned", "model": model, "rules": rules, "default": default}


def sql_sample(sql, question):
    return Sample(task="MMQA/multi_table_qa", question=question, answer=["Oslo"], answer_type="list",
                  table_ids=(TOWNS.id,), program=Program("sql", sql, "duckdb"), origin="sql", template="t1")


def test_the_values_a_query_compares_against_are_found_and_limits_are_not():
    sql = ("SELECT town FROM towns WHERE people > 500 AND town <> 'Bergen' AND x IN (1, 2) "
           "AND y BETWEEN -3 AND 4 ORDER BY people DESC LIMIT 1")
    assert sorted(compared_values(sql)) == sorted(["500", "Bergen", "1", "2", "-3", "4"])
    assert compared_values("SELECT round(avg(people), 2) FROM towns") == []


def test_phrasing_keeps_rewrites_that_name_every_value_and_says_why_it_drops_the_rest(tmp_path):
    kept = sql_sample("SELECT town FROM towns WHERE people > 500", "Which town has people greater than 500?")
    drops = sql_sample("SELECT town FROM towns WHERE people > 1000", "Which town has people greater than 1000?")
    junk = sql_sample("SELECT town FROM towns WHERE people < 100", "Which town has people less than 100?")
    sql = dataset(tmp_path, "sql", [kept, drops, junk])
    generator = canned("writer", [["greater than 500", '{"question": "Which towns are home to over 500 people?"}'],
                                  ["greater than 1000", '{"question": "Which towns are big?"}']])
    run = run_stage("phrase", {"generator": generator, "tasks": ["MMQA/"]}, [sql, sql], tmp_path / "stages",
                    LocalExecutor(1))
    assert run.report["tried"] == 3 and run.report["samples"] == 1
    assert run.report["by_reason"] == {"kept": 1, "drops_value": 1, "flagged": 1}
    [phrased] = run.dataset.records("samples")
    assert phrased.question == "Which towns are home to over 500 people?" and phrased.origin == "llm"
    assert (phrased.program, phrased.answer) == (kept.program, kept.answer)  # the gold stays the executed one
    assert phrased.provenance["phrased_from"] == kept.id and phrased.id != kept.id
    records = {r["source"]: r for t in run.dataset.read("llm_records") for r in t.to_pylist()}
    assert records[drops.id]["reason"] == "drops_value: 1000"
    assert records[junk.id]["status"] == "flagged" and len(json.loads(records[junk.id]["exchange"])) == 4
    prompt = CannedBackend.calls_by_model["writer"][0].messages[-1]["content"]
    assert "towns(town, people)" in prompt and "WHERE people" in prompt


def test_answers_are_held_to_the_task_answer_type():
    assert parse_typed_answer("Yes", "bool") is True and parse_typed_answer(False, "bool") is False
    assert parse_typed_answer("1,234.5", "number") == 1234.5 and parse_typed_answer("12", "number") == 12
    assert parse_typed_answer(["a", 2], "list") == ["a", 2]
    chart = {"chart_type": "bar", "x": ["a", "b"], "y": [1, 2.5]}
    assert parse_typed_answer(chart, "chart") == chart
    for value, kind in (("maybe", "bool"), ("many", "number"), ([], "list"), ("", "text"),
                        ({"chart_type": "bar", "x": ["a"], "y": [1, 2]}, "chart")):
        with pytest.raises(ValueError):
            parse_typed_answer(value, kind)


def test_questions_from_realhitbench_per_type_prompts_become_candidate_golds(tmp_path):
    clean = dataset(tmp_path, "clean")
    generator = canned("writer", [
        ["value matching", '{"question": "Does Oslo have 700 people?", "answer": "yes"}'],
        ["calculation", '```json\n{"question": "What is the total population?", "answer": "1,042"}\n```'],
        ["counting", '{"question": "How many towns have over 100 people?", "answer": "two"}']])
    config = {"generator": generator, "types": ["RH/FC/value_matching", "RH/NR/calculation", "RH/NR/counting"]}
    run = run_stage("questions", config, [clean], tmp_path / "stages", LocalExecutor(1))
    assert run.report["requests"] == 3 and run.report["samples"] == 2 and run.report["flagged"] == {"RH/NR/counting": 1}
    by_task = {s.task: s for s in run.dataset.records("samples")}
    assert (by_task["RH/FC/value_matching"].answer, by_task["RH/FC/value_matching"].answer_type) == (True, "bool")
    calc = by_task["RH/NR/calculation"]
    assert (calc.answer, calc.origin, calc.program, calc.table_ids) == (1042, "llm", None, (TOWNS.id,))
    prompts = [c.messages[0]["content"] for c in CannedBackend.calls_by_model["writer"]]
    assert all("Oslo | 700" in p for p in prompts)  # the table is in every prompt
    assert any("how many rows or cells meet a condition" in p.lower() for p in prompts)  # the type's instruction
    with pytest.raises(ValueError, match="no prompt for RH/XX"):
        run_stage("questions", {**config, "types": ["RH/XX/nothing"]}, [clean], tmp_path / "stages", LocalExecutor(1))


def test_classification_agrees_queues_disagreements_or_relabels_and_flags_junk(tmp_path):
    def written(task, question, answer_type="number"):
        return Sample(task=task, question=question, answer=3, answer_type=answer_type, table_ids=(TOWNS.id,),
                      origin="llm")

    right = written("RH/NR/counting", "How many towns are listed?")
    wrong = written("RH/NR/calculation", "How many towns have over 100 people?")
    junk = written("RH/NR/counting", "Count the towns.")
    rule = Sample(task="TCO/general_operations", question="Total?", answer=1042, answer_type="number",
                  table_ids=(TOWNS.id,), program=Program("sql", "SELECT 1", "duckdb"), origin="rule")
    select = dataset(tmp_path, "select", [right, wrong, junk, rule])
    classifier = canned("clf", [["How many towns are listed", '{"task": "RH/NR/counting", "reason": "a count"}'],
                                ["over 100 people", '{"task": "RH/NR/counting", "reason": "a count"}'],
                                ["Count the towns", '{"task": "NR/counting"}']])
    run = run_stage("classify", {"classifier": classifier}, [select], tmp_path / "stages", LocalExecutor(1))
    assert {k: run.report[k] for k in ("checked", "agrees", "disagrees", "relabelled", "flagged")} == {
        "checked": 3, "agrees": 1, "disagrees": 1, "relabelled": 0, "flagged": 1}
    out = {s.id: s for s in run.dataset.records("samples")}
    assert out[right.id].provenance["task_check"] == "agrees"
    assert out[wrong.id].provenance["task_check"] == "disagrees" and out[wrong.id].provenance["review"] == "queued"
    assert out[wrong.id].provenance["classified_as"] == "RH/NR/counting"
    assert out[junk.id].provenance["task_check"] == "flagged" and "review" not in out[junk.id].provenance
    assert out[rule.id].provenance == {}  # rule-based samples are not asked about
    prompt = CannedBackend.calls_by_model["clf"][0].messages[-1]["content"]
    assert "- RH/NR/counting:" in prompt and "- TCO/general_operations:" in prompt

    relabel = run_stage("classify", {"classifier": classifier, "relabel": True}, [select], tmp_path / "stages",
                        LocalExecutor(1))
    moved = [s for s in relabel.dataset.records("samples") if s.provenance.get("task_check") == "relabelled"]
    assert relabel.report["relabelled"] == 1 and [s.task for s in moved] == ["RH/NR/counting"]
    assert json.loads(moved[0].provenance["relabelled_from"]) == ["RH/NR/calculation", wrong.id]


def test_the_build_config_names_what_the_llm_steps_need():
    from curate.curation.build import BuildError, resolve_config

    model = {"model": "m", "base_url": "http://127.0.0.1:9/v1"}
    with pytest.raises(BuildError, match="phrase rewrites the sql stage's samples"):
        resolve_config({"build": {"stages": ["rules", "phrase"]}, "models": {"generator": model}})
    with pytest.raises(BuildError, match=r"questions stage needs \[models.generator\]"):
        resolve_config({"build": {"stages": ["questions"]}})
    with pytest.raises(BuildError, match=r"classify stage needs \[models.classifier\]"):
        resolve_config({"build": {"stages": ["rules", "classify"]}})
    config = resolve_config({"build": {"stages": ["sql", "phrase", "questions", "classify"]},
                             "models": {"generator": model, "classifier": model}})
    assert config["generate"]["phrase"]["generator"] == model and config["classify"]["classifier"] == model

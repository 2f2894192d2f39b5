"""Issue 46: per-sample logs, honest coverage, runs kept apart, the viewer, and order in execution match."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from curate.evaluation.metrics import score


# ------------------------------------------------------------------ execution match: order only where asked


@pytest.mark.parametrize("question, ordered", [
    ("List the full name of every carrier that flies to Oslo.", False),
    ("Which towns have more than 100 people?", False),
    ("List the towns sorted by population.", True),
    ("Give the top 3 towns by population.", True),
    ("List the towns from largest to smallest.", True),
    ("Name the towns in alphabetical order.", True),
])
def test_rows_are_compared_in_order_only_where_the_question_asks_for_it(question, ordered):
    tables = {"towns": pa.table({"town": ["Oslo", "Bergen", "Bodø"], "people": [700, 290, 52]})}
    context = {"tables": tables, "program": "SELECT town FROM towns ORDER BY people DESC", "question": question}
    reversed_order = score("execution_match", "SELECT town FROM towns ORDER BY people", None, context)
    assert reversed_order.value == (0.0 if ordered else 1.0), reversed_order.details
    assert score("execution_match", "SELECT town FROM towns ORDER BY people DESC", None, context).value == 1.0
    # a question that asks for order, but a gold without ORDER BY: nothing to compare the order against
    unordered_gold = {**context, "program": "SELECT town FROM towns"}
    assert score("execution_match", "SELECT town FROM towns ORDER BY people", None, unordered_gold).value == 1.0


# ------------------------------------------------------------------ a handmade release and its runs

TASKS = {"TCO/general_operations": 8, "TBO/table_query": 3, "ADA/multi_step_retrieval": 1}


def towns_release(root, version="1.0.0", counts=None):
    """A real release of one table and questions in three tasks (8, 3 and 1 of them): each
    question's answer is its number."""
    from curate.curation.sample import Program, Sample
    from curate.curation.table import Table
    from tests.files import release_of

    table = Table(name="towns", body=pa.table({"town": ["Oslo", "Bergen", "Bodø"], "people": [700, 290, 52]}))
    samples = [Sample(task=task, question=f"Question {n} of {task}: what is {n} plus 100?", answer=n + 100,
                      answer_type="number", table_ids=(table.id,), origin="rule",
                      program=Program("sql", f"SELECT {n} + 100", "duckdb"))
               for task, count in (counts or TASKS).items() for n in range(count)]
    return release_of(root / version, samples, [table], name="towns", version=version)


def evaluate(*args):
    from click.testing import CliRunner

    from curate.curation.cli import main

    return CliRunner().invoke(main, ["evaluate", *map(str, args), "-q"])


def replay_file(path, samples, right=lambda n: True):
    lines = [json.dumps({"sample_id": s.id, "reply": f"Final Answer: {s.answer if right(n) else 'nothing'}"})
             for n, s in enumerate(samples)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_limit_draws_every_task_before_a_second_sample_of_any(tmp_path):
    from curate.evaluation.dataset import ReleaseData
    from curate.evaluation.selection import select

    data = ReleaseData(towns_release(tmp_path))
    three = select(data, limit=3)
    assert sorted(s.task for s in three) == sorted(TASKS)  # the task of 1 sample is drawn too
    assert [s.id for s in select(data, limit=3)] == [s.id for s in three]  # the same N, the same samples
    seven = select(data, limit=7)
    by_task = {t: sum(1 for s in seven if s.task == t) for t in TASKS}
    assert by_task == {"TCO/general_operations": 3, "TBO/table_query": 3, "ADA/multi_step_retrieval": 1}


def test_selections_that_match_nothing_and_ignored_options_are_usage_errors(tmp_path):
    release = towns_release(tmp_path)
    done = evaluate(release, "--backend", "gold", "--tasks", "TCO/,XYZ/", "--out", tmp_path / "o")
    assert done.exit_code == 2 and "--tasks XYZ/: no task of towns/1.0.0 starts with it" in done.output, done.output
    done = evaluate(release, "--backend", "gold", "--split", "dev", "--out", tmp_path / "o")
    assert done.exit_code == 2 and "--split dev: towns/1.0.0 has no such split (its splits: test)" in done.output
    file = replay_file(tmp_path / "r.jsonl", [])
    done = evaluate(release, "--backend", "gold", "--predictions", file, "--out", tmp_path / "o")
    assert done.exit_code == 2 and "--predictions would be ignored" in done.output, done.output
    done = evaluate(release, "--backend", "replay", "--predictions", file, "--tasks", "XYZ/", "--out", tmp_path / "o")
    assert done.exit_code == 2 and "--tasks XYZ/" in done.output
    assert not (tmp_path / "o").exists()  # refused before anything was written


def test_a_partial_replay_says_so_first_and_exits_1_unless_allowed(tmp_path):
    from curate.evaluation.dataset import ReleaseData

    release = towns_release(tmp_path)
    samples = ReleaseData(release).samples()
    file = replay_file(tmp_path / "five.jsonl", samples[:5])
    done = evaluate(release, "--backend", "replay", "--predictions", file, "--out", tmp_path / "partial")
    assert done.exit_code == 1
    assert done.stderr.startswith("PARTIAL RUN: 5 of 12 scored (7 without a prediction)"), done.stderr
    first = (tmp_path / "partial" / "report.md").read_text().splitlines()[0]
    assert first.startswith("PARTIAL RUN: 5 of 12 scored") and "--allow-partial accepts this" in first
    done = evaluate(release, "--backend", "replay", "--predictions", file, "--out", tmp_path / "partial",
                    "--allow-partial")
    assert done.exit_code == 0, done.output
    first = (tmp_path / "partial" / "report.md").read_text().splitlines()[0]
    assert first == "PARTIAL RUN: 5 of 12 scored (7 without a prediction): accepted with --allow-partial."
    full = replay_file(tmp_path / "all.jsonl", samples)
    done = evaluate(release, "--backend", "replay", "--predictions", full, "--out", tmp_path / "full")
    assert done.exit_code == 0 and "PARTIAL" not in done.output
    assert (tmp_path / "full" / "report.md").read_text().startswith("Coverage: 12 of 12 scored (complete).")


def test_every_run_writes_a_per_sample_log_that_pandas_duckdb_and_datasets_read(tmp_path):
    import duckdb
    import pandas as pd

    from curate.evaluation.dataset import ReleaseData

    release = towns_release(tmp_path)
    samples = ReleaseData(release).samples()
    file = replay_file(tmp_path / "r.jsonl", samples, right=lambda n: n % 2 == 0)
    out = tmp_path / "out"
    assert evaluate(release, "--backend", "replay", "--predictions", file, "--out", out).exit_code == 0
    log = pd.read_json(out / "samples.jsonl", lines=True, dtype=False)
    assert len(log) == 12 and set(log["score"]) == {0.0, 1.0}
    for column in ("question", "gold", "gold_program", "table_ids", "serialization", "prompt_id", "reply", "answer",
                   "score", "reason", "metric", "prompt_tokens", "completion_tokens", "latency_s", "failure", "run_id"):
        assert column in log, column
    wrong = log[log["score"] == 0].iloc[0]
    assert wrong["reply"] == "Final Answer: nothing" and wrong["reason"].startswith("does not match the gold")
    assert json.loads(wrong["gold"]) == next(s.answer for s in samples if s.id == wrong["sample_id"])
    prompts = {json.loads(line)["prompt_id"]: json.loads(line)["messages"]
               for line in (out / "prompts.jsonl").read_text().splitlines()}
    sent = prompts[wrong["prompt_id"]][-1]["content"]
    assert wrong["question"] in sent and "Bergen" in sent  # the table as the model saw it
    counted = duckdb.sql(f"SELECT task, count(*) n, avg(score) FROM read_json_auto('{out / 'samples.jsonl'}') "
                         "GROUP BY task ORDER BY task").fetchall()
    assert [(t, n) for t, n, _ in counted] == sorted((t, n) for t, n in TASKS.items())
    import datasets

    loaded = datasets.load_dataset("json", data_files=str(out / "samples.jsonl"), split="train",
                                   cache_dir=str(tmp_path / "hf"))
    assert loaded.num_rows == 12 and "reply" in loaded.column_names
    report = (out / "report.md").read_text()
    # one sample: its n, and Wilson's wide interval (not the bootstrap's 0.00-0.00)
    assert "| ADA/multi_step_retrieval | 0.000 (n=1; 0.00-0.79) |" in report
    assert "| TCO/general_operations | 0.500 (n=8; " in report


def test_runs_are_never_overwritten_and_different_releases_are_not_compared(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from curate.curation.cli import main

    first, second = towns_release(tmp_path, "1.0.0"), towns_release(tmp_path, "1.1.0", {"TCO/general_operations": 8})
    monkeypatch.chdir(tmp_path)
    assert evaluate(first, "--backend", "gold").exit_code == 0
    assert evaluate(second, "--backend", "gold").exit_code == 0
    runs = sorted(p.parent.relative_to(tmp_path).as_posix() for p in tmp_path.glob("results/**/run.json"))
    assert len(runs) == 2 and runs[0].startswith("results/towns/1.0.0/gold/run-") \
        and runs[1].startswith("results/towns/1.1.0/gold/run-")
    assert evaluate(first, "--backend", "gold").exit_code == 0  # the same settings: the same run, resumed
    assert evaluate(first, "--backend", "gold", "--limit", "3").exit_code == 0  # others: a folder of its own
    assert len(list(tmp_path.glob("results/**/run.json"))) == 3
    done = evaluate(first, "--backend", "gold", "--limit", "4", "--out", runs[0])
    assert done.exit_code == 2 and "holds a run with other settings or replies" in done.output, done.output
    report = lambda *args: CliRunner().invoke(main, ["report", *runs, "--out", "cmp", *args])  # noqa: E731
    refused = report()
    assert refused.exit_code == 1 and "the runs are of different releases" in refused.output
    assert "towns/1.0.0" in refused.output and "towns/1.1.0" in refused.output
    allowed = report("--allow-mismatch", "--json")
    assert allowed.exit_code == 0 and "WARNING: the runs are of different releases" in allowed.stderr
    summary = json.loads(allowed.stdout)
    assert summary["comparison"]["shared"] == 8 and "the 8 predictions" in summary["comparison"]["note"]
    assert sorted(summary["models"]) == ["replay:gold-replies.jsonl @ towns/1.0.0",
                                        "replay:gold-replies.jsonl @ towns/1.1.0"]
    assert all(m["n"] == 8 for m in summary["models"].values())
    text = (tmp_path / "cmp" / "report.md").read_text()
    assert "WARNING: these runs differ" in text and "Compared on the 8 predictions" in text


def test_an_empty_replay_file_scores_none_of_the_selection(tmp_path):
    release = towns_release(tmp_path)
    done = evaluate(release, "--backend", "replay", "--predictions", replay_file(tmp_path / "none.jsonl", []),
                    "--out", tmp_path / "out", "--tasks", "TBO/")
    assert done.exit_code == 1 and "PARTIAL RUN: 0 of 3 scored (3 without a prediction)" in done.stderr, done.output

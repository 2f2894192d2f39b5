"""`curate evaluate`'s parts: answer extraction, metrics against hand-computed values, robustness
statistics on constructed examples, and the evaluator over a real release with scripted models."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from curate.evaluation.extract import extract_answer, extract_sql
from curate.evaluation.metrics import score
from curate.evaluation.robustness import bootstrap_interval, kendalls_w, performance, robustness, separability

# ------------------------------------------------------------------ extraction


@pytest.mark.parametrize("reply, answer, method", [
    ("Let me count.\nFinal Answer: 42", "42", "final_answer"),
    ("Final Answer: 3\nWait.\nfinal answer: **1,234**.", "1,234", "final_answer"),
    ("Final Answer: Oslo, Bergen", ["Oslo", "Bergen"], "final_answer"),
    ("Final Answer: 68, 106", ["68", "106"], "final_answer"),
    ('Here it is:\n```json\n{"answer": [1, 2]}\n```', [1, 2], "json"),
    ('The result is {"answer": "Paris"} as computed.', "Paris", "json"),
    ("So the total is \\boxed{\\frac{1}{2}} and also \\boxed{17}", "17", "boxed"),
    ("\\boxed{a, b}", ["a", "b"], "boxed"),
    ("I am not sure.", None, "none"),
])
def test_answers_are_extracted_by_each_pattern(reply, answer, method):
    found = extract_answer(reply)
    assert (found.answer, found.method) == (answer, method)


def test_a_programs_output_is_the_answer_when_the_reply_states_none():
    assert extract_answer("```python\nprint(7)\n```", program_output="7\n").answer == "7"
    assert extract_answer("", program_output="").method == "none"
    assert extract_sql("```sql\nSELECT 1\n```\nFinal Answer: x").answer == "SELECT 1"
    # a program that prints its own Final Answer line (TableBench's PoT instruction asks for one): the
    # line in the code is no statement, the line it printed is the answer
    code = "```python\nanswer = 6 * 7\nprint(f'Final Answer: {answer}')\n```"
    printed = extract_answer(code, program_output="rows: 3\nFinal Answer: 42\n")
    assert (printed.answer, printed.method) == ("42", "program_output")
    assert extract_answer(code + "\nFinal Answer: 41").answer == "41"  # no program run: the reply's own line


# ------------------------------------------------------------------ metrics, by hand


@pytest.mark.parametrize("metric, prediction, gold, expected", [
    ("exact_match", "42.00", 42, 1.0), ("exact_match", "42.5", 42, 0.0),
    ("exact_match", ["b", "a"], ["a", "b"], 1.0), ("exact_match", "TRUE", True, 1.0),
    ("numeric_match", "0.947", 0.95, 1.0), ("numeric_match", "0.94", 0.95, 0.0),
    ("tolerance_10pct", "109", 100, 1.0), ("tolerance_10pct", "111", 100, 0.0),
    ("token_f1", "the cat sat", "cat sat down", 0.8),  # P 2/2, R 2/3
    ("rouge_l", "the cat was found under the bed", "the cat was under the bed", 12 / 13),  # LCS 6: P 6/7, R 1
    ("bleu", "the cat sat on the mat", "the cat sat on the mat", 1.0), ("bleu", "dog", "the cat sat on the mat", 0.0),
    ("set_f1", ["a", "b", "c"], ["b", "c", "d"], 2 / 3), ("partial_match", ["a", "b", "x"], ["a", "b", "c", "d"], 0.5),
    ("exact_match", None, 42, 0.0),
    ("key_selection", ["Orders.`ID`", "customers.id"], ["customers.id", "orders.id"], 1.0),
    ("key_selection", ["orders.id"], ["customers.id", "orders.id"], 0.0),
    ("key_selection", "orders.cid → customers.id", ["orders.cid -> customers.id"], 1.0),
])
def test_metrics_match_hand_computed_values(metric, prediction, gold, expected):
    assert score(metric, prediction, gold).value == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("metric", ["set_f1", "partial_match", "retrieval_prf_at_k"])
def test_set_metrics_never_take_a_boolean_for_a_number(metric):
    """Python's True == 1 made {True} & {1.0} a match: "yes" scored 1.0 against a gold of ["1"]."""
    assert score(metric, "yes", ["1"]).value == 0.0
    assert score(metric, 1, [True]).value == 0.0
    assert score(metric, ["no", 0], [False, "0"]).value == 1.0  # each matches its own kind
    assert score(metric, "1", [1]).value == 1.0  # text and number: one number, as normalize_answer reads it


def test_key_selection_reports_precision_and_recall_beside_accuracy():
    s = score("key_selection", ["orders.id", "orders.x"], ["customers.id", "orders.id"])
    assert s.value == 0.0 and s.details["precision"] == 0.5 and s.details["recall"] == 0.5


def test_retrieval_precision_recall_f1_at_k():
    s = score("retrieval_prf_at_k", ["t1", "t3", "t2"], ["t1", "t2"], {"k": 2})
    assert s.value == pytest.approx(0.5) and s.details == {"k": 2, "precision": 0.5, "recall": 0.5}
    assert score("retrieval_prf_at_k", ["t1", "t3", "t2"], ["t1", "t2"], {"k": 3}).value == pytest.approx(0.8)


def test_text_to_sql_is_scored_by_executing_both_queries():
    tables = {"towns": pa.table({"town": ["Oslo", "Bergen", "Bodø"], "people": [700, 290, 52]})}
    context = {"tables": tables, "program": "SELECT town FROM towns WHERE people > 100"}
    assert score("execution_match", "select town from towns where people >= 290", None, context).value == 1.0
    assert score("execution_match", "SELECT town FROM towns", None, context).value == 0.0
    broken = score("execution_match", "SELECT town FROM WHERE", None, context)
    assert score("execution_match", "Oslo", None, context).details["error"] == "the answer is not a query"
    assert broken.value == 0.0 and broken.details["error"].startswith("unreadable SQL")
    ordered = {**context, "program": "SELECT town FROM towns ORDER BY people", "question": "List the towns sorted "
               "by population, smallest first."}
    assert score("execution_match", "SELECT town FROM towns ORDER BY people DESC", None, ordered).value == 0.0


# ------------------------------------------------------------------ robustness statistics


def test_performance_and_robustness_over_configurations():
    assert performance({"markdown": [1, 1], "csv": [0, 1]}) == pytest.approx(0.75)
    # e1 scores 1 under one configuration and 0 under the other, e2 always 1: mean range 0.5
    assert robustness({"e1": [1, 0], "e2": [1, 1]}) == pytest.approx(0.5)


def test_kendalls_w_on_rankings_with_a_known_answer():
    same = np.array([[0.9, 0.5, 0.1, 0.3]] * 3)
    assert kendalls_w(same) == pytest.approx(1.0)
    assert kendalls_w(np.array([[1, 2, 3], [3, 2, 1]])) == pytest.approx(0.0)
    # 3 raters, 3 models: rank sums 4, 5, 9 -> S = 14, W = 12 * 14 / (9 * 24) = 0.7778
    w = kendalls_w(np.array([[1, 2, 3], [2, 1, 3], [1, 2, 3]]))
    assert w == pytest.approx(12 * 14 / (9 * 24))


def test_bootstrap_intervals_and_separability():
    mean, low, high = bootstrap_interval([0, 1] * 50)
    assert mean == 0.5 and low < 0.5 < high and high - low < 0.3
    apart = {"a": (0.9, 0.85, 0.95), "b": (0.5, 0.45, 0.55), "c": (0.52, 0.47, 0.57)}
    assert separability(apart) == pytest.approx(2 / 3)  # a-b and a-c are apart; b-c overlap


# ------------------------------------------------------------------ the evaluator, scripted models


def scripted_client(reply):
    from curate.curation.llm.client import ChatClient
    from curate.curation.llm.backends.scripted import ScriptedBackend

    backend = ScriptedBackend(reply, "scripted-model")
    return ChatClient(backend), backend


def test_pot_programs_run_in_the_sandbox_and_their_output_is_scored(small_release, tmp_path):
    """The scripted model answers every SQL-computed question with a program that runs the
    sample's own SQL over `df`: its printed output must score as the gold answer."""
    from curate.evaluation.dataset import ReleaseData
    from curate.evaluation.evaluate import Evaluator, Settings

    data = ReleaseData(small_release)
    programs = {s.question: s.program["text"] for s in data.samples(tasks=["TCO/general_operations"])
                if s.program and s.program["kind"] == "sql" and " t " in f" {s.program['text']} "}

    def reply(request):
        prompt = request.messages[-1]["content"]
        sql = next(p for q, p in programs.items() if f"Question: {q}" in prompt)
        return f"```python\nimport duckdb\nt = df\nprint(duckdb.sql({sql!r}).fetchall()[0][0])\n```"

    client, backend = scripted_client(reply)
    settings = Settings(modes=["pot"], tasks=["TCO/general_operations"], limit=None, sandbox_workers=2)
    ev = Evaluator(small_release, tmp_path / "out", settings, client, {"temperature": 0})
    ev.samples = lambda: [s for s in data.samples(tasks=["TCO/general_operations"]) if s.question in programs]
    result = ev.run()
    import pandas as pd

    results = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert len(results) == len(programs) > 0 and result["predicted_now"] == len(programs)
    assert (results["method"] == "program_output").all()
    assert results["score"].mean() == pytest.approx(1.0), results[results["score"] < 1][["gold", "answer"]]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| TCO / pot |" in report and (tmp_path / "out" / "report.html").read_text().count("data:image/png") >= 1
    # a rerun predicts nothing again
    again = Evaluator(small_release, tmp_path / "out", settings, client, {"temperature": 0})
    again.samples = ev.samples
    assert again.run()["predicted_now"] == 0 and len(backend.calls) == len(programs)


def test_a_retrieval_prompt_lists_each_candidates_column_key_under_it():
    from curate.evaluation.modes import prompt

    pool = {"lahman.Teams": ["yearID", "WCWin"], "lahman.People": ["playerID", "height"]}
    text = prompt("tcot", "Which tables ...?", [], [], "MMQA/multi_table_retrieval", pool,
                  pool_keys={"lahman.Teams": [("WCWin", "wild card berth")]})
    assert "- lahman.Teams (columns: yearID, WCWin)\n  column key: WCWin: wild card berth\n- lahman.People" in text
    assert text.count("column key") == 1  # People has no documented header


def test_a_question_names_a_column_by_its_label_and_the_prompt_shows_the_column_key(small_release, tmp_path):
    """openintro's tables are documented: a question says "number of girls born", not "number of
    girls born (`girls`)", and the model finds `girls` in the column key under the table, which
    every prompt of `curate evaluate` shows (only the columns the table shows)."""
    import pyarrow.parquet as pq

    from curate.curation import semantics
    from curate.curation.column_key import entries
    from curate.evaluation.dataset import ReleaseData
    from curate.evaluation.evaluate import Evaluator, Settings

    data = ReleaseData(small_release)
    tables = pq.read_table(small_release / "tables" / "tables.parquet", columns=["id", "columns", "semantics"]).to_pylist()
    keys = {t["id"]: entries(semantics.from_json(t["semantics"]), t["columns"]) for t in tables}
    asked = [s for s in data.samples() if len(s.table_ids) == 1 and keys.get(s.table_ids[0])
             and any(label in s.question for _, label in keys[s.table_ids[0]])]
    assert asked, "no question over a documented table names a column by its label"
    for s in asked:
        for column, label in keys[s.table_ids[0]]:
            assert f"{label} (`{column}`)" not in s.question, s.question
    prompts = []

    def reply(request):
        prompts.append(request.messages[-1]["content"])
        return "Final Answer: 0"

    client, _ = scripted_client(reply)
    settings = Settings(modes=["tcot"], tasks=[asked[0].task], limit=None)
    ev = Evaluator(small_release, tmp_path / "out", settings, client, {"temperature": 0})
    ev.samples = lambda: asked[:3]
    ev.run()
    assert len(prompts) == len(asked[:3])
    for s in asked[:3]:
        text = next(p for p in prompts if f"Question: {s.question}" in p)
        key = keys[s.table_ids[0]]
        assert "\nColumn key:\n" + "\n".join(f"- {c}: {label}" for c, label in key) in text


def test_icot_runs_each_code_turn_in_one_session_and_feeds_the_output_back(small_release, tmp_path):
    from curate.evaluation.evaluate import Evaluator, Settings

    def reply(request):
        last = request.messages[-1]["content"]
        if last.startswith("Output:"):
            seen = last.split("\n")[1]
            if len(request.messages) == 3:  # after the first cell: a second one using its variable
                return "```python\nprint(rows + 1000)\n```"
            return f"Final Answer: {seen}"
        return "```python\nrows = len(df)\nprint(rows)\n```"

    client, backend = scripted_client(reply)
    settings = Settings(modes=["icot"], tasks=["TU/fact_checking"], limit=2, max_turns=3)
    Evaluator(small_release, tmp_path / "out", settings, client, {}).run()
    import sqlite3

    from curate.evaluation.dataset import ReleaseData

    data = ReleaseData(small_release)
    rows = sqlite3.connect(tmp_path / "out" / "predictions.sqlite").execute(
        "SELECT sample_id, answer, turns FROM predictions").fetchall()
    assert len(rows) == 2
    by_id = {s.id: s for s in data.samples()}
    for sample_id, answer, turns in rows:
        turns = json.loads(turns)
        n_rows = data.table(by_id[sample_id].table_ids[0]).n_rows
        assert [t["output"].strip() for t in turns] == [str(n_rows), str(n_rows + 1000)]  # the session kept `rows`
        assert json.loads(answer) == str(n_rows + 1000)


def test_replay_scores_predictions_made_elsewhere_and_names_a_bad_line(small_release, tmp_path):
    from curate.curation.cli import main
    from click.testing import CliRunner

    from curate.evaluation.dataset import ReleaseData

    data = ReleaseData(small_release)
    samples = data.samples(tasks=["TCO/general_operations"])[:4]
    lines = [json.dumps({"sample_id": s.id, "reply": f"Final Answer: {s.answer}"}) for s in samples[:3]]
    lines.append(json.dumps({"sample_id": samples[3].id, "reply": "no idea"}))
    lines.append(json.dumps({"sample_id": samples[0].id, "reply": "Final Answer: 0", "config": "csv:row_shuffle"}))
    file = tmp_path / "p.jsonl"
    file.write_text("\n".join(lines))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["evaluate", str(small_release), "--backend", "replay", "--predictions",
                                       str(file), "--out", str(out), "--json", "--tasks", "TCO/general_operations",
                                       "--allow-partial"])
    assert result.exit_code == 0, result.output
    assert "PARTIAL RUN: 5 of 12 scored (7 without a prediction): accepted with --allow-partial" in result.output
    import pandas as pd

    r = pd.read_parquet(out / "results.parquet")
    assert len(r) == 5 and set(r["config"]) == {"markdown:none", "csv:row_shuffle"}
    default = r[r["config"] == "markdown:none"].set_index("sample_id")
    assert default.loc[samples[0].id, "score"] == 1.0 and default.loc[samples[3].id, "score"] == 0.0
    assert not default.loc[samples[3].id, "extracted"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n" + json.dumps({"sample_id": "smp-nope", "reply": "x"}) + "\n")
    failed = CliRunner().invoke(main, ["evaluate", str(small_release), "--backend", "replay", "--predictions",
                                       str(bad), "--out", str(tmp_path / "o2")])
    assert failed.exit_code != 0 and "bad.jsonl:2: sample 'smp-nope' is not in the release" in failed.output
    bad.write_text(json.dumps({"sample_id": samples[0].id, "reply": "x", "config": "yaml:none"}) + "\n")
    failed = CliRunner().invoke(main, ["evaluate", str(small_release), "--backend", "replay", "--predictions",
                                       str(bad), "--out", str(tmp_path / "o3")])
    assert failed.exit_code != 0 and "bad.jsonl:1: configuration 'yaml:none'" in failed.output


def test_curate_report_compares_models_with_rankings_intervals_and_kendalls_w(small_release, tmp_path):
    """Two replayed 'models' over two configurations: the one that states the gold ranks first."""
    from click.testing import CliRunner

    from curate.curation.cli import main
    from curate.evaluation.dataset import ReleaseData

    data = ReleaseData(small_release)
    samples = data.samples(tasks=["TCO/", "TBO/"])
    folders = []
    for name, right in (("good", 1.0), ("weak", 0.3)):
        lines = []
        for n, s in enumerate(samples):
            for config in ("markdown:none", "csv:row_shuffle"):
                stated = s.answer if (n % 10) < right * 10 else "nothing"
                lines.append(json.dumps({"sample_id": s.id, "reply": f"Final Answer: {stated}", "config": config}))
        file = tmp_path / f"{name}.jsonl"
        file.write_text("\n".join(lines))
        out = tmp_path / name
        done = CliRunner().invoke(main, ["evaluate", str(small_release), "--backend", "replay", "--predictions",
                                         str(file), "--out", str(out), "-q", "--tasks", "TCO/,TBO/"])
        assert done.exit_code == 0, done.output
        folders.append(str(out))
    done = CliRunner().invoke(main, ["report", *folders, "--out", str(tmp_path / "report"), "--json"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["ranking"] == ["replay:good.jsonl", "replay:weak.jsonl"]
    good, weak = summary["models"]["replay:good.jsonl"], summary["models"]["replay:weak.jsonl"]
    assert good["score"] > weak["score"] and good["interval"][0] > weak["interval"][1]
    assert summary["separability"] == 1.0 and summary["kendalls_w"] == pytest.approx(1.0)
    assert good["robustness"] == pytest.approx(1.0)  # the same answer under both configurations
    html = (tmp_path / "report" / "report.html").read_text()
    assert html.count("data:image/png;base64") == 3  # skills x modes, configurations, ranking


def test_treethinker_aligns_the_question_to_the_header_tree_then_answers(tmp_path):
    """Turn 1 shows the header tree as TreeThinker's tuples and asks only for the alignment; turn 2
    continues the same conversation to a final answer."""
    import pandas as pd

    from curate.curation.sample import Sample
    from curate.curation.table import HeaderNode, Table
    from curate.evaluation.evaluate import Evaluator, Settings
    from tests.files import release_of

    header = (HeaderNode("C", 0, 0, 0, "Town"), HeaderNode("C", 0, 1, 2, "Population"),
              HeaderNode("C", 1, 1, 1, "Male"), HeaderNode("C", 1, 2, 2, "Female"))
    table = Table(name="census", header=header, body=pa.table({"Town": ["Oslo", "Bergen"], "Population / Male": [350, 140],
                                                               "Population / Female": [352, 150]}))
    sample = Sample(task="RH/NR/calculation", question="How many women live in Bergen?", answer=150,
                    answer_type="number", table_ids=(table.id,), origin="import")
    release = release_of(tmp_path, [sample], [table])

    def reply(request):
        if len(request.messages) == 1:
            prompt = request.messages[0]["content"]
            assert "(C, 0, 1, 2, 'Population')\n(C, 1, 1, 1, 'Male')" in prompt and "Do not answer yet" in prompt
            return "women -> C: Population > Female; Bergen -> row 1 (Town)"
        assert request.messages[1]["content"].startswith("women -> C: Population > Female")
        assert "Step 2 of 2" in request.messages[2]["content"]
        return "Bergen's row under Population > Female holds 150.\nFinal Answer: 150"

    client, backend = scripted_client(reply)
    Evaluator(release, tmp_path / "out", Settings(modes=["treethinker"]), client, {}).run()
    results = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert list(results["score"]) == [1.0] and list(results["mode"]) == ["treethinker"]
    assert len(backend.calls) == 2
    import sqlite3

    turns = sqlite3.connect(tmp_path / "out" / "predictions.sqlite").execute("SELECT turns FROM predictions").fetchone()
    assert json.loads(turns[0])[0]["alignment"].startswith("women -> C: Population > Female")


def test_the_gold_backend_scores_exactly_one_on_every_task_in_tcot_and_pot(small_release, tmp_path):
    """`curate evaluate --backend gold`: each sample answered with its own gold, written as the mode
    asks. Prompts, extraction and metrics agree on every answer convention only if it is 1.000."""
    from click.testing import CliRunner

    from curate.curation.cli import main

    out = tmp_path / "gold"
    done = CliRunner().invoke(main, ["evaluate", str(small_release), "--backend", "gold", "--modes", "tcot,pot",
                                     "--out", str(out), "--json", "-q"])
    assert done.exit_code == 0, done.output
    import pandas as pd

    results = pd.read_parquet(out / "results.parquet")
    assert set(results["mode"]) == {"tcot", "pot"} and results["task"].nunique() >= 15
    wrong = results[results["score"] != 1.0]
    assert wrong.empty, wrong[["task", "mode", "gold", "answer", "error"]].head(10).to_string()


def test_an_answer_that_holds_commas_is_given_back_as_json_and_read_as_one_value():
    from curate.curation.answers import final_answer, normalize_answer
    from curate.evaluation.gold import written

    for gold in ("July 1, 2016", ["Breen, Mary", "Kim"], ["a", "b"], "[18,]", 3.5, True, "*Kruger60A", ".",
                 ["x.", "y"]):
        read = final_answer(f"Final Answer: {written(gold)}")
        assert normalize_answer(read) == normalize_answer(gold), (gold, written(gold), read)
    assert final_answer("Final Answer: Reading, Berkshire") == ["Reading", "Berkshire"]  # unquoted: two values


def test_a_tasks_metric_settings_come_from_the_taxonomy():
    """MMQA retrieval is scored at the k the taxonomy names, not a k written into the metric."""
    from curate.curation.taxonomy import tasks
    from curate.evaluation.dataset import EvalSample
    from curate.evaluation.scoring import score_predictions

    k = dict(tasks()["MMQA/multi_table_retrieval"].metric_settings)["k"]
    gold = ["t1", "t2"]
    ranked = [f"x{i}" for i in range(k - 1)] + ["t1", "t2"]  # t1 is the k-th answer, t2 the (k+1)-th
    sample = EvalSample("s1", "MMQA/multi_table_retrieval", "?", gold, "list", (), None, "test")
    row = {"sample_id": "s1", "answer": json.dumps(ranked), "config": "markdown:none", "mode": "tcot", "method": "final",
           "program": "", "error": "", "turns": "[]", "prompt_tokens": 0, "completion_tokens": 0}
    result = score_predictions(None, [row], [sample], "m")[0]
    assert json.loads(result["details"])["k"] == k and json.loads(result["details"])["recall"] == 0.5


def test_a_retrieval_prompt_lists_every_candidate_table_with_its_columns():
    """MMQA's retrieval questions name columns and values, never tables: the model chooses among
    the pool's tables by what they hold."""
    from curate.evaluation.modes import prompt

    pool = {"pscl.iraqVote": ["rollcall", "state.abb", "gorevote"], "pscl.state.info": ["state", "icpsr"]}
    text = prompt("tcot", "How many states ...?", [], [], "MMQA/multi_table_retrieval", pool)
    assert "- pscl.iraqVote (columns: rollcall, state.abb, gorevote)" in text
    assert "- pscl.state.info (columns: state, icpsr)" in text
    # a list of tables to choose from, not "a table and a question about it" over a list (a review read it so)
    assert text.startswith("You are given a list of tables (each with its columns) and a question about them.")
    assert "Tables:\n- pscl.iraqVote" in text and "Table:" not in text


def test_the_prompt_shows_each_table_under_its_caption_once():
    """The caption says what the figures are (revisions, not growth); HTML carries its own, so it is not
    said twice."""
    from curate.evaluation.modes import prompt

    markdown = "| Date | Output per job |\n| --- | --- |\n| 2016 Q3 | -0.1 |"
    one = prompt("tcot", "Which quarter was revised most?", ["productivity"], [markdown],
                 captions=["Revisions since previously published estimates"])
    assert "Table:\nRevisions since previously published estimates\n| Date |" in one
    html = "<table><caption>Revisions since previously published estimates</caption><tr><td>1</td></tr></table>"
    assert prompt("tcot", "Q?", ["t"], [html], captions=["Revisions since previously published estimates"]).count(
        "Revisions since previously published estimates") == 1
    two = prompt("tcot", "Q?", ["a", "b"], ["| x |", "| y |"], captions=["", "Homeless Data"])
    assert "Table a:\n| x |" in two and "Table b:\nHomeless Data\n| y |" in two
    assert prompt("tcot", "Q?", ["t"], [markdown]) == prompt("tcot", "Q?", ["t"], [markdown], captions=[""])


def test_a_table_the_question_names_is_shown_under_its_name_even_alone():
    """"Which columns form the primary key of the table "Parks"?" over one table captioned "ballparks":
    the reader must see which table is "Parks"."""
    from curate.evaluation.modes import prompt

    keyed = prompt("tcot", 'Which columns form the primary key of the table "Parks"?', ["Parks"], ["| parkkey |"],
                   task="MMQA/primary_key_selection", captions=["ballparks"])
    assert "Table Parks:\nballparks\n| parkkey |" in keyed
    assert "Table:\n| x |" in prompt("tcot", "Q?", ["t"], ["| x |"], task="DA/correlation_analysis")
    for nameless in ([], [""]):  # a record without its table's name still shows the table
        assert "Table:\n| parkkey |" in prompt("tcot", "Q?", nameless, ["| parkkey |"], task="MMQA/primary_key_selection")


def test_the_prompt_shows_each_tables_notes_below_it():
    """A sheet's notes (a footnote a marker points to, the source) reach the model below the table
    they belong to; none, no "Notes:" line; a long run of notes is cut, saying how much was left."""
    from curate.evaluation.modes import MAX_NOTES, prompt

    markdown = "| Industry | Workers |\n| --- | --- |\n| Mining (1) | 640 |"
    one = prompt("tcot", "Q?", ["t"], [markdown], captions=["Employment [In thousands]"],
                 notes=[("(1) Includes quarrying.", "Source: a statistics office")])
    assert one.index("| Mining (1) | 640 |") < one.index("Notes:\n(1) Includes quarrying.\nSource: a statistics office")
    assert "Notes:" not in prompt("tcot", "Q?", ["t"], [markdown], notes=[()])
    two = prompt("tcot", "Q?", ["a", "b"], ["| x |", "| y |"], notes=[(), ("see A",)])
    assert "Table a:\n| x |\n\nTable b:\n| y |\nNotes:\nsee A" in two
    many = prompt("tcot", "Q?", ["t"], [markdown], notes=[tuple(f"note {i}" for i in range(MAX_NOTES + 3))])
    assert f"note {MAX_NOTES - 1}\n(3 more lines of notes)" in many and f"note {MAX_NOTES}" not in many

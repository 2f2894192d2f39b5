"""Chart generation: the model's plotting code runs headless in the sandbox, the drawn values are
read back, and PASS@1 compares them with the gold chart; ECR counts the programs that ran."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from curate.evaluation.charts import chart_kind, plotted_chart
from curate.evaluation.metrics.chart import chart_pass

BAR = {"chart_type": "bar", "x": ["Oslo", "Bergen", "Tromsø"], "y": [700, 290, 77]}


@pytest.mark.parametrize("prediction, expected, mismatch", [
    ({"chart_type": "bar", "x": ["Bergen", "Oslo", "Tromsø"], "y": [290, 700, 77]}, 1.0, None),  # order is free
    ({"chart_type": "bar", "x": [], "y": [700.4, 290, 77]}, 1.0, None),  # within 1%
    ({"chart_type": "bar", "x": [], "y": [720, 290, 77]}, 0.0, "values"),
    ({"chart_type": "line", "x": [], "y": [700, 290, 77]}, 0.0, "chart type"),
    ({"chart_type": "bar", "x": [], "y": [700, 290]}, 0.0, "number of values"),
])
def test_chart_pass_compares_type_and_values(prediction, expected, mismatch):
    result = chart_pass(prediction, BAR, {})
    assert result.value == expected and result.details.get("mismatch") == mismatch


def test_a_pie_is_compared_by_shares_and_chart_names_are_normalized():
    gold = {"chart_type": "Pie chart", "x": ["a", "b"], "y": [30, 10]}
    assert chart_pass({"chart_type": "pie", "x": [], "y": [270.0, 90.0]}, gold, {}).value == 1.0  # degrees
    assert chart_pass({"chart_type": "pie", "x": [], "y": [180.0, 180.0]}, gold, {}).value == 0.0
    assert [chart_kind(n) for n in ("Horizontal bar chart", "scatter plot", "line_chart", "donut")] == [
        "bar", "scatter", "line", "pie"]
    assert chart_pass(None, gold, {}).value == 0.0


PROGRAMS = {
    "bar": ("plt.bar(['Oslo', 'Bergen', 'Tromsø'], [700, 290, 77])", BAR),
    "barh": ("fig, ax = plt.subplots()\nax.barh(['Oslo', 'Bergen', 'Tromsø'], [700, 290, 77])", BAR),
    "pie": ("plt.pie([30, 10], labels=['a', 'b'], autopct='%1.0f%%')",
            {"chart_type": "pie", "x": ["a", "b"], "y": [30, 10]}),
    "line": ("plt.plot([2001, 2002, 2003], [1.5, 2.5, 2.0])",
             {"chart_type": "line", "x": [2001, 2002, 2003], "y": [1.5, 2.5, 2.0]}),
    "scatter": ("plt.scatter([1, 2, 3], [9, 8, 7])", {"chart_type": "scatter", "x": [1, 2, 3], "y": [9, 8, 7]}),
}


def test_charts_drawn_in_the_sandbox_are_read_back_and_pass():
    from curate.evaluation.sandbox import Limits, Sandbox

    sandbox = Sandbox(1, Limits(timeout=20))
    try:
        for kind, (code, gold) in PROGRAMS.items():
            result = sandbox.run("import matplotlib.pyplot as plt\n" + code)
            assert result.ok, result.error
            chart = plotted_chart(result.figures)
            assert chart_pass(chart, gold, {}).value == 1.0, (kind, chart)
        bar = plotted_chart(sandbox.run("plt.bar(['Oslo', 'Bergen'], [700, 290])").figures)
        assert bar == {"chart_type": "bar", "x": ["Oslo", "Bergen"], "y": [700.0, 290.0]}
        assert plotted_chart(sandbox.run("print('no chart')").figures) is None
    finally:
        sandbox.close()


def test_chart_tasks_run_as_plotting_programs_in_every_mode_and_report_ecr(tmp_path):
    """Four chart questions: the right chart, wrong values, a crash, and a reply without code.
    PASS@1 is 1, 0, 0, 0; the first two programs ran (ECR 0.5)."""
    import pandas as pd

    from curate.curation.sample import Sample
    from curate.curation.table import Table
    from curate.evaluation.evaluate import Evaluator, Settings
    from tests.files import release_of
    from tests.test_evaluation import scripted_client

    table = Table(name="towns", body=pa.table({"town": ["Oslo", "Bergen", "Tromsø"], "people": [700, 290, 77]}))
    replies = {
        "Draw a bar chart of people by town.": "```python\nplt.bar(df['town'], df['people'])\n```",
        "Draw a bar chart of people per town, doubled.": "```python\nplt.bar(df['town'], df['people'])\n```",
        "Draw a line chart of people by town.": "```python\nplt.plot(df['nope'])\n```",
        "Draw a pie chart of people by town.": "A pie chart would show Oslo's large share.",
    }
    golds = [BAR, {**BAR, "y": [1400, 580, 154]}, {**BAR, "chart_type": "line"}, {**BAR, "chart_type": "pie"}]
    tasks = ["RH/CG/bar_chart", "RH/CG/bar_chart", "RH/CG/line_chart", "RH/CG/pie_chart"]
    samples = [Sample(task=t, question=q, answer=g, answer_type="chart", table_ids=(table.id,), origin="llm")
               for t, q, g in zip(tasks, replies, golds)]
    release = release_of(tmp_path, samples, [table])

    def reply(request):
        prompt = request.messages[-1]["content"]
        assert "draws the chart with matplotlib" in prompt  # the chart prompt, whatever the mode
        return next(r for q, r in replies.items() if f"Question: {q}\n" in prompt)

    client, _ = scripted_client(reply)
    Evaluator(release, tmp_path / "out", Settings(modes=["tcot"]), client, {}).run()
    results = pd.read_parquet(tmp_path / "out" / "results.parquet").set_index("sample_id")
    by_question = {s.question: results.loc[s.id] for s in samples}
    assert [by_question[q]["score"] for q in replies] == [1.0, 0.0, 0.0, 0.0]
    assert [by_question[q]["executed"] for q in replies] == [True, True, False, False]
    assert json.loads(by_question["Draw a bar chart of people by town."]["answer"])["y"] == [700, 290, 77]
    assert "KeyError" in by_question["Draw a line chart of people by town."]["error"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert next(iter(summary["models"].values()))["ecr_by_mode"] == {"chart (CG tasks)": 0.5}
    assert "Code execution rate (ECR)" in (tmp_path / "out" / "report.html").read_text()

"""report.html in a real headless browser: a sample opened from the report, its question, gold and
reply read back from the page (issue 46). Chromium comes from `make system`; without it the test
skips, saying so."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.browser import Browser, find_chromium
from tests.test_evaluation_logs import evaluate, replay_file, towns_release

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (`make system` installs it)")


def test_a_failed_sample_opens_from_the_report_with_its_question_gold_and_reply(tmp_path):
    from curate.evaluation.dataset import ReleaseData

    release = towns_release(tmp_path)
    samples = ReleaseData(release).samples()
    wrong = {n for n, s in enumerate(samples) if s.task == "TBO/table_query"}
    out = tmp_path / "out"
    file = replay_file(tmp_path / "r.jsonl", samples, right=lambda n: n not in wrong)
    assert evaluate(release, "--backend", "replay", "--predictions", file, "--out", out).exit_code == 0
    browser = Browser(CHROMIUM)
    try:
        browser.open(out / "report.html")
        # the By task table's cell of TBO/table_query opens that task's samples, the first of them shown
        browser.click('td[data-filter*="TBO/table_query"]')
        browser.wait_for("document.querySelectorAll('#sample-list tbody tr').length === 3")
        assert browser.evaluate("document.getElementById('f-task').value") == "TBO/table_query"
        browser.evaluate("const o = document.getElementById('f-outcome'); o.value = 'wrong'; "
                         "o.dispatchEvent(new Event('change'))")
        browser.click("#sample-list tbody tr:nth-child(2)")
        browser.wait_for("!!document.querySelector('#sample-detail .reply')")
        shown = browser.evaluate("Object.fromEntries(['question', 'gold', 'reply', 'reason', 'answer', 'prompt', 'score']"
                                 ".map(c => [c, document.querySelector('#sample-detail .' + c).textContent]))")
        opened = browser.evaluate("document.querySelector('#sample-list tr.open td').textContent")
        sample = next(s for s in samples if s.id == opened)
        assert sample.task == "TBO/table_query"
        assert shown["question"] == sample.question and json.loads(shown["gold"]) == sample.answer
        assert shown["reply"] == "Final Answer: nothing" and shown["score"] == "wrong: score 0"
        assert shown["reason"].startswith("does not match the gold")
        assert sample.question in shown["prompt"] and "Bodø" in shown["prompt"]  # the table as the model saw it
        png = browser.screenshot()
        assert png.startswith(b"\x89PNG")
        if os.environ.get("CURATE_SCREENSHOT"):  # docs/report.png is made this way
            Path(os.environ["CURATE_SCREENSHOT"]).write_bytes(png)
    finally:
        browser.close()


def test_two_runs_side_by_side_keep_the_samples_on_which_they_differ(tmp_path):
    from click.testing import CliRunner

    from curate.curation.cli import main
    from curate.evaluation.dataset import ReleaseData

    release = towns_release(tmp_path)
    samples = ReleaseData(release).samples()
    folders = []
    hostile = "Final Answer: </script><img src=x onerror=\"document.title='run'\"> <!-- nothing"
    for name, right in (("first", lambda n: True), ("second", lambda n: n != 4)):
        out = tmp_path / name
        file = replay_file(tmp_path / f"{name}.jsonl", samples, right=right)
        if name == "second":  # a reply that tries to leave the page's data and run: shown as text
            file.write_text(file.read_text().replace('"Final Answer: nothing"', json.dumps(hostile)))
        assert evaluate(release, "--backend", "replay", "--predictions", file, "--out", out).exit_code == 0
        folders.append(str(out))
    assert CliRunner().invoke(main, ["report", *folders, "--out", str(tmp_path / "cmp")]).exit_code == 0
    browser = Browser(CHROMIUM)
    try:
        browser.open(tmp_path / "cmp" / "report.html")
        browser.click("#f-differ")
        browser.wait_for("document.querySelectorAll('#sample-list tbody tr').length === 1")
        browser.click("#sample-list tbody tr")
        browser.wait_for("document.querySelectorAll('#sample-detail .reply').length === 2")
        replies = browser.evaluate("[...document.querySelectorAll('#sample-detail .reply')].map(e => e.textContent)")
        assert replies == [f"Final Answer: {samples[4].answer}", hostile]
        assert browser.evaluate("document.title") == "curate evaluation report"
        assert browser.evaluate("document.querySelector('#sample-detail .question').textContent") == samples[4].question
    finally:
        browser.close()

"""Every table accounted for: a table that gives no question is named with its reason in the rules
report and on the console, and the release counts the tables no released question asks about, by why."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console

from curate.curation.arrow_io import tables_to_arrow
from curate.curation.cli.named import name_step, tables_without_questions as named_lines
from curate.curation.table import Table
from curate.exports.release.accounting import NOT_SELECTED, accounting_line, copied_from, tables_without_questions
from curate.exports.release.card import _card_accounting
from curate.generators.rules.stage import RulesReport, RulesStage

TOWNS = Table(name="towns", body=pa.table({
    "town": ["Aston", "Bury", "Crewe", "Derby", "Ely", "Frome"],
    "population": [1200, 5300, 870, 24000, 3100, 15000],
    "area": [3.5, 10.25, 2.0, 40.5, 7.75, 22.0],
}))
WORDS_ONLY = Table(name="glossary", body=pa.table({"term": ["a", "b", "c"], "note": ["x", "x", "x"]}))


def test_a_table_without_questions_is_named_with_its_reason_in_the_report_and_on_the_console(tmp_path):
    path = tmp_path / "part.tables.parquet"
    pq.write_table(tables_to_arrow([TOWNS, WORDS_ONLY]), path)
    _, summary = RulesStage().run_part({"file": str(path), "start": 0, "stop": 2}, {}, {"templates": ["tco.mean", "tco.argmax"]})
    named = summary["without_questions_tables"]
    assert [(t["table"], t["id"]) for t in named] == [("glossary", WORDS_ONLY.id)]  # towns gave questions
    assert named[0]["reason"] and summary["without_questions"] == {named[0]["reason"]: 1}
    assert "1 tables gave no question" in RulesReport.from_json(summary).summary()
    report = tmp_path / "report.json"
    report.write_text(json.dumps(summary))
    out = io.StringIO()
    name_step(Console(file=out, width=200), {"stage": "rules", "reports": [str(report)]})
    assert f"no question glossary: {named[0]['reason']}" in out.getvalue()
    assert named_lines({}) == []  # a report written before the list existed


def test_the_release_counts_each_table_no_question_asks_about_by_why():
    kept = {"t1": "towns", "t2": "glossary", "t3": "ships", "t4": "prices"}
    reports = {"ingest": {"failed": 1}, "clean": {"dropped_by": {"duplicate": 2, "too_empty": 0}},
               "rules": {"without_questions_tables": [{"table": "glossary", "id": "t2", "reason": "no_numeric_column"}]}}
    got = tables_without_questions(kept, {"t1", "t4", "derived-x"}, reports)
    assert got == {"tables": 6, "with_questions": 2, "unreadable_files": 1,
                   "without": {"dropped_by_cleaning: duplicate": 2, NOT_SELECTED: 1, "no_numeric_column": 1}}
    line = accounting_line(got)
    assert line == ("6 tables: 2 with questions in the release; 4 without (dropped_by_cleaning: duplicate 2, "
                    f"no_numeric_column 1, {NOT_SELECTED} 1); 1 files could not be read")  # most first, then by name
    assert line in _card_accounting(got)[0]
    assert _card_accounting({"tables": 2, "with_questions": 2, "without": {}, "unreadable_files": 0}) == []
    # a table asked about only through a copy (its headers hidden, anomalies injected) has questions
    assert copied_from(("towns (headers hidden)", "a/towns.csv"), ("towns", "a/towns.csv"))
    assert copied_from(("towns", "a/towns.csv"), ("towns", "a/towns.csv"))
    assert not copied_from(("towns2", "a/towns.csv"), ("towns", "a/towns.csv"))
    assert not copied_from(("towns (headers hidden)", "b/towns.csv"), ("towns", "a/towns.csv"))


def test_a_header_with_its_unit_in_brackets_is_asked_about():
    """TableBench's "starting weight (kg)" was no name a question could use, so a table of such
    headers gave no question and no message."""
    from curate.curation import semantics as sem
    from tests.test_rules import generate

    for header in ("starting weight (kg)", "elevation (m)", "length (in km)", "population (2002 census data)",
                   "% of pop"):
        assert sem.says_itself(header), header
    for header in ("(kg)", "cunem (m)", "X3 (a)"):  # the words before the aside still decide
        assert not sem.says_itself(header), header
    contestants = Table(name="weight loss", body=pa.table({
        "contestant": ["Ann", "Bob", "Cyd", "Dee", "Eve", "Fay"],
        "starting weight (kg)": [120.5, 130.2, 110.0, 101.3, 140.0, 99.9],
        "final weight (kg)": [90.1, 100.0, 95.5, 88.0, 120.2, 80.0],
    }))
    samples, _, _ = generate(contestants, ["tco.argmax", "tco.mean"])
    assert any("starting weight (kg)" in s.question for s in samples)


def test_a_count_per_year_is_a_measure_not_a_time():
    """TableBench's "Live births per year" was read as a time axis: a table of such rates gave nothing."""
    from curate.generators.rules.profile import TableProfile

    births = Table(name="births", body=pa.table({
        "Period": ["1950-1955", "1955-1960", "1960-1965", "1965-1970", "1970-1975"],
        "Live births per year": [9000, 9400, 10100, 9900, 9700],
        "Deaths per year": [5100, 5000, 4800, 4900, 5300],
    }))
    assert TableProfile(births).numeric == ["Live births per year", "Deaths per year"]

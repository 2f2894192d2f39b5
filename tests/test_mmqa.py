"""MMQA's sample format: read as tables + databases, and its gold answers re-checked by its own SQL."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared
from tests.test_cli import invoke
from curate.validators.recheck import answers_agree

SAMPLE = {
    "id_": 7, "Question": "Which city hosted the most competitions?",
    "SQL": "SELECT c.Official_Name, COUNT(*) FROM city c JOIN farm_competition f ON c.City_ID = f.Host_city_ID "
           "GROUP BY c.Official_Name ORDER BY COUNT(*) DESC LIMIT 1;",
    "table_names": ["city", "farm_competition"],
    "tables": [{"table_columns": ["City_ID", "Official_Name"], "table_content": [[1, "Aroostook"], [2, "Drummond"]]},
               {"table_columns": ["Competition_ID", "Host_city_ID"], "table_content": [[1, 1], [2, 1], [3, 2]]}],
    "foreign_keys": ["host city id"], "primary_keys": ["city id", "competition id"], "answer": "Aroostook, 2",
}


def test_gold_cells_compare_as_numbers_within_rounding_and_in_any_order():
    assert answers_agree("Treasury, 115897", [("Treasury", 115897.0)])
    assert answers_agree("63.0", [(62.9,)]) is False  # 63.0 is a rounding of 62.96, not of 62.9
    assert answers_agree("63.0", [(63.04,)])
    assert answers_agree("Martin, Joe, Nikhil", [("Martin",), ("Nikhil",), ("Joe",)])
    assert answers_agree("Grand Falls/Grand-Sault, Perth-Andover", [("Grand Falls/Grand-Sault",), ("Perth-Andover",)])
    assert not answers_agree("Plaster Rock, Drummond", [("Plaster Rock",), ("Drummond",), ("Drummond",)])


def test_mmqa_file_reads_as_tables_and_a_database_with_keys(tmp_path):
    path = tmp_path / "mmqa.json"
    path.write_text(json.dumps([SAMPLE, {**SAMPLE, "id_": 8, "answer": "Drummond, 1"}]))
    out = json.loads(invoke("inspect", path, "--json").output)
    assert [t["name"] for t in out["tables"]] == ["city", "farm_competition"]  # each distinct table once
    (db,) = out["databases"]
    assert [(k["table"], k["columns"]) for k in db["primary_keys"]] == [("city", ["City_ID"]),
                                                                         ("farm_competition", ["Competition_ID"])]
    assert [(k["table"], k["columns"], k["ref_table"]) for k in db["foreign_keys"]] == [
        ("farm_competition", ["Host_city_ID"], "city")]


def test_recheck_lists_the_gold_answers_their_own_sql_contradicts(tmp_path):
    path = tmp_path / "mmqa.json"
    path.write_text(json.dumps([SAMPLE, {**SAMPLE, "id_": 8, "answer": "Drummond, 1"}]))
    out = invoke("recheck", path, "--json")
    assert out.exit_code == 1
    report = json.loads(out.output)
    assert (report["samples"], report["agree"]) == (2, 1)
    assert [r["id"] for r in report["disagree"]] == [8]
    assert all(r["engines_agree"] for r in report["results"])  # DuckDB and SQLite give the same rows
    good = tmp_path / "good.json"
    good.write_text(json.dumps([SAMPLE]))
    assert invoke("recheck", good).exit_code == 0


def test_recheck_of_something_else_is_a_clear_error(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('[{"a": 1}]')
    out = invoke("recheck", path)
    assert out.exit_code != 0 and "not MMQA samples" in out.output


@pytest.mark.integration
def test_published_mmqa_samples_four_gold_answers_contradict_their_sql():
    path = shared("mmqa", "mmqa_samples.json")
    report = json.loads(invoke("recheck", path, "--json").output)
    assert report["samples"] == 21
    assert all(r["engines_agree"] and "error" not in r for r in report["results"])
    # e.g. #0 sums employees over a join that repeats Treasury (231794, not 115897); #3 orders by
    # budget, which puts Homeland Security (44.6) above Treasury (11.1); #1 and #4 only leave out
    # the rows their SQL repeats (the same check as `curate audit`, tests/test_audit.py)
    assert sorted(r["id"] for r in report["disagree"]) == [0, 2, 3, 7]
    assert {r["id"]: r["kind"] for r in report["results"] if r["kind"] == "presentation"} == {1: "presentation",
                                                                                           4: "presentation"}

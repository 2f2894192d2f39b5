"""The schema graph and `curate keys` (MMQA, issue 4): keys declared and inferred, join paths."""

from __future__ import annotations

import json
import sqlite3

import pyarrow as pa
import pytest

from curate.curation.database import Database, ForeignKey, PrimaryKey
from curate.generators.sql.schema import SchemaGraph, key_report
from tests.conftest import shared
from tests.test_cli import invoke


def school_sqlite(path):
    """Three tables in a chain: enrolment -> student, enrolment -> course, course -> teacher."""
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE teacher (teacher_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE course (course_id INTEGER PRIMARY KEY, title TEXT, teacher_id INTEGER,
                             FOREIGN KEY (teacher_id) REFERENCES teacher (teacher_id));
        CREATE TABLE student (student_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE enrolment (enrolment_id INTEGER PRIMARY KEY, student_id INTEGER, course_id INTEGER,
                                FOREIGN KEY (student_id) REFERENCES student (student_id),
                                FOREIGN KEY (course_id) REFERENCES course (course_id));
    """)
    con.executemany("INSERT INTO teacher VALUES (?, ?)", [(i, f"t{i}") for i in range(1, 5)])
    con.executemany("INSERT INTO course VALUES (?, ?, ?)", [(i, f"c{i}", 1 + i % 4) for i in range(1, 9)])
    con.executemany("INSERT INTO student VALUES (?, ?)", [(i, f"s{i}") for i in range(1, 21)])
    con.executemany("INSERT INTO enrolment VALUES (?, ?, ?)",
                    [(i, 1 + i % 20, 1 + (i * 3) % 8) for i in range(1, 41)])
    con.commit()
    con.close()
    return path


def test_inferred_keys_equal_the_declared_ones_on_a_database_the_test_builds(tmp_path):
    ws = tmp_path / "ws"
    assert invoke("ingest", school_sqlite(tmp_path / "school.sqlite"), "-w", ws, "-q").exit_code == 0
    out = invoke("keys", "school", "-w", ws, "--json")
    assert out.exit_code == 0, out.output
    (report,) = json.loads(out.output)["databases"]
    assert report["primary_keys"] == {"declared": 4, "inferred": 4, "agree": 4, "precision": 1.0, "recall": 1.0}
    assert report["foreign_keys"] == {"declared": 3, "inferred": 3, "agree": 3, "precision": 1.0, "recall": 1.0}
    assert report["join_paths"] == {"2_tables": 3, "3_tables": 2}
    assert "precision 1.00, recall 1.00" in invoke("keys", "-w", ws).output


def test_join_paths_of_two_and_three_tables():
    body = pa.table({"x": [1]})
    fk = [ForeignKey("enrolment", ("student_id",), "student", ("student_id",)),
          ForeignKey("enrolment", ("course_id",), "course", ("course_id",)),
          ForeignKey("course", ("teacher_id",), "teacher", ("teacher_id",))]
    db = Database("school", tuple((n, f"tbl-{n}") for n in ("teacher", "course", "student", "enrolment")),
                  (PrimaryKey("student", ("student_id",)),), tuple(fk))
    paths = SchemaGraph(db, {n: body for n in db.table_names}).join_paths()
    as_sets = sorted(tuple(sorted(t)) for t, _ in paths)
    assert as_sets == sorted([("enrolment", "student"), ("course", "enrolment"), ("course", "teacher"),
                              ("course", "enrolment", "student"), ("course", "enrolment", "teacher")])
    chain = next(t for t, _ in paths if set(t) == {"course", "enrolment", "teacher"})
    assert chain[1] == "course"  # the middle table joins the other two


def test_a_database_without_declared_keys_reports_inference_only():
    bodies = {"a": pa.table({"a_id": [1, 2, 3], "v": ["x", "y", "z"]}),
              "b": pa.table({"b_id": [1, 2, 3, 4], "a_id": [1, 1, 2, 3]})}
    report = key_report(Database("plain", (("a", "t1"), ("b", "t2"))), bodies)
    assert "primary_keys" not in report and report["declared"]["foreign_keys"] == []
    assert [(k["table"], k["ref_table"]) for k in report["inferred"]["foreign_keys"]] == [("b", "a")]


def test_keys_of_an_unknown_database_is_a_clear_error(tmp_path):
    ws = tmp_path / "ws"
    invoke("ingest", school_sqlite(tmp_path / "school.sqlite"), "-w", ws, "-q")
    out = invoke("keys", "nope", "-w", ws)
    assert out.exit_code != 0 and "no database named 'nope'" in out.output and "school" in out.output
    empty = invoke("keys", "-w", tmp_path / "empty")
    assert empty.exit_code != 0 and "curate ingest" in empty.output


@pytest.mark.integration
def test_spider_keys_precision_and_recall(tmp_path):
    spider = shared("spider")
    ws = tmp_path / "ws"
    assert invoke("ingest", spider, "-w", ws, "-q").exit_code == 0
    result = json.loads(invoke("keys", "-w", ws, "--json").output)
    reports = {r["database"]: r for r in result["databases"]}
    store = reports["department_store"]
    assert store["foreign_keys"]["declared"] == 13 and store["foreign_keys"]["precision"] == 1.0
    assert store["foreign_keys"]["recall"] >= 0.8
    assert store["join_paths"]["3_tables"] > 0
    for report in reports.values():  # every Spider database declares keys: each gets a score
        assert report["primary_keys"]["declared"] > 0 and report["foreign_keys"]["recall"] is not None

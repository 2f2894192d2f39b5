"""A new user's rough edges (issue 42): each says what to do, names what it passed over, and exits as
a usage error where it is one."""

from __future__ import annotations

import json
import sqlite3

from tests.test_cli import invoke


def test_review_push_without_the_label_studio_client_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "a-token")
    monkeypatch.setitem(__import__("sys").modules, "label_studio_sdk", None)  # not installed, as after `make demo`
    for command in ("push", "pull"):
        out = invoke("review", command, "-w", tmp_path / "ws")
        assert out.exit_code == 2 and "pip install 'curate[review]'" in out.output, out.output
        assert "Traceback" not in out.output


def test_review_help_explains_push_annotate_pull_build():
    out = invoke("review", "--help")
    assert out.exit_code == 0
    steps = [out.output.index(f"{n}. {step}") for n, step in enumerate(("push", "annotate", "pull", "build"), 1)]
    assert steps == sorted(steps) and "pip install 'curate[review]'" in out.output


def spider_folder(root):
    """Spider's layout: database/<db_id>/<db_id>.sqlite with its schema.sql beside it."""
    db = root / "database" / "shop"
    db.mkdir(parents=True)
    con = sqlite3.connect(db / "shop.sqlite")
    con.executescript("CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, price REAL);"
                      "INSERT INTO item VALUES (1, 'pen', 1.5), (2, 'ink', 3.0), (3, 'pad', 2.25);")
    con.commit()
    con.close()
    (db / "schema.sql").write_text("CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, price REAL);\n")
    return root


def test_ingest_names_every_skipped_file_first_few_then_count_and_where(tmp_path):
    src = spider_folder(tmp_path / "in")
    (src / "a.csv").write_text("x,y\n1,2\n3,4\n")
    for n in range(7):
        (src / f"notes{n}.txt").write_text("not a table")
    (src / "broken.xlsx").write_bytes(b"not a zip")
    out = invoke("ingest", src, "-w", tmp_path / "ws", "--workers", "1")
    assert out.exit_code == 0, out.output
    text = out.output
    assert "broken.xlsx" in text  # the unreadable file, named
    assert "schema.sql" not in text  # read with its database, not skipped
    named = [line for line in text.splitlines() if line.startswith("skipped ")]
    assert len(named) == 5 and "... and 3 more: every one is listed in" in text
    report = text.split("every one is listed in", 1)[1].split()[0]
    listed = json.loads(open(report).read())
    assert len(listed["failures"]) + len(listed["skipped_files"]) == 9  # 7 notes, broken.xlsx, schema.sql
    schema = [f for f in listed["skipped_files"] if f["path"].endswith("schema.sql")]
    assert schema and not schema[0]["reason"].startswith("unsupported")


def test_clean_names_the_tables_it_drops(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "good.csv").write_text("city,people\nAa,10\nBb,20\nCc,30\nDd,45\n")
    (src / "tiny.csv").write_text("x\n1\n")  # one row, one column: degenerate
    (src / "empty.csv").write_text("a,b,c\n,,\n,,1\n,,\n")  # mostly empty
    assert invoke("ingest", src, "-w", tmp_path / "ws", "--workers", "1").exit_code == 0
    out = invoke("clean", "-w", tmp_path / "ws", "--workers", "1")
    assert out.exit_code == 0, out.output
    dropped = [line for line in out.output.splitlines() if line.startswith("dropped ")]
    assert any("tiny" in line for line in dropped) and any("empty" in line for line in dropped)
    assert not any("good" in line for line in dropped)


def tablebench_line(table) -> str:
    return json.dumps({"id": "q1", "qtype": "FactChecking", "qsubtype": "MatchBased", "table": table,
                       "question": "Did Ann sell more than Bob?", "answer": "Yes", "instruction_type": "DP"})


def test_tablebench_takes_a_table_stored_as_json_text_and_says_what_it_expects_otherwise(tmp_path):
    import pytest

    from curate.importers import BadInput
    from curate.importers import read as read_strictly
    from curate.importers.tablebench import read

    table = {"columns": ["name", "sold"], "data": [["Ann", 5], ["Bob", 3]]}
    as_text = tmp_path / "text.jsonl"
    as_text.write_text(tablebench_line(json.dumps(table)) + "\n")
    as_object = tmp_path / "object.jsonl"
    as_object.write_text(tablebench_line(table) + "\n")
    from_text, from_object = read([as_text]), read([as_object])
    assert from_text.tables[0].body.equals(from_object.tables[0].body)  # the same table either way
    assert from_text.tables[0].body.column("name").to_pylist() == ["Ann", "Bob"]
    assert from_text.samples[0].answer == from_object.samples[0].answer
    for bad in ("not json", json.dumps([["Ann", 5]])):
        broken = tmp_path / "broken.jsonl"
        broken.write_text(tablebench_line(bad) + "\n")
        with pytest.raises(BadInput, match=r"broken.jsonl:line 1: field 'table'.*\{\"columns\": \[\.\.\.\], \"data\""):
            read_strictly("tablebench", [str(broken)], strict=True)  # without --strict the record is left out, named


def test_usage_errors_exit_2_and_list_only_what_is_documented(tmp_path):
    release = tmp_path / "release"
    release.mkdir()
    out = invoke("evaluate", release, "--modes", "cot")
    assert out.exit_code == 2 and "tcot, pot, icot" in out.output and "Traceback" not in out.output
    out = invoke("evaluate", release, "--backend", "nope")
    assert out.exit_code == 2 and "openai" in out.output and "gold" in out.output
    assert "scripted" not in out.output  # a backend only tests use is not offered
    assert invoke("evaluate", release, "--backend", "scripted").exit_code == 2


def test_audit_and_evaluate_name_the_sandbox_alike_the_old_name_still_works(tmp_path):
    for command in ("audit", "evaluate"):
        shown = invoke(command, "--help").output
        assert "--sandbox [bwrap|none]" in shown and "--isolation" not in shown
    assert invoke("audit", tmp_path, "--sandbox", "sideways").exit_code == 2  # checked like any choice
    old = invoke("audit", tmp_path, "--isolation", "sideways")
    assert old.exit_code == 2 and "No such option" not in old.output  # the hidden alias, checked alike


def test_keys_on_a_workspace_without_databases_says_so_and_exits_1(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.csv").write_text("x,y\n1,2\n3,4\n")
    assert invoke("ingest", src, "-w", tmp_path / "ws", "--workers", "1").exit_code == 0
    out = invoke("keys", "-w", tmp_path / "ws")
    assert out.exit_code == 1 and "no databases in the workspace" in out.output

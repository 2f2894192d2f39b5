"""`curate import` reads every record of the published files, in every form they use (issue 43).

The complete public files are not here: their shapes are built from the shared samples as the
benchmarks' own loaders and papers describe them (MMQA's answers as pandas `split` objects and their
Python repr, its SQL in SQLite's dialect; TableBench's chart golds as Python code with `np.nan`, its
first release's id e067a40ab6736ac5a004d9dc69f2d5c0 used by two questions), plus records that cannot be
read at all. The audit's layout tests label golds by hand: every variant written here states the
SQL's result (or the published gold) in another layout.
"""

import json
import sqlite3

import pytest

from tests.conftest import shared

MMQA = ("mmqa", "mmqa_samples.json")
TABLEBENCH = ("tablebench", "TableBench_DP_subset.jsonl")
SHARED_ID = "e067a40ab6736ac5a004d9dc69f2d5c0"
MMQA_WRONG = {0, 2, 3, 7}  # the hand labels of tests/test_audit.py: the published gold is not the SQL's result


def _mmqa_file(tmp_path, change):
    samples = json.loads(shared(*MMQA).read_text())
    change(samples)
    path = tmp_path / "mmqa.json"
    path.write_text(json.dumps(samples))
    return path


def _as_split(rows, columns):
    return {"columns": columns, "index": list(range(len(rows))), "data": [list(r) for r in rows]}


# ------------------------------------------------------------------------------------------ MMQA


def test_mmqa_answers_as_split_objects_and_their_python_repr_import_strictly(tmp_path):
    """Refused today: "sample 7: field 'answer': has the wrong type (dict)"."""
    from curate.importers import write_import

    def change(samples):
        samples[7]["answer"] = _as_split([["Grand Falls/Grand-Sault"], ["Perth-Andover"], ["Drummond"]],
                                         ["Official_Name"])
        samples[1]["answer"] = str(_as_split([["Treasury", 11.1]], ["Name", "Budget_in_Billions"]))  # Python repr
        samples[2]["answer"] = json.dumps(_as_split([[63.0]], ["AVG(h.age)"]))

    release = write_import("mmqa", [str(_mmqa_file(tmp_path, change))], "m", None, tmp_path / "r", strict=True)
    assert release["import"]["forms"]["answer"] == {"text": 18, "pandas split object": 1,
                                                    "pandas split string (JSON)": 1,
                                                    "pandas split string (Python literal)": 1}
    from curate.evaluation.dataset import ReleaseData

    qa = {s.provenance["source_id"]: s for s in ReleaseData(release["path"]).samples()
          if s.task == "MMQA/multi_table_qa"}
    assert qa["7"].answer == ["Grand Falls/Grand-Sault", "Perth-Andover", "Drummond"]
    assert qa["1"].answer == ["Treasury", 11.1] and qa["2"].answer == 63.0
    assert json.loads(qa["7"].provenance["source_answer"])["columns"] == ["Official_Name"]  # kept as published
    assert qa["2"].provenance["answer_text"] == "63"  # what MMQA's EM compares, written as the gold reply writes it
    from click.testing import CliRunner

    from curate.curation.cli import main

    gold = CliRunner().invoke(main, ["evaluate", release["path"], "--backend", "gold", "--out", str(tmp_path / "g"),
                                     "--json"])
    assert gold.exit_code == 0, gold.output
    summary = json.loads((tmp_path / "g" / "summary.json").read_text())
    assert [m["score"] for m in summary["models"].values()] == [1.0]
    official = json.loads((tmp_path / "g" / "official.json").read_text())["runs"]["tcot:markdown:none"]["types"]
    assert official["MMQA/multi_table_qa"]["EM"] == official["MMQA/text_to_sql"]["EX"] == 100.0


def test_mmqa_sql_runs_in_sqlite_where_a_double_quoted_word_is_a_string(tmp_path):
    """Refused today: "Binder Error: Referenced column ... not found" (DuckDB reads "California" as a
    column). In SQLite, MMQA's dialect and the audit's engine, it is the string."""
    from curate.evaluation.dataset import ReleaseData
    from curate.importers import write_import

    def change(samples):
        samples[2]["SQL"] = samples[2]["SQL"].replace("'Yes'", '"Yes"').replace("'California'", '"California"')

    path = _mmqa_file(tmp_path, change)
    release = write_import("mmqa", [str(path)], "m", None, tmp_path / "r", strict=True)
    twin = next(s for s in ReleaseData(release["path"]).samples()
                if s.task == "MMQA/text_to_sql" and s.provenance["source_id"] == "2")
    assert twin.program["dialect"] == "sqlite" and '"California"' in twin.program["text"]
    [(_, _, _, rows, _)] = [c for c in _mmqa_cases() if c[0] == 2]  # the published, single-quoted SQL
    assert [[twin.answer]] == [list(r) for r in rows] == [[60.5]]  # (its gold says 63.0: labelled wrong)
    assert release["import"]["forms"]["SQL"] == {"runs in SQLite": 21}


def test_a_mixed_mmqa_file_brings_in_the_good_records_and_lists_the_rest(tmp_path):
    """An unreadable sample is left out and listed; a SQL that fails keeps its question and leaves
    out only its text-to-SQL twin, which the audit reports as sql_fails; --strict refuses the file."""
    from click.testing import CliRunner

    from curate.curation.cli import main
    from curate.importers import BadInput, write_import

    def change(samples):
        samples[4]["answer"] = True  # no answer form
        del samples[5]["tables"]
        samples[6]["SQL"] = "SELECT nothing FROM nowhere"

    path = _mmqa_file(tmp_path, change)
    with pytest.raises(BadInput, match=r"sample 4: field 'answer': has the wrong type \(bool\)"):
        write_import("mmqa", [str(path)], "m", None, tmp_path / "strict", strict=True)
    assert not (tmp_path / "strict").exists()
    report = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["import", "mmqa", str(path), "--name", "m", "--releases", str(tmp_path / "r"),
                                       "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert "left out: 3 records" in result.output and "1 gold sql fails, field 'SQL'" in result.output
    assert "answer: 19 text" in result.output
    summary = json.loads(report.read_text())
    assert {(e["kind"], e["field"]): e["count"] for e in summary["left_out"]} == {
        ("unreadable", "answer"): 1, ("unreadable", "tables"): 1, ("gold_sql_fails", "SQL"): 1}
    assert {s["where"].split(":")[-1] for s in summary["skipped"]} == {"sample 4", "sample 5", "sample 6"}
    release = tmp_path / "r" / "m" / "1.0.0"
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["counts"]["by_task"] == {"MMQA/multi_table_qa": 19, "MMQA/text_to_sql": 18}
    card = (release / "README.md").read_text()
    assert "### Left out by the import" in card and "| unreadable | answer | 1 |" in card
    audit = CliRunner().invoke(main, ["audit", str(release), "--json"])
    failing = [f for f in json.loads(audit.output) if f["kind"] == "sql_fails"]
    assert [f["source_id"] for f in failing] == ["6"]  # once: the question's own check, not again for its twin


# ------------------------------------------------------------------------------------ TableBench


def _tablebench_lines():
    records = [json.loads(line) for line in shared(*TABLEBENCH).read_text().splitlines()]
    chart = next(r for r in records if r["qtype"] == "Visualization" and r["chart_type"] == "bar")
    aggregation = next(r for r in records if r["qsubtype"] == "Aggregation")
    return records, chart, aggregation


def test_tablebench_chart_golds_are_read_as_code_with_nan_never_run(tmp_path):
    """Refused today: "malformed node or string ... <ast.Attribute>" for `np.nan`."""
    from curate.evaluation.dataset import ReleaseData
    from curate.importers import write_import

    _, chart, _ = _tablebench_lines()
    values = [34, 4, None, 12]
    chart["answer"] = "y_references = [[34, 4, np.nan, 12], [1.5, float('nan'), NaN, -2]]"
    path = tmp_path / "tb.jsonl"
    path.write_text(json.dumps(chart) + "\n")
    release = write_import("tablebench", [str(path)], "tb", None, tmp_path / "r", strict=True)
    [sample] = ReleaseData(release["path"]).samples()
    assert sample.answer["series"] == [values, [1.5, None, None, -2]]
    assert release["import"]["forms"]["answer"] == {"python: y_references with np.nan": 1}


def test_tablebench_id_used_by_two_questions_keeps_both_flagged_for_the_audit(tmp_path):
    """Refused today: TableBench as first published uses e067a40a... for an Aggregation and an
    ArithmeticCalculation with the same text and gold. Each is kept (the first under the id, the
    other as ID#SUBTYPE), flagged duplicate_id; each prompt variant still folds into its question."""
    from click.testing import CliRunner

    from curate.curation.cli import main
    from curate.importers import write_import

    _, _, aggregation = _tablebench_lines()
    first = {**aggregation, "id": SHARED_ID}
    second = {**first, "qsubtype": "ArithmeticCalculation"}
    lines = [first, {**first, "instruction_type": "TCoT"}, second, {**second, "instruction_type": "PoT"}]
    path = tmp_path / "tb.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    release = write_import("tablebench", [str(path)], "tb", None, tmp_path / "r", strict=True)
    assert release["counts"]["by_task"] == {"TableBench/NumericalReasoning/Aggregation": 1,
                                            "TableBench/NumericalReasoning/ArithmeticCalculation": 1}
    assert release["import"]["flags"] == {"duplicate_id": 2}
    again = write_import("tablebench", [str(path)], "tb2", None, tmp_path / "r")
    assert again["fingerprint"] == release["fingerprint"]  # the same identities from the same file
    audit = CliRunner().invoke(main, ["audit", release["path"], "--json"])
    flagged = {f["source_id"]: f for f in json.loads(audit.output) if f["kind"] == "duplicate_id"}
    assert sorted(flagged) == [SHARED_ID, f"{SHARED_ID}#ArithmeticCalculation"]
    assert "differ in qsubtype" in flagged[SHARED_ID]["detail"] and not flagged[SHARED_ID]["wrong_gold"]


def test_a_mixed_tablebench_file_writes_the_good_records_and_gold_scores_one(tmp_path):
    """Good records (a NaN chart among them) in, the unreadable listed with their reasons; the gold
    answers all that came in right, curate's metric and the official Pass@1 alike."""
    from click.testing import CliRunner

    from curate.curation.cli import main

    records, chart, _ = _tablebench_lines()
    chart = {**chart, "answer": "y_references = [[34, 4, np.nan, 12]]"}
    good = [chart, *[r for r in records if r["qtype"] == "FactChecking"][:2]]
    bad = [{**records[0], "id": "not-json"}, {**records[1], "id": "code", "qtype": "Visualization",
                                                   "chart_type": "bar", "answer": "y_references = __import__('os')"}]
    path = tmp_path / "tb.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in good[:2]) + "{not json\n" + json.dumps(bad[1]) + "\n"
                    + json.dumps(good[2]) + "\n")
    runner = CliRunner()
    strict = runner.invoke(main, ["import", "tablebench", str(path), "--releases", str(tmp_path / "s"), "--strict"])
    assert strict.exit_code != 0 and f"{path}:line 3" in strict.output and not (tmp_path / "s").exists()
    result = runner.invoke(main, ["import", "tablebench", str(path), "--name", "tb", "--releases", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "3 samples" in result.output and "left out: 2 records" in result.output
    assert f"{path}:line 4" in json.dumps(json.loads((tmp_path / "r" / "tb" / "1.0.0" / "manifest.json").read_text())
                                          ["build"]["import"]["skipped"])
    gold = runner.invoke(main, ["evaluate", str(tmp_path / "r" / "tb" / "1.0.0"), "--backend", "gold", "--out",
                                str(tmp_path / "gold"), "--sandbox", "none", "--json"])
    assert gold.exit_code == 0, gold.output
    summary = json.loads((tmp_path / "gold" / "summary.json").read_text())
    assert [m["score"] for m in summary["models"].values()] == [1.0]
    official = json.loads((tmp_path / "gold" / "official.json").read_text())["runs"]["tcot:markdown:none"]
    assert official["types"]["Visualization"]["Pass@1"] == 100.0


# ------------------------------------------------------------------------------ literals, safely


def test_python_literals_are_read_without_running_anything():
    from curate.curation.literals import LiteralError, assignment, literal

    assert literal("{'columns': ['a'], 'index': [0], 'data': [[nan, -1.5, (2, 3)]]}") == {
        "columns": ["a"], "index": [0], "data": [[None, -1.5, [2, 3]]]}
    assert assignment("import numpy as np\ny_references = [[1, np.nan, pd.NA, math.nan, -np.nan]]",
                      "y_references") == [[1, None, None, None, None]]
    for hostile in ("__import__('os').system('true')", "[1, open('/etc/passwd')]", "[x for x in (1,)]",
                    "np.array([1])", "1 + 1", "{**{}}", "[" * 100_000 + "]" * 100_000):
        with pytest.raises(LiteralError):
            literal(hostile)
    with pytest.raises(LiteralError, match="no assignment to y_references"):
        assignment("x = [1]", "y_references")


# ------------------------------------------------------- the audit: presentation is not a wrong gold


def _mmqa_cases():
    from curate.curation.programs import data_view
    from curate.curation.sources.mmqa import sample_tables

    for n, sample in enumerate(json.loads(shared(*MMQA).read_text())):
        bodies = {t.name: data_view(t) for t in sample_tables(sample, "mmqa")}
        con = sqlite3.connect(":memory:")
        for name, body in bodies.items():
            con.execute(f'CREATE TABLE "{name}" ({", ".join(chr(34) + c + chr(34) for c in body.column_names)})')
            con.executemany(f'INSERT INTO "{name}" VALUES ({", ".join("?" * body.num_columns)})',
                            [tuple(r.values()) for r in body.to_pylist()])
        cursor = con.execute(sample["SQL"])
        rows = cursor.fetchall()
        columns = [d[0] for d in cursor.description]
        yield n, sample, bodies, rows, columns


def _written(value):
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"{value:,}" if isinstance(value, int) else str(value)


def _layouts(rows, columns):
    """The SQL's result written as a person or pandas would, every one of them right."""
    split = _as_split(rows, columns)
    out = {"split object": split, "split JSON": json.dumps(split), "split Python repr": str(split),
           "records": [dict(zip(columns, r)) for r in rows],
           "prose": "There are " + "; and ".join(" with ".join(_written(c) for c in r) for r in rows) + " in all."}
    if rows and len(rows[0]) == 2:
        out["pairs"] = ", ".join(f"{_written(a)} ({_written(b)})" for a, b in rows)
    return out


def test_no_gold_stating_the_mmqa_sqls_result_in_another_layout_is_wrong_value():
    """The 21 shared MMQA samples: their SQL's result in six layouts (all right) is never
    wrong_value; the four labelled wrong golds stay wrong in the split layout too."""
    from curate.curation.answers import split_list
    from curate.validators.audit import Engines, check_sql

    checked = 0
    for n, sample, bodies, rows, columns in _mmqa_cases():
        bodies = Engines(bodies)  # one SQLite and DuckDB copy per sample's tables
        for layout, gold in _layouts(rows, columns).items():
            kind = check_sql(sample["Question"], sample["SQL"], gold, bodies)["kind"]
            assert kind in (None, "presentation", "question_sql_disagree", "ambiguous"), (n, layout, gold, kind)
            checked += 1
        published = split_list(sample["answer"])
        as_split = _as_split([published if isinstance(published, list) else [published]], columns)
        kind = check_sql(sample["Question"], sample["SQL"], str(as_split), bodies)["kind"]
        assert (kind in ("wrong_value", "missing_or_extra_items")) == (n in MMQA_WRONG), (n, kind)
        bodies.close()
    assert checked >= 21 * 5


def test_prose_that_names_another_number_or_item_is_still_wrong():
    from curate.validators.audit import check_sql

    [(n, sample, bodies, rows, columns)] = [c for c in _mmqa_cases() if c[0] == 8]  # ('Aroostook', 2)
    ok = check_sql(sample["Question"], sample["SQL"], "Aroostook hosted the competition 2 times.", bodies)
    assert ok["kind"] == "presentation" and "prose" in ok["detail"]
    for wrong in ("Aroostook hosted the competition 3 times.", "Aroostook and Drummond hosted it 2 times."):
        assert check_sql(sample["Question"], sample["SQL"], wrong, bodies)["kind"] == "wrong_value", wrong


def test_a_gold_layout_the_audit_cannot_read_is_its_own_kind():
    from curate.validators.audit import check_sql

    [(n, sample, bodies, rows, columns)] = [c for c in _mmqa_cases() if c[0] == 9]
    for gold in ("{'columns': ['Official_Name'], 'data': [['Aroostook']]", {"answer": {"value": [["Aroostook"]]}}):
        found = check_sql(sample["Question"], sample["SQL"], gold, bodies)
        assert found["kind"] == "unreadable_gold" and not found["wrong_gold"], gold


def test_no_spider_result_restated_in_another_layout_is_wrong_value():
    """Spider dev questions (concert_singer, pets_1: their gold is the SQL's result); written as
    prose, pairs and split objects, each is still the result."""
    from curate.curation.database import Database
    from curate.curation.programs import data_view
    from curate.curation.sources.readers.sqlite import read_sqlite
    from curate.validators.audit import Engines, check_sql

    questions = json.loads(shared("spider", "dev_questions.json").read_text())
    checked = 0
    for db_id in ("concert_singer", "pets_1"):
        database = shared("spider", "database", db_id, f"{db_id}.sqlite")
        tables = [t for t in read_sqlite(str(database), "spider") if not isinstance(t, Database)]
        engines = Engines({t.name: data_view(t) for t in tables})
        con = sqlite3.connect(database)
        for q in [q for q in questions if q["db_id"] == db_id][:25]:
            try:
                cursor = con.execute(q["query"])
            except sqlite3.Error:
                continue  # MachineSpider's 'alter' columns: the import lists these
            rows, columns = cursor.fetchall(), [d[0] for d in cursor.description]
            if not rows or len(rows) > 30:
                continue
            for layout, gold in _layouts(rows, columns).items():
                kind = check_sql(q["question"], q["query"], gold, engines)["kind"]
                assert kind in (None, "presentation", "question_sql_disagree", "ambiguous"), (q["query"], layout, kind)
                checked += 1
        engines.close()
    assert checked > 100

"""Choosing a release's samples (`select`) and the data contracts that gate it (`contracts`)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curate.curation.arrow_io import samples_to_arrow
from curate.curation.pipeline.runner import run_stage
from curate.curation.pipeline.store import Dataset, write_part
from curate.curation.sample import Program, Sample
from curate.curation.workspace import Workspace


def sample(question, template="t.a", table="tbl-1", task="TCO/general_operations", answer=1, answer_type="number",
           split="test", program="SELECT 1", **extra):
    return Sample(task=task, question=question, answer=answer, answer_type=answer_type, table_ids=(table,),
                  template=template, program=Program("sql", program, "duckdb") if program else None, split=split,
                  provenance={"table": table}, **extra)


def dataset(path, *parts: list[Sample]) -> Dataset:
    path.mkdir(parents=True)
    for i, samples in enumerate(parts):
        write_part(path, i, {"samples": samples_to_arrow(samples)}, {})
    (path / "_COMPLETE.json").write_text("{}")
    return Dataset(path)


def select(tmp_path, parts, **config):
    from curate.curation.pipeline.executor import LocalExecutor

    source = dataset(tmp_path / f"rules-{len(list(tmp_path.iterdir())):016d}", *parts)
    run = run_stage("select", config, [source], tmp_path / "stages", LocalExecutor(1))
    rows = [r for f in run.dataset.files("samples") for r in pq.read_table(f).to_pylist()]
    return run, rows


def test_near_duplicate_questions_keep_the_smallest_id_and_an_id_twice_is_kept_once(tmp_path):
    a = sample("What is the mean of x?", program="SELECT avg(x) FROM t")
    b = sample("what is the MEAN of x", program="SELECT avg(x) FROM t -- other")
    run, rows = select(tmp_path, [[a, b, a]])
    assert [r["id"] for r in rows] == [min(a.id, b.id)]
    assert run.report["dropped"]["TCO/general_operations"]["near_duplicate"] == 2


def test_two_samples_with_one_id_keep_the_first_in_part_order_every_time(tmp_path):
    """A sample's id leaves its answer out (a corrected answer keeps its identity), so two samples
    may share one: which one a release keeps must not depend on DuckDB's threads."""
    first = sample("Which tables hold x?", answer=1)
    second = sample("Which tables hold x?", answer=2)
    assert first.id == second.id
    kept = {select(tmp_path, [[first], [second]])[1][0]["answer"] for _ in range(5)}
    assert kept == {"1"}


def test_the_cap_per_task_is_spread_evenly_over_templates(tmp_path):
    samples = [sample(f"q{t}{i}", template=f"t.{t}", table=f"tbl-{i}") for t in "abc" for i in range(10)]
    run, rows = select(tmp_path, [samples], max_per_task=6)
    per_template = {}
    for r in rows:
        per_template[r["template"]] = per_template.get(r["template"], 0) + 1
    assert per_template == {"t.a": 2, "t.b": 2, "t.c": 2}
    assert run.report["dropped"]["TCO/general_operations"]["over_cap"] == 24


def test_splits_are_drawn_per_table_so_a_table_never_spans_two_splits(tmp_path):
    samples = [sample(f"q{t}{i}", table=f"tbl-{t}", program=f"SELECT {i}") for t in range(200) for i in range(3)]
    run, rows = select(tmp_path, [samples], splits={"dev": 0.3, "test": 0.7})
    by_table = {}
    for r in rows:
        by_table.setdefault(r["table_ids"][0], set()).add(r["split"])
    assert all(len(s) == 1 for s in by_table.values())
    dev = sum(1 for s in by_table.values() if s == {"dev"})
    assert 40 <= dev <= 80  # 30% of 200 tables, drawn by content hash
    assert run.report["by_split"]["dev"] == 3 * dev


def test_the_choice_does_not_depend_on_order_or_parts(tmp_path):
    samples = [sample(f"q{t}{i}", template=f"t.{t % 4}", table=f"tbl-{t}") for t in range(30) for i in range(4)]
    settings = {"max_per_task": 25, "splits": {"dev": 0.5, "test": 0.5}, "seed": 7}
    _, one = select(tmp_path, [samples], **settings)
    _, other = select(tmp_path, [samples[::-1][:50], samples[::-1][50:]], **settings)
    assert sorted((r["id"], r["split"]) for r in one) == sorted((r["id"], r["split"]) for r in other)
    _, reseeded = select(tmp_path, [samples], **{**settings, "seed": 8})
    assert {r["id"] for r in reseeded} != {r["id"] for r in one}


def test_bad_select_settings_are_refused_with_the_reason(tmp_path):
    from curate.exports.select import settings

    with pytest.raises(ValueError, match="add up to 1"):
        settings({"splits": {"dev": 0.5, "test": 0.6}})
    with pytest.raises(ValueError, match="unknown setting"):
        settings({"max_per_tsak": 3})
    with pytest.raises(ValueError, match="split name"):
        settings({"splits": {"dev set": 1.0}})


# ------------------------------------------------------------------------------ contracts


def _files(tmp_path, samples, verdicts, table_ids):
    from curate.curation.arrow_io import tables_to_arrow
    from curate.curation.table import Table

    tmp_path.mkdir(parents=True, exist_ok=True)
    pq.write_table(samples_to_arrow(samples), tmp_path / "samples.parquet")
    pq.write_table(pa.Table.from_pylist([{"id": i, "verdict": v, "detail": ""} for i, v in verdicts]),
                   tmp_path / "verdicts.parquet")
    tables = [Table(name=t, body=pa.table({"x": [1, 2]}), id=t) for t in table_ids]
    pq.write_table(tables_to_arrow(tables), tmp_path / "tables.parquet")
    return {"samples": [str(tmp_path / "samples.parquet")], "verdicts": [str(tmp_path / "verdicts.parquet")],
            "tables": [str(tmp_path / "tables.parquet")]}


def test_every_contract_fails_on_its_own_defect_and_names_the_samples(tmp_path):
    from curate.validators.contracts import ContractsStage

    good = sample("fine", table="tbl-1")
    null_answer = sample("no gold", answer=None)
    unknown_task = sample("what task", task="XX/nope")
    wrong_type = sample("true or false?", task="TU/fact_checking", answer_type="number")
    missing_table = sample("where is it", table="tbl-gone")
    mismatch = sample("wrong gold")
    other_split = sample("train me", split="train", program="SELECT 2")
    samples = [good, good, null_answer, unknown_task, wrong_type, missing_table, mismatch, other_split]
    verdicts = [(s.id, "mismatch" if s is mismatch else "match") for s in samples if s is not good] + [(good.id, "match")]
    task = _files(tmp_path, samples, verdicts, ["tbl-1"])
    _, report = ContractsStage().run_part(task, {}, {"splits": ["test"]})
    assert not report["ok"]
    failed = {(e["expectation"], e["kwargs"].get("column", e["kwargs"].get("column_A"))): e
              for e in report["expectations"] if not e["success"]}

    def ids(key):
        return {x["id"] for x in failed[key]["examples"]}

    assert ids(("expect_column_values_to_be_unique", "id")) == {good.id}
    assert ids(("expect_column_values_to_not_be_null", "answer")) == {null_answer.id}
    assert ids(("expect_column_values_to_be_in_set", "task")) == {unknown_task.id}
    assert ids(("expect_column_pair_values_to_be_in_set", "task")) == {wrong_type.id, unknown_task.id}
    assert ids(("expect_column_values_to_be_null", "missing_tables")) == {missing_table.id}
    assert ids(("expect_column_values_to_be_in_set", "verdict")) == {mismatch.id}
    assert ids(("expect_column_values_to_be_in_set", "split")) == {other_split.id}
    assert len(failed) == 7  # split sizes (test has samples) and leakage pass


def test_contracts_pass_on_clean_samples_and_bound_split_sizes(tmp_path):
    from curate.validators.contracts import ContractsStage

    samples = [sample(f"q{i}", program=f"SELECT {i}") for i in range(5)]
    task = _files(tmp_path, samples, [(s.id, "match") for s in samples], ["tbl-1"])
    _, report = ContractsStage().run_part(task, {}, {"splits": ["test"]})
    assert report["ok"] and report["failed"] == [] and report["split_sizes"] == {"test": 5}
    _, bounded = ContractsStage().run_part(task, {}, {"splits": ["test", "dev"], "max_split_size": 4})
    failed = [e for e in bounded["expectations"] if not e["success"]]
    assert [e["expectation"] for e in failed] == ["expect_column_values_to_be_between"]
    assert {x["split"] for x in failed[0]["examples"]} == {"test", "dev"}  # 5 > 4, and 0 < 1


# ------------------------------------------------------------------------------ workspace


def test_a_stage_whose_output_changes_makes_everything_downstream_stale(tmp_path):
    ws = Workspace(tmp_path / "ws")
    ws.root.mkdir()
    names = {s: Dataset(tmp_path / f"{s}-{'0' * 16}") for s in ("clean", "rules", "sql", "select", "verify")}
    for stage, d in names.items():
        ws.set_current(stage, [d])
    assert set(ws.state()["current"]) == set(names)
    ws.set_current("rules", [names["rules"]])  # the same output: nothing changes
    assert set(ws.state()["current"]) == set(names)
    ws.set_current("rules", [Dataset(tmp_path / f"rules-{'1' * 16}")])
    assert set(ws.state()["current"]) == {"clean", "rules", "sql"}


def mmqa_sample(i, database, task="MMQA/multi_table_qa"):
    import dataclasses

    return dataclasses.replace(sample(f"q {database} {i}", task=task, table=f"tbl-{database}-{i}",
                                      program=f"SELECT {i}"), provenance={"database": database})


def test_no_database_gives_more_than_its_share_of_a_multi_table_task(tmp_path):
    big = [mmqa_sample(i, "stevedata #3") for i in range(300)]
    small = [mmqa_sample(i, f"db{d}") for d in range(12) for i in range(8)]
    rules = [sample(f"r{i}", table=f"tbl-r{i}") for i in range(50)]  # single-table tasks are not capped by database
    run, rows = select(tmp_path, [big + small + rules])
    mmqa = [r for r in rows if r["task"] == "MMQA/multi_table_qa"]
    by_db: dict[str, int] = {}
    for r in mmqa:
        db = dict(r["provenance"])["database"]
        by_db[db] = by_db.get(db, 0) + 1
    assert max(by_db.values()) <= len(mmqa) / 3  # the default share: a third of a task
    assert len(by_db) == 13 and len(mmqa) == 12 * 8 + 48  # every small database keeps all it has, the big one half that
    assert len([r for r in rows if r["task"] == "TCO/general_operations"]) == 50
    assert run.report["dropped"]["MMQA/multi_table_qa"]["over_database_share"] == 300 + 96 - len(mmqa)
    assert run.report["database_share"]["by_database"]["MMQA/multi_table_qa"] == by_db


def test_fewer_databases_than_the_share_allows_split_evenly():
    from curate.exports.select import database_limit

    assert database_limit([100, 100, 100], 0.1, 0) == (300, 100)  # 3 databases: a third each
    assert database_limit([1000, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5], 0.1, 0) == (55, 5)
    total, most = database_limit([5000, 3000] + [50] * 30, 0.1, 5000)
    assert most <= 0.1 * total and total > 30 * 50


def test_a_database_share_outside_0_and_1_is_refused(tmp_path):
    with pytest.raises(ValueError, match="max_database_share"):
        select(tmp_path, [[sample("q")]], max_database_share=1.5)


def test_the_release_card_lists_each_databases_share_of_the_multi_table_samples():
    from curate.exports.release import _card_database_shares

    share = {"max": 0.1, "tasks": ["MMQA/"], "per_database_limit": {"MMQA/multi_table_qa": 3},
             "by_database": {"MMQA/multi_table_qa": {"ratdat": 3, "gapminder": 1},
                             "MMQA/text_to_sql": {"ratdat": 3, "gapminder": 1}}}
    text = "\n".join(_card_database_shares(share))
    assert "No database gives more than 10% of a multi-table task's samples" in text
    assert "| ratdat | 6 | 75.0% |" in text and "| gapminder | 2 | 25.0% |" in text
    assert _card_database_shares({}) == []

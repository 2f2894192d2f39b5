"""Model-written SQL (text-to-SQL replies) reaches neither the golds, nor a file, nor another
sample (issue 41, findings 2-4): `curate.curation.programs.untrusted_sql` and the `execution_match` metric."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from curate.curation.programs.untrusted_sql import (QueryRefused, duckdb_database, refusal, run_duckdb, run_sqlite,
                                             sqlite_database)
from curate.evaluation.metrics import score
from tests.conftest import shared

TOWNS = pa.table({"town": ["Oslo", "Bergen", "Bodø"], "people": [700, 290, 52]})
GOLD = "SELECT sum(people) FROM towns"


def _context(program: str = GOLD, **tables: pa.Table) -> dict:
    return {"tables": tables or {"towns": TOWNS}, "program": program}


# ------------------------------------------------------------------ finding 2: replies that read golds


def test_a_reply_that_reads_the_golds_from_disk_scores_no_better_than_select_42(tmp_path):
    golds = tmp_path / "samples" / "MMQA-text_to_sql"
    golds.mkdir(parents=True)
    (golds / "test.jsonl").write_text(json.dumps({"id": "s1", "program": {"text": GOLD}}) + "\n")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": ["s1"], "sql": [GOLD]}), golds / "test.parquet")
    steal = f"SET VARIABLE g = (SELECT s.program.text FROM read_json_auto('{golds}/test.jsonl') s WHERE s.id = 's1')"
    replies = [
        f"SELECT 1; {steal}; SELECT * FROM query(getvariable('g'))",
        f"SELECT 1; SET VARIABLE g = (SELECT sql FROM read_parquet('{golds}/*.parquet')); "
        "SELECT * FROM query(getvariable('g'))",
        f"SELECT 1; SET VARIABLE f = (SELECT list(file) FROM glob('{tmp_path}/**/*.parquet')); "
        "SET VARIABLE g = (SELECT sql FROM read_parquet(getvariable('f'))); SELECT * FROM query(getvariable('g'))",
        f"SELECT 1; {steal}; WITH x AS (SELECT * FROM query(getvariable('g'))) SELECT * FROM x",
        f"SELECT 42; SELECT (SELECT sum(people) FROM read_csv('{tmp_path}/none.csv')) FROM towns",
    ]
    baseline = score("execution_match", "SELECT 42", None, _context()).value
    assert score("execution_match", GOLD, None, _context()).value == 1.0 and baseline == 0.0
    for reply in replies:
        result = score("execution_match", reply, None, _context())
        assert result.value <= baseline, (reply, result)


# ------------------------------------------------------------------ finding 3: model SQL writes files


def test_copy_to_a_file_writes_nothing(tmp_path):
    target = tmp_path / "x"
    for reply in [f"SELECT 1; COPY (SELECT * FROM towns) TO '{target}'",
                  f"SELECT 1; COPY towns TO '{target}' (FORMAT parquet)",
                  f"SELECT 1; ATTACH '{target}' AS other"]:
        result = score("execution_match", reply, None, _context())
        assert result.value == 0.0 and "error" in result.details
        assert not target.exists()
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ finding 4: one reply changes another sample


def test_a_temp_view_over_another_samples_table_neither_crashes_nor_changes_it():
    shops = pa.table({"shop": ["a", "b"], "sales": [3, 4]})
    first = _context("SELECT count(*) FROM towns")
    second = _context("SELECT shop FROM shops WHERE sales > 3", shops=shops)
    attack = score("execution_match", 'SELECT 1; CREATE OR REPLACE TEMP VIEW "shops" AS SELECT 1', None, first)
    assert attack.value == 0.0
    assert score("execution_match", "SELECT shop FROM shops WHERE sales > 3", None, second).value == 1.0
    assert score("execution_match", "SELECT 1", None, second).value == 0.0


def test_a_temp_macro_does_not_change_what_a_later_sample_computes():
    attack = score("execution_match", "SELECT 1; CREATE TEMP MACRO sum(x) AS 0", None, _context())
    assert attack.value == 0.0
    assert score("execution_match", GOLD, None, _context()).value == 1.0
    # with the macro in force the gold would compute 0 and this reply would match it
    assert score("execution_match", "SELECT 0 FROM towns", None, _context()).value == 0.0


# ------------------------------------------------------------------ the rule itself


@pytest.mark.parametrize("sql", [
    "SELECT 1; SELECT 2", "PRAGMA database_list", "SET memory_limit = '10GB'", "SET VARIABLE g = 1",
    "COPY towns TO '/tmp/x'", "ATTACH '/tmp/x' AS o", "CREATE TABLE x AS SELECT 1", "INSERT INTO towns VALUES (1, 2)",
    "CALL pragma_version()", "EXPORT DATABASE '/tmp/x'", "INSTALL httpfs", "LOAD json", "DESCRIBE towns",
    "SELECT * FROM read_csv('/etc/passwd')", "SELECT * FROM read_csv_auto('/etc/passwd')",
    "SELECT * FROM read_parquet('x.parquet')", "SELECT * FROM read_json_auto('x')", "SELECT * FROM glob('*')",
    "SELECT * FROM query('SELECT 1')", "SELECT * FROM query_table('towns')", "SELECT * FROM sqlite_scan('a', 'b')",
    "SELECT * FROM duckdb_tables()", "SELECT * FROM duckdb_settings()", "SELECT * FROM information_schema.tables",
    "SELECT * FROM 'file.csv'", "SELECT * FROM other", "SELECT * FROM range(10)", "SELECT getvariable('g')",
    "SELECT current_setting('threads')", "SELECT length(repeat('x', 2000000000))", "SELECT * INTO x FROM towns",
    "WITH a AS (SELECT * FROM query('SELECT 1')) SELECT * FROM a", "SELECT * FROM towns, LATERAL read_csv('x')",
    "SELECT * FROM towns WHERE town IN (SELECT * FROM read_csv('x'))", "SELECT * FROM main.towns",
])
def test_anything_but_one_read_query_over_the_samples_tables_is_refused(sql):
    assert refusal(sql, ["towns"]) is not None


@pytest.mark.parametrize("sql", [
    "SELECT town FROM towns WHERE people > 100 ORDER BY 1", "FROM towns", "SELECT * FROM Towns",
    "WITH big AS (SELECT * FROM towns WHERE people > 100) SELECT count(*) FROM big",
    "SELECT town FROM towns UNION SELECT town FROM towns", "SELECT a.town FROM towns a JOIN towns b ON a.town = b.town",
    "SELECT town, rank() OVER (ORDER BY people) FROM towns", "SELECT (SELECT max(people) FROM towns) AS m",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT * FROM c",
    "SELECT upper(town), round(avg(people), 2) FROM towns GROUP BY 1 HAVING count(*) > 0",
])
def test_a_read_query_over_the_samples_tables_runs(sql):
    assert refusal(sql, ["towns"]) is None
    assert isinstance(run_duckdb(duckdb_database(), sql, {"towns": TOWNS}), list)


def test_a_query_past_its_deadline_or_row_cap_is_stopped_in_both_engines():
    big = "SELECT count(*) FROM towns a, towns b, towns c, towns d, towns e, towns f, towns g, towns h, towns i, " \
          "towns j, towns k, towns l, towns m, towns n, towns o, towns p, towns q, towns r, towns s, towns t"
    tables = {"towns": TOWNS}
    with pytest.raises(QueryRefused, match="deadline"):
        run_duckdb(duckdb_database(), big, tables, seconds=0.2)
    with pytest.raises(QueryRefused, match="deadline"):
        run_sqlite(sqlite_database(tables), big, tables, seconds=0.2)
    with pytest.raises(QueryRefused, match="more than 2 rows"):
        run_duckdb(duckdb_database(), "SELECT * FROM towns", tables, row_cap=2)
    with pytest.raises(QueryRefused, match="more than 2 rows"):
        run_sqlite(sqlite_database(tables), "SELECT * FROM towns", tables, row_cap=2)


def test_the_sqlite_copy_only_reads(tmp_path):
    con = sqlite_database({"towns": TOWNS})
    for sql in [f"ATTACH '{tmp_path / 'x.db'}' AS o", "PRAGMA writable_schema = 1", "DELETE FROM towns",
                "CREATE TEMP VIEW v AS SELECT 1", "SELECT * FROM sqlite_master", "SELECT load_extension('x')"]:
        with pytest.raises(sqlite3.DatabaseError):
            con.execute(sql).fetchall()
    assert con.execute("SELECT count(*) FROM towns").fetchall() == [(3,)]
    assert list(tmp_path.iterdir()) == []
    spider = {"tables": {"towns": TOWNS}, "program": GOLD, "dialect": "sqlite"}
    assert score("execution_match", GOLD, None, spider).value == 1.0
    assert score("execution_match", "SELECT * FROM sqlite_master", None, spider).value == 0.0


# ------------------------------------------------------------------ end to end, on a Spider database


@pytest.fixture(scope="module")
def department_store(tmp_path_factory):
    """A text-to-SQL release over Spider's department_store (stages = sql), built once for this module."""
    from curate.curation.build import run_build
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.workspace import Workspace

    tmp = tmp_path_factory.mktemp("department-store")
    database = shared("spider", "database", "department_store")
    config = {"build": {"sources": [str(database)], "stages": ["sql"]}, "select": {"max_per_task": 12},
              "release": {"name": "department-store"}}
    return Path(run_build(Workspace(tmp / "ws"), config, tmp / "releases", executor=LocalExecutor(1))["release"]["path"])


def test_replayed_attacks_score_like_select_42_and_leave_every_other_sample_at_one(department_store, tmp_path):
    import pandas as pd
    from click.testing import CliRunner

    from curate.curation.cli import main
    from curate.evaluation.dataset import ReleaseData

    data = ReleaseData(department_store)
    samples = sorted(data.samples(tasks=["MMQA/text_to_sql"]), key=lambda s: s.id)
    golds = department_store / "samples" / "MMQA-text_to_sql"
    written = tmp_path / "written"

    def steal(sample_id: str) -> str:
        return (f"SET VARIABLE g = (SELECT s.program.text FROM read_json_auto('{golds}/*.jsonl') s "
                f"WHERE s.id = '{sample_id}')")

    other_table = data.table(samples[-1].table_ids[0]).name
    attacks = {
        "read_json": lambda s: f"SELECT 1; {steal(s.id)}; SELECT * FROM query(getvariable('g'))",
        "read_parquet": lambda s: (f"SELECT 1; SET VARIABLE g = (SELECT program.text FROM read_parquet('{golds}/"
                                   f"*.parquet') WHERE id = '{s.id}'); SELECT * FROM query(getvariable('g'))"),
        "glob": lambda s: (f"SELECT 1; SET VARIABLE f = (SELECT list(file) FROM glob('{department_store}/**/*.parquet')"
                           f" WHERE file LIKE '%text_to_sql%'); SET VARIABLE g = (SELECT program.text FROM "
                           f"read_parquet(getvariable('f')) WHERE id = '{s.id}'); SELECT * FROM query(getvariable('g'))"),
        "cte": lambda s: f"SELECT 1; {steal(s.id)}; WITH x AS (SELECT * FROM query(getvariable('g'))) SELECT * FROM x",
        "second_statement": lambda s: f"SELECT 42; {steal(s.id)}; SELECT * FROM query(getvariable('g'))",
        "select_42": lambda s: "SELECT 42",
    }
    configs = ["csv:none", "html:none", "json:none", "latex:none", "concatenation:none", "dataframe:none"]
    replies = [{"sample_id": s.id, "reply": f"```sql\n{attack(s)}\n```", "config": config}
               for s in samples for attack, config in zip(attacks.values(), configs)]
    # the default configuration: the first samples write a file, shadow another sample's table and
    # redefine sum(); every other sample replies with its own gold SQL
    harmful = [f"SELECT 1; COPY (SELECT 1) TO '{written}'", f'SELECT 1; CREATE OR REPLACE TEMP VIEW "{other_table}" '
               "AS SELECT 1", "SELECT 1; CREATE TEMP MACRO sum(x) AS 0"]
    replies += [{"sample_id": s.id, "reply": f"```sql\n{harmful[i] if i < len(harmful) else s.program['text']}\n```"}
                for i, s in enumerate(samples)]
    file = tmp_path / "replies.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in replies))
    out = tmp_path / "out"
    run = CliRunner().invoke(main, ["evaluate", str(department_store), "--backend", "replay", "--predictions",
                                    str(file), "--out", str(out), "--tasks", "MMQA/text_to_sql", "--json"])
    assert run.exit_code == 0, run.output
    results = pd.read_parquet(out / "results.parquet")
    by_config = results.groupby("config")["score"].mean()
    baseline = by_config["dataframe:none"]
    for config in configs[:-1]:
        assert by_config[config] <= baseline, by_config
    assert not written.exists()
    default = results[results["config"] == "markdown:none"].sort_values("sample_id")
    assert len(default) == len(samples) > len(harmful) + 3
    assert list(default["score"])[len(harmful):] == [1.0] * (len(samples) - len(harmful))

"""A release's own programs are hostile input (`curate verify`, `curate release verify` re-run
them): a forged release's SQL may neither touch the host nor hang or bend the verifier. Each
attack checks the host after it: no file appeared, no setting changed."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from curate.curation.programs import ProgramError
from curate.curation.programs.sql import SqlRunner
from curate.curation.programs.sqlite import SqliteRunner
from curate.curation.table import Table

TABLE = Table(name="people", body=pa.table({"name": ["a", "b", "c"], "age": [1, 2, 3]}))


@pytest.fixture(scope="module")
def runners():
    duck, lite = SqlRunner(seconds=0.5), SqliteRunner(seconds=0.5)
    yield duck, lite
    duck.close()
    lite.close()


def _refused(run, text: str) -> str:
    with pytest.raises(ProgramError) as e:
        run(text)
    return str(e.value)


def test_forged_sqlite_sql_neither_writes_a_file_nor_loads_code_nor_runs_forever(runners, tmp_path):
    lite = runners[1]
    run = lambda text: lite.run(text, [TABLE], ["people"])  # noqa: E731
    target = tmp_path / "planted.db"
    for attack in (f"ATTACH DATABASE '{target}' AS x",
                   f"SELECT 1; ATTACH DATABASE '{target}' AS x",
                   f"VACUUM INTO '{target}'",
                   "SELECT load_extension('/usr/lib/x86_64-linux-gnu/libsqlite3.so.0')",
                   "DELETE FROM people", "CREATE TABLE planted (x)", "PRAGMA writable_schema = 1",
                   "SELECT * FROM sqlite_master",
                   "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r",
                   "REPLACE INTO people VALUES ('d', 4)", "SELECT length(zeroblob(2000000000))", "SELECT hex(randomblob(1000000000))",
                   "SELECT count(*) FROM " + ", ".join(f"people p{i}" for i in range(30))):
        _refused(run, attack)
    assert run("SELECT count(*) FROM people") == 3  # nothing deleted, the runner still reads
    assert os.listdir(tmp_path) == []


def test_forged_duckdb_sql_changes_no_setting_leaves_nothing_behind_and_ends(runners, tmp_path):
    duck = runners[0]
    run = lambda text: duck.run(text, [TABLE])  # noqa: E731
    target = tmp_path / "planted.csv"
    for attack in ("SET memory_limit = '100GB'", "SET threads = 64", "SELECT 1; SET threads = 64",
                   f"COPY (SELECT 1) TO '{target}'", f"ATTACH '{target}.db'", "INSTALL httpfs", "LOAD httpfs",
                   "CREATE MACRO sum(x) AS 0", "CREATE OR REPLACE TABLE t AS SELECT 0 AS age", "DROP TABLE t",
                   f"SELECT * FROM read_csv('{target}')",
                   "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r",
                   "SELECT * FROM range(200000)"):
        _refused(run, attack)
    assert run("SELECT sum(age) FROM t") == 6  # no macro, no replaced table carried to the next program
    settings = dict(duck.connection.execute(
        "SELECT name, value FROM duckdb_settings() WHERE name IN ('threads', 'enable_external_access', "
        "'lock_configuration')").fetchall())
    assert settings == {"threads": "1", "enable_external_access": "false", "lock_configuration": "true"}
    assert os.listdir(tmp_path) == []

"""Hostile database files: a few KB on disk that make values, rows or work without end. Each is
refused with the limit it broke, quickly and without the memory it asks for, and a good file in the
same folder still comes in. The ingest runs in a child process under an address-space limit of its
own and a timeout, so that a regression fails the test instead of eating the machine. The limit is
4 GB of address space, not 2: Arrow's allocator and DuckDB's threads reserve about 1.6 GB of it
that they never touch, and each attack asks for 5 GB or more."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[1]
CONFINED_MB = 4096
CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({mb} << 20, resource.RLIM_INFINITY))
from curate.curation.pipeline.executor import LocalExecutor
from curate.curation.pipeline.runner import run_stage
report = run_stage("ingest", json.loads(sys.argv[1]), [], __import__("pathlib").Path(sys.argv[2]), LocalExecutor(1)).report
print(json.dumps({{"tables": report["tables"], "problems": {{f["path"].rsplit("/", 1)[-1]: f["reason"]
                                                        for f in report["failures"]}}}}))
"""


def ingest_confined(folder: Path, tmp_path: Path, **limits) -> tuple[int, dict[str, str]]:
    """Ingest `folder` in a child under RLIMIT_AS; the tables read and each failed file's reason."""
    config = {"source": str(folder), **({"limits": limits} if limits else {})}
    done = subprocess.run([sys.executable, "-c", CHILD.format(mb=CONFINED_MB), json.dumps(config),
                           str(tmp_path / "stages")], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["tables"], out["problems"]


def folder_with_a_good_file(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.csv").write_text("a,b\n1,2\n3,4\n")
    return folder


def sqlite_file(path: Path, table: str, rows: int, generated: str = "") -> Path:
    """A table `t (a INT, ...)` of `rows` rows whose generated columns are written into its schema
    afterwards, as a hostile file would be made: SQLite computes them on INSERT, never from disk."""
    con = sqlite3.connect(path)
    con.execute(table.replace(generated, "NULL") if generated else table)
    con.execute("INSERT INTO t(a) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
                "SELECT i FROM n", (rows,))
    con.commit()
    if generated:
        con.execute("PRAGMA writable_schema = ON")
        con.execute("UPDATE sqlite_master SET sql = ? WHERE name = 't'", (table,))
        con.commit()
    con.close()
    return path


def test_a_generated_zeroblob_column_is_refused_before_its_values_are_made(tmp_path):
    folder = folder_with_a_good_file(tmp_path)
    bomb = sqlite_file(folder / "zero.sqlite", "CREATE TABLE t (a INT, big BLOB GENERATED ALWAYS AS "
                       "(zeroblob(900000000)) VIRTUAL)", 6)
    assert bomb.stat().st_size < 16384  # 6 x 900 MB from 8 KB
    before = sorted(p.name for p in folder.iterdir()), bomb.read_bytes()
    tables, problems = ingest_confined(folder, tmp_path)
    assert tables == 1 and set(problems) == {"zero.sqlite"}
    assert "a value in table 't' (MB) is past the limit (max_cell_mb = 64" in problems["zero.sqlite"]
    assert (sorted(p.name for p in folder.iterdir()), bomb.read_bytes()) == before  # no journal, nothing written


def test_huge_text_values_are_refused_in_sqlite_and_duckdb(tmp_path):
    import duckdb

    folder = folder_with_a_good_file(tmp_path)
    sqlite_file(folder / "text.sqlite", "CREATE TABLE t (a INT, s TEXT GENERATED ALWAYS AS "
                "(hex(zeroblob(2000000))) VIRTUAL)", 6, "hex(zeroblob(2000000))")
    con = duckdb.connect(str(folder / "text.duckdb"))
    con.execute("CREATE TABLE t (a INT, s AS (repeat('x', 3000000)))")
    con.execute("INSERT INTO t(a) SELECT range FROM range(6)")
    con.close()
    tables, problems = ingest_confined(folder, tmp_path, max_cell_mb=1)
    assert tables == 1 and set(problems) == {"text.sqlite", "text.duckdb"}
    assert all("a value in table 't' (MB) is past the limit (max_cell_mb = 1 " in r for r in problems.values()), problems


def test_rows_past_the_memory_bound_are_refused_with_it(tmp_path):
    """Each value is under max_cell_mb, but a row (SQLite) or a batch (DuckDB) holds more than the
    reader may take: the address-space bound stops it at the first allocation past it."""
    import duckdb

    folder = folder_with_a_good_file(tmp_path)
    wide = ", ".join(f"g{i} BLOB GENERATED ALWAYS AS (zeroblob(30000000)) VIRTUAL" for i in range(20))
    sqlite_file(folder / "wide.sqlite", f"CREATE TABLE t (a INT, {wide})", 6)
    con = duckdb.connect(str(folder / "long.duckdb"))
    con.execute("CREATE TABLE t (a INT, s AS (repeat('x', 1000000)))")
    con.execute("INSERT INTO t(a) SELECT range FROM range(3000)")  # 3 GB of text from a few KB
    con.close()
    tables, problems = ingest_confined(folder, tmp_path, max_memory_mb=256)
    assert tables == 1 and set(problems) == {"wide.sqlite", "long.duckdb"}
    assert all("max_memory_mb = 256 " in r for r in problems.values()), problems


def test_rows_and_bytes_are_counted_as_they_stream(tmp_path):
    folder = folder_with_a_good_file(tmp_path)
    sqlite_file(folder / "many.sqlite", "CREATE TABLE t (a INT)", 5000)
    sqlite_file(folder / "fat.sqlite", "CREATE TABLE t (a INT, s TEXT GENERATED ALWAYS AS (hex(zeroblob(4000))))", 600,
                "hex(zeroblob(4000))")  # 600 rows of 8 KB
    tables, problems = ingest_confined(folder, tmp_path, max_rows=1000, max_table_mb=2)
    assert tables == 1 and "table 't''s row count is past the limit (max_rows = 1,000" in problems["many.sqlite"]
    assert "table 't''s values (MB) is past the limit (max_table_mb = 2" in problems["fat.sqlite"]


def test_exploding_and_endless_views_are_not_run_and_the_tables_beside_them_come_in(tmp_path):
    """A database's tables are its data; its views are queries, never run by ingest: a view that
    cross-joins a table with itself ten times, or a recursive one that never ends, costs nothing."""
    folder = folder_with_a_good_file(tmp_path)
    sqlite_file(folder / "views.sqlite", "CREATE TABLE t (a INT)", 100)
    con = sqlite3.connect(folder / "views.sqlite")
    con.execute(f"CREATE VIEW boom AS SELECT t0.a FROM {', '.join(f't AS t{i}' for i in range(10))}")  # 10^20 rows
    con.execute("CREATE VIEW endless AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n")
    con.execute("CREATE TABLE child (a INT REFERENCES endless(i))")
    con.commit()
    con.close()
    tables, problems = ingest_confined(folder, tmp_path)
    assert tables == 3 and not problems  # good.csv, t and child


def test_a_slow_generated_column_stops_at_the_deadline_inside_sqlite(tmp_path):
    """Each row costs seconds of work inside one fetch; the deadline is kept from inside SQLite,
    where a Python timer would wait for the fetch to end."""
    folder = folder_with_a_good_file(tmp_path)
    sqlite_file(folder / "slow.sqlite", "CREATE TABLE t (a INT, h INT GENERATED ALWAYS AS "
                "(length(hex(zeroblob(20000000 + a)))) VIRTUAL)", 500, "length(hex(zeroblob(20000000 + a)))")
    tables, problems = ingest_confined(folder, tmp_path, seconds_per_file=2)
    assert tables == 1 and "seconds_per_file = 2 " in problems["slow.sqlite"]

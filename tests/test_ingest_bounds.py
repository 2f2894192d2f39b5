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
# one child ingests every attack's folder in turn (a child per attack cost ~0.7 s each to start)
CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({mb} << 20, resource.RLIM_INFINITY))
from pathlib import Path
from curate.curation.pipeline.executor import LocalExecutor
from curate.curation.pipeline.runner import run_stage
out = {{}}
for name, config in json.loads(sys.argv[1]).items():
    report = run_stage("ingest", config, [], Path(sys.argv[2]) / name, LocalExecutor(1)).report
    out[name] = {{"tables": report["tables"], "problems": {{f["path"].rsplit("/", 1)[-1]: f["reason"]
                                                          for f in report["failures"]}}}}
print(json.dumps(out))
"""
ATTACKS = {}  # name -> (how to make its folder's hostile files, the [ingest] limits it runs under)


def attack(**limits):
    def register(make):
        ATTACKS[make.__name__] = (make, limits)
        return make
    return register


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """Every attack's folder (its hostile files beside a good CSV) ingested by one confined child:
    name -> (tables read, each failed file's reason, the folder's files and bytes before)."""
    tmp = tmp_path_factory.mktemp("ingest-attacks")
    configs, before = {}, {}
    for name, (make, limits) in ATTACKS.items():
        folder = tmp / name
        folder.mkdir()
        (folder / "good.csv").write_text("a,b\n1,2\n3,4\n")
        make(folder)
        before[name] = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
        configs[name] = {"source": str(folder), **({"limits": limits} if limits else {})}
    done = subprocess.run([sys.executable, "-c", CHILD.format(mb=CONFINED_MB), json.dumps(configs), str(tmp / "stages")],
                          cwd=ROOT, capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return {name: (r["tables"], r["problems"], before[name], tmp / name) for name, r in out.items()}


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


@attack()
def zeroblob(folder: Path) -> None:
    bomb = sqlite_file(folder / "zero.sqlite", "CREATE TABLE t (a INT, big BLOB GENERATED ALWAYS AS "
                       "(zeroblob(900000000)) VIRTUAL)", 6)
    assert bomb.stat().st_size < 16384  # 6 x 900 MB from 8 KB


def test_a_generated_zeroblob_column_is_refused_before_its_values_are_made(ingested):
    tables, problems, before, folder = ingested["zeroblob"]
    assert tables == 1 and set(problems) == {"zero.sqlite"}
    assert "a value in table 't' (MB) is past the limit (max_cell_mb = 64" in problems["zero.sqlite"]
    assert {p.name: p.read_bytes() for p in sorted(folder.iterdir())} == before  # no journal, nothing written


@attack(max_cell_mb=1)
def huge_text(folder: Path) -> None:
    import duckdb

    sqlite_file(folder / "text.sqlite", "CREATE TABLE t (a INT, s TEXT GENERATED ALWAYS AS "
                "(hex(zeroblob(2000000))) VIRTUAL)", 6, "hex(zeroblob(2000000))")
    con = duckdb.connect(str(folder / "text.duckdb"))
    con.execute("CREATE TABLE t (a INT, s AS (repeat('x', 3000000)))")
    con.execute("INSERT INTO t(a) SELECT range FROM range(6)")
    con.close()


def test_huge_text_values_are_refused_in_sqlite_and_duckdb(ingested):
    tables, problems, _, _ = ingested["huge_text"]
    assert tables == 1 and set(problems) == {"text.sqlite", "text.duckdb"}
    assert all("a value in table 't' (MB) is past the limit (max_cell_mb = 1 " in r for r in problems.values()), problems


@attack(max_memory_mb=256)
def past_memory(folder: Path) -> None:
    import duckdb

    wide = ", ".join(f"g{i} BLOB GENERATED ALWAYS AS (zeroblob(30000000)) VIRTUAL" for i in range(20))
    sqlite_file(folder / "wide.sqlite", f"CREATE TABLE t (a INT, {wide})", 6)
    con = duckdb.connect(str(folder / "long.duckdb"))
    con.execute("CREATE TABLE t (a INT, s AS (repeat('x', 1000000)))")
    con.execute("INSERT INTO t(a) SELECT range FROM range(3000)")  # 3 GB of text from a few KB
    con.close()


def test_rows_past_the_memory_bound_are_refused_with_it(ingested):
    """Each value is under max_cell_mb, but a row (SQLite) or a batch (DuckDB) holds more than the
    reader may take: the address-space bound stops it at the first allocation past it."""
    tables, problems, _, _ = ingested["past_memory"]
    assert tables == 1 and set(problems) == {"wide.sqlite", "long.duckdb"}
    assert all("max_memory_mb = 256 " in r for r in problems.values()), problems


@attack(max_rows=1000, max_table_mb=2)
def streamed(folder: Path) -> None:
    sqlite_file(folder / "many.sqlite", "CREATE TABLE t (a INT)", 5000)
    sqlite_file(folder / "fat.sqlite", "CREATE TABLE t (a INT, s TEXT GENERATED ALWAYS AS (hex(zeroblob(4000))))", 600,
                "hex(zeroblob(4000))")  # 600 rows of 8 KB


def test_rows_and_bytes_are_counted_as_they_stream(ingested):
    tables, problems, _, _ = ingested["streamed"]
    assert tables == 1 and "table 't''s row count is past the limit (max_rows = 1,000" in problems["many.sqlite"]
    assert "table 't''s values (MB) is past the limit (max_table_mb = 2" in problems["fat.sqlite"]


@attack()
def views(folder: Path) -> None:
    sqlite_file(folder / "views.sqlite", "CREATE TABLE t (a INT)", 100)
    con = sqlite3.connect(folder / "views.sqlite")
    con.execute(f"CREATE VIEW boom AS SELECT t0.a FROM {', '.join(f't AS t{i}' for i in range(10))}")  # 10^20 rows
    con.execute("CREATE VIEW endless AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n")
    con.execute("CREATE TABLE child (a INT REFERENCES endless(i))")
    con.commit()
    con.close()


def test_exploding_and_endless_views_are_not_run_and_the_tables_beside_them_come_in(ingested):
    """A database's tables are its data; its views are queries, never run by ingest: a view that
    cross-joins a table with itself ten times, or a recursive one that never ends, costs nothing."""
    tables, problems, _, _ = ingested["views"]
    assert tables == 3 and not problems  # good.csv, t and child


@attack(seconds_per_file=1)
def slow(folder: Path) -> None:
    sqlite_file(folder / "slow.sqlite", "CREATE TABLE t (a INT, h INT GENERATED ALWAYS AS "
                "(length(hex(zeroblob(20000000 + a)))) VIRTUAL)", 500, "length(hex(zeroblob(20000000 + a)))")


def test_a_slow_generated_column_stops_at_the_deadline_inside_sqlite(ingested):
    """Each row costs seconds of work inside one fetch; the deadline is kept from inside SQLite,
    where a Python timer would wait for the fetch to end."""
    tables, problems, _, _ = ingested["slow"]
    assert tables == 1 and "seconds_per_file = 1 " in problems["slow.sqlite"]

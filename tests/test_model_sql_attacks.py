"""Model SQL written to exhaust the evaluator rather than to read a file: a query too long to parse,
nesting past the parser's recursion, values that grow past memory one row at a time. Each is
refused with its reason, and the connection still answers the next sample's query."""

from __future__ import annotations

import pyarrow as pa
import pytest

from curate.curation.programs.untrusted_sql import (QueryRefused, duckdb_database, run_duckdb, run_sqlite,
                                                     sqlite_database)

TABLES = {"t": pa.table({"a": list(range(1000)), "s": ["x" * 10] * 1000})}
BLOWUP = "replace(replace(replace(s || s || s || s || s, 'x', '{0}'), 'x', '{0}'), 'x', '{0}')".format("x" * 22)


@pytest.fixture(scope="module")
def lite():
    con = sqlite_database(TABLES)
    yield con
    con.close()


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_queries_written_to_exhaust_the_evaluator_are_refused(engine, lite):
    # each is refused by its own limit, not by the deadline: 3 s was passed first on a loaded machine
    run = ((lambda sql: run_sqlite(lite, sql, TABLES, seconds=15)) if engine == "sqlite"
           else (lambda sql: run_duckdb(duckdb_database(), sql, TABLES, seconds=15)))
    attacks = {
        "longer than": "SELECT count(*) FROM t WHERE a IN (" + ",".join(map(str, range(200_000))) + ")",
        "unreadable": "SELECT " + "(SELECT " * 3000 + "1" + ")" * 3000,
        # each value under SQLite's length limit, the result (1000 x 1.1 MB) far over memory's
        "bytes of text" if engine == "sqlite" else "Out of Memory": f"SELECT {BLOWUP} FROM t",
        "too big" if engine == "sqlite" else "Out of Memory":
            "WITH RECURSIVE r(x, n) AS (SELECT 'ab', 0 UNION ALL SELECT x || x, n + 1 FROM r WHERE n < 40) "
            "SELECT length(max(x)) FROM r",
    }
    for reason, sql in attacks.items():
        with pytest.raises(QueryRefused, match=reason):
            run(sql)
    assert run("SELECT count(*), max(a) FROM t") == [(1000, 999)]

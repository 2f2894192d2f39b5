"""How many of Spider's tie-dependent gold queries `curate audit` finds, measured against an oracle that
does not share its method: each gold SQL run in SQLite over the tables with their rows stored in K random
orders (seeded); a query whose result (as a multiset of rows) changes with the order depends on an arbitrary
tie. The audit's two detectors (order keys tied at the LIMIT boundary; the result over the rows stored in
reverse) are compared with it on the questions whose SQL runs and returns rows.

    python benchmarks/audit_spider_ties.py [--orders K]
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("CURATE_SHARED_DATA", ROOT.parent / "shared" / "data")) / "spider"


def measure(orders: int = 8, data: Path = DATA) -> dict:
    import pyarrow.parquet as pq

    from curate.curation.arrow_io import table_at, table_index
    from curate.curation.programs import data_view
    from curate.curation.programs.sql import sqlite_copy
    from curate.importers import write_import
    from curate.validators.audit import _multiset, audit_release, typed_bodies

    with tempfile.TemporaryDirectory() as tmp:
        write_import("spider", [str(data / "dev_questions.json")], name="spider", releases=Path(tmp))
        release = Path(tmp) / "spider" / "1.0.0"
        report = audit_release(str(release))
        flagged = {f["sample_id"] for f in report["findings"] if f["kind"] == "ambiguous"}
        source = {f["sample_id"]: f["source_id"] for f in report["findings"]}
        index = table_index([str(release / "tables" / "tables.parquet")])
        oracle, runs, details = set(), 0, {}
        copies: dict[tuple, list] = {}
        for file in sorted((release / "samples").glob("*/*.parquet")):
            for row in pq.read_table(file, columns=["id", "table_ids", "provenance"]).to_pylist():
                prov = json.loads(row["provenance"])
                sql = prov.get("source_sql")
                if not sql:
                    continue
                key = tuple(row["table_ids"])
                if key not in copies:
                    bodies = typed_bodies({(t := table_at(*index[i])).name: data_view(t) for i in key if i in index})
                    rng = random.Random(0)
                    shuffled = []
                    for _ in range(orders):
                        shuffled.append({n: b.take(rng.sample(range(b.num_rows), b.num_rows)) for n, b in bodies.items()})
                    copies[key] = [sqlite_copy(bodies, typed=True)] + [sqlite_copy(s, typed=True) for s in shuffled]
                try:
                    results = [_multiset(con.execute(sql).fetchall()) for con in copies[key]]
                except Exception:  # noqa: BLE001 - fails: not a tie question
                    continue
                if not results[0]:
                    continue
                runs += 1
                if any(r != results[0] for r in results[1:]):
                    oracle.add(row["id"])
                    details[row["id"]] = {"source_id": prov.get("source_id"), "sql": sql}
        for cons in copies.values():
            for con in cons:
                con.close()
    found = flagged & oracle
    return {"orders": orders, "queries_that_run": runs, "oracle_tie_dependent": len(oracle),
            "flagged_ambiguous": len(flagged), "flagged_and_oracle": len(found),
            "recall_against_oracle": round(len(found) / len(oracle), 3) if oracle else None,
            "missed": [details[i] for i in sorted(oracle - flagged)],
            "flagged_not_in_oracle": sorted(source[i] for i in flagged - oracle)}


if __name__ == "__main__":
    k = int(sys.argv[sys.argv.index("--orders") + 1]) if "--orders" in sys.argv else 8
    print(json.dumps(measure(k), indent=2, ensure_ascii=False))

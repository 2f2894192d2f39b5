"""How sheets' layout is read (issue 44), before and after a change, on a part set aside before tuning.

The parts: RealHiTBench's 100 more spreadsheets (../shared/data/realhitbench/more/tables) split by the
md5 of the file's stem (`_swap` left out, as its original), and TableBench's tables
(tablebench/TableBench_DP_subset.jsonl) by the md5 of the question's id: `even` is set aside (report
on it), `odd` is what rules may be tuned on. The split was fixed before any layout rule was written.

`--dump FILE` writes what the checkout on PYTHONPATH reads: every table's range, caption, notes,
row-header levels, each column's role (semantics.infer on the table as read), and the body's floats
written with more than 6 decimals (a formula's noise: 12258.3560606061 where the sheet shows
12258.36). Run it once with the old checkout and once with the new, then `--compare OLD NEW` prints
what changed, sheet by sheet, and the totals:

    PYTHONPATH=/path/to/old python benchmarks/layout_holdout.py --part even --dump old.json
    PYTHONPATH=. python benchmarks/layout_holdout.py --part even --dump new.json
    python benchmarks/layout_holdout.py --compare old.json new.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

DATA = Path(os.environ.get("CURATE_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


def part_of(name: str) -> str:
    """`even` (set aside) or `odd` (tuning), by the md5 of a sheet's stem or a question's id."""
    return "even" if int(hashlib.md5(name.removesuffix("_swap").encode()).hexdigest(), 16) % 2 == 0 else "odd"


def noisy(values: list[Any]) -> int:
    """Floats written with more than 6 decimals."""
    return sum(isinstance(v, float) and "e" not in repr(v) and len(repr(v).split(".")[1]) > 6 for v in values)


def describe(table: Any) -> dict[str, Any]:
    from curate.curation import semantics as sem

    roles = {i.name: i.role for i in sem.infer(table)}
    return {"name": table.name, "range": table.provenance.cell_range, "caption": table.caption,
            "notes": list(table.notes), "columns": list(table.columns),
            "row_levels": sorted({n.level for n in table.header if n.axis == "R"}),
            "row_nodes": len([n for n in table.header if n.axis == "R"]),
            "roles": roles, "noisy": sum(noisy(table.body.column(j).to_pylist()) for j in range(table.n_cols))}


def dump(part: str) -> dict[str, Any]:
    from curate.curation.sources.readers import jsonfile, xlsx

    sheets: dict[str, Any] = {}
    for path in sorted((DATA / "realhitbench" / "more" / "tables").glob("*.xlsx")):
        if path.stem.endswith("_swap") or part_of(path.stem) != part:
            continue
        skipped: list[dict] = []
        try:
            sheets[path.stem] = [describe(t) for t in xlsx.read(str(path), skipped)]
        except Exception as e:  # a sheet nobody can read is reported, not a stop
            sheets[path.stem] = {"error": f"{type(e).__name__}: {e}"}
    tables: dict[str, Any] = {}
    seen: set[str] = set()
    for line in (DATA / "tablebench" / "TableBench_DP_subset.jsonl").read_text().splitlines():
        record = json.loads(line)
        table = record["table"] if isinstance(record["table"], dict) else json.loads(record["table"])
        key = json.dumps(table, sort_keys=True)
        if part_of(record["id"]) != part or key in seen:
            continue
        seen.add(key)
        with open(Path(os.environ.get("TMPDIR", "/tmp")) / "layout_holdout_table.json", "w") as f:
            json.dump(table, f)
        tables[record["id"]] = [describe(t) for t in jsonfile.read(f.name)]
    return {"part": part, "sheets": sheets, "tablebench": tables}


def compare(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """What changed, per sheet or table, and the totals."""
    totals = {"sheets": len(new["sheets"]), "tablebench_tables": len(new["tablebench"]), "sheets_split": 0,
              "captions_changed": 0, "row_levels_changed": 0, "roles_changed": 0,
              "noisy_floats": [0, 0], "tables": [0, 0]}
    changes: list[str] = []
    for kind in ("sheets", "tablebench"):
        for name, after in new[kind].items():
            before = old[kind].get(name)
            if isinstance(after, dict) or isinstance(before, dict) or before is None:
                if after != before:
                    changes.append(f"{name}: {before if isinstance(before, dict) else 'read'} -> "
                                   f"{after if isinstance(after, dict) else 'read'}")
                continue
            totals["tables"][0] += len(before)
            totals["tables"][1] += len(after)
            totals["noisy_floats"][0] += sum(t["noisy"] for t in before)
            totals["noisy_floats"][1] += sum(t["noisy"] for t in after)
            if [t["range"] for t in before] != [t["range"] for t in after]:
                totals["sheets_split"] += 1
                changes.append(f"{name}: tables {[t['range'] for t in before]} -> {[t['range'] for t in after]}")
                continue
            for b, a in zip(before, after):
                if b["caption"] != a["caption"]:
                    totals["captions_changed"] += 1
                    changes.append(f"{a['name']}: caption {b['caption']!r} -> {a['caption']!r}")
                if (b["row_levels"], b["row_nodes"]) != (a["row_levels"], a["row_nodes"]):
                    totals["row_levels_changed"] += 1
                    changes.append(f"{a['name']}: row levels {b['row_levels']} ({b['row_nodes']} nodes) -> "
                                   f"{a['row_levels']} ({a['row_nodes']} nodes)")
                for column, role in a["roles"].items():
                    if b["roles"].get(column, role) != role:
                        totals["roles_changed"] += 1
                        changes.append(f"{a['name']}: {column!r} {b['roles'][column]} -> {role}")
    return {"totals": totals, "changes": changes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("even", "odd"), default="even")
    parser.add_argument("--dump", metavar="FILE")
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    args = parser.parse_args()
    if args.compare:
        old, new = (json.loads(Path(p).read_text()) for p in args.compare)
        result = compare(old, new)
        print(f"part {new['part']}: " + json.dumps(result["totals"]))
        print("\n".join(result["changes"]))
        return
    sys.path.insert(0, os.getcwd())
    Path(args.dump or "/dev/stdout").write_text(json.dumps(dump(args.part), indent=1, default=str))


if __name__ == "__main__":
    main()

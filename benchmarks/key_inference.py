"""`curate keys` against declared keys: precision and recall of inferred keys on real databases.

Reads the Spider databases (and MMQA's samples, whose keys MMQA names) in ../shared/data, runs key
inference as if nothing were declared, and sums agreement over databases (micro precision and
recall), apart for two parts: `held_out` (the sha256 of "i45-holdout:" + the database name is even)
and `tuning` (odd), fixed before the rules of issue 45 were tuned, so a rule tuned on one part is
judged on the other. Each part is scored twice: over every declared key, and over the declared keys
whose tables hold rows (a key between empty tables leaves no value to infer it from).

    python benchmarks/key_inference.py [--data PATH] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def part_of(name: str) -> str:
    """`held_out` when the salted sha256 of the name is even, else `tuning` (fixed before any tuning)."""
    return "held_out" if int(hashlib.sha256(f"i45-holdout:{name}".encode()).hexdigest(), 16) % 2 == 0 else "tuning"


KINDS = ("primary_keys", "foreign_keys", "foreign_keys_with_rows")


def _add(total: dict, score: dict | None) -> None:
    if score:
        for k in ("declared", "inferred", "agree"):
            total[k] += score[k]


def summarize(reports: list[dict]) -> dict:
    """Micro precision and recall of primary and foreign keys per part, and the misses by database."""
    parts: dict[str, dict] = {}
    for r in reports:
        if "foreign_keys" not in r:
            continue  # nothing declared: nothing to score against
        part = parts.setdefault(part_of(r["database"]), {
            "databases": [], **{kind: {"declared": 0, "inferred": 0, "agree": 0} for kind in KINDS}})
        part["databases"].append(r["database"])
        for kind in KINDS:
            _add(part[kind], r.get(kind, r["foreign_keys"]))
    for part in parts.values():
        for kind in KINDS:
            s = part[kind]
            s["precision"] = round(s["agree"] / s["inferred"], 3) if s["inferred"] else None
            s["recall"] = round(s["agree"] / s["declared"], 3) if s["declared"] else None
    return parts


def main() -> None:
    from curate.generators.sql.schema import run_keys
    from tests.test_cli import invoke

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    sources = [p for p in (Path(options.data) / "spider", Path(options.data) / "mmqa" / "mmqa_samples.json")
               if p.exists()]
    if not sources:
        raise SystemExit(f"no Spider or MMQA data under {options.data}")
    with tempfile.TemporaryDirectory() as tmp:
        ws = str(Path(tmp) / "ws")
        out = invoke("ingest", *map(str, sources), "-w", ws, "-q")
        if out.exit_code != 0:
            raise SystemExit(out.output)
        reports = run_keys(ws)["databases"]
    parts = summarize(reports)
    if options.json:
        print(json.dumps(parts, indent=2))
        return
    for name in ("tuning", "held_out"):
        part = parts.get(name)
        if not part:
            print(f"{name:9} no databases")
            continue
        pk, fk, rows = part["primary_keys"], part["foreign_keys"], part["foreign_keys_with_rows"]
        print(f"{name:9} {len(part['databases'])} databases: foreign keys precision {fk['precision']} recall "
              f"{fk['recall']} ({fk['agree']} of {fk['inferred']} inferred, {fk['declared']} declared); over tables "
              f"with rows recall {rows['recall']} ({rows['agree']} of {rows['declared']} declared); primary keys "
              f"precision {pk['precision']} recall {pk['recall']}")
    for r in reports:
        if "foreign_keys" in r:
            print(f"  {part_of(r['database']):9} {r['database']}: FK {r['foreign_keys']['agree']}/"
                  f"{r['foreign_keys']['inferred']} inferred, {r['foreign_keys']['declared']} declared")


if __name__ == "__main__":
    main()

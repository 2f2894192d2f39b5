"""`curate import`, `diff`, `release verify`: releases made from published benchmarks, compared and checked."""

from __future__ import annotations

import sys
from typing import Any

import click

from curate.curation.cli.base import RegistryChoice, _console, _emit, _executor, executor_options, json_option, main
from curate.curation.cli.stages import _render_verify


@main.command(name="import")
@click.argument("fmt", metavar="FORMAT", type=RegistryChoice("curate.importers:IMPORTERS"))
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--name", default=None, help="The release's name (default: FORMAT-import).")
@click.option("--version", "version", default=None, help="MAJOR.MINOR.PATCH (default: 1.0.0, or the next after the latest).")
@click.option("--releases", default="releases", show_default=True, envvar="CURATE_RELEASES",
              help="Folder that holds the releases (<name>/<version>/).")
@click.option("--map", "field_map", default=None, help="jsonl: which field is which, e.g. "
              "question=q,answer=a,table=t[,id=uid] (a table as {columns, data}, row objects, or rows under a header).")
@click.option("--strict", is_flag=True, help="All or nothing: refuse the whole import at the first record that "
              "cannot be read (default: leave such records out and list them with their reasons).")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False),
              help="Also write the import's summary as JSON: per field, how many records were read in each form, "
                   "and every record left out with its file, place, field and reason.")
@json_option
def import_(fmt: str, paths: tuple[str, ...], name: str | None, version: str | None, releases: str,
            field_map: str | None, strict: bool, report_path: str | None, as_json: bool) -> None:
    """Import a published benchmark as a release (same layout, manifest, fingerprint and card as
    `curate build` writes): every sample keeps its benchmark id (provenance.source_id), the manifest
    and card the source files' sha256 and licence. A record that cannot be read is left out and
    listed (--strict: refused). `curate evaluate` then scores it with the benchmark's official
    metrics beside curate's."""
    import json
    from pathlib import Path

    from curate.curation.registry import resolve

    try:
        result = resolve("curate.importers:write_import")(fmt, list(paths), name, version, releases, None, field_map,
                                                           strict)
    except (ValueError, RuntimeError) as e:  # BadInput names the file, the line and the field
        raise click.ClickException(str(e)) from None
    if report_path:
        Path(report_path).write_text(json.dumps({**result["import"], "skipped": result["skipped"]}, indent=2,
                                                ensure_ascii=False) + "\n")
    _emit(result, as_json, _render_import)


def _render_import(r: dict[str, Any]) -> None:
    """The release written, how each field was read, and what was left out, counted by reason."""
    click.echo(f"{r['name']} {r['version']} {r['status'].replace('_', ' ')}: {r['path']} "
               f"({r['counts']['samples']:,} samples, {r['counts']['tables']:,} tables; fingerprint {r['fingerprint']})")
    summary = r.get("import", {})
    for field_name, forms in summary.get("forms", {}).items():
        click.echo(f"  {field_name}: " + ", ".join(f"{n:,} {form}" for form, n in forms.items()))
    for kind, n in summary.get("flags", {}).items():
        click.echo(f"  flagged for `curate audit`: {n:,} {kind.replace('_', ' ')}")
    left = summary.get("left_out", [])
    if left:
        click.echo(f"  left out: {sum(e['count'] for e in left):,} records")
        for e in left:
            example = next((s for s in r.get("skipped", []) if s.get("kind", "other") == e["kind"]), {})
            click.echo(f"    {e['count']:,} {e['kind'].replace('_', ' ')}, field {e['field']!r}"
                       + (f" (e.g. {example.get('where', '')}: {example.get('reason', '')[:120]})" if example else ""))


@main.command()
@click.argument("a", type=click.Path(exists=True, file_okay=False))
@click.argument("b", type=click.Path(exists=True, file_okay=False))
@json_option
def diff(a: str, b: str, as_json: bool) -> None:
    """Compare two release folders: build settings and stages that differ, counts per task, and
    the samples added, removed and changed (same id, other content)."""
    from curate.curation.registry import resolve

    _emit(resolve("curate.exports.release:compare_releases")(a, b), as_json, _render_diff)


@main.group()
def release() -> None:
    """Inspect and check releases."""


@release.command("verify")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@executor_options
@json_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def release_verify(path: str, workers: int | None, as_json: bool, quiet: bool) -> None:
    """Check a release: every file against SHA256SUMS, nothing added (no unlisted file or folder, no
    symbolic link at all, nothing outside the release), the content fingerprint against the manifest;
    then re-execute every stored program. Exit code 1 on any finding, each named with its path and why."""
    from curate.curation.registry import resolve

    files = resolve("curate.exports.release:check_files")(path)
    try:  # the programs are read from the listed files only: a listed link stops them, named
        programs = resolve("curate.validators.execution:run_verify")(path, executor=_executor(workers),
                                                              show_progress=not (quiet or as_json))
    except resolve("curate.exports.release:ReleaseIntegrityError") as e:
        programs = {"ok": False, "skipped": f"programs not re-executed: {e}"}
    report = {"path": path, "files": files, "programs": programs, "ok": files["ok"] and programs["ok"]}
    _emit(report, as_json, _render_release_verify)
    if not report["ok"]:
        sys.exit(1)


def _render_diff(result: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    console = _console()
    a, b = result["a"], result["b"]
    console.print(f"A: {a['name']} {a['version']} ({a['fingerprint']})  B: {b['name']} {b['version']} "
                  f"({b['fingerprint']})" + ("  same content" if result["same_content"] else ""), highlight=False)
    for c in result["config"]:
        console.print(f"setting {c['key']}: {c['a']!r} -> {c['b']!r}", highlight=False)
    if result["stages_rerun"]:
        console.print("stages that differ: " + ", ".join(s["stage"] for s in result["stages_rerun"]), highlight=False)
    s = result["samples"]
    view = RichTable(title=f"samples: {s['old']:,} -> {s['new']:,} (+{s['added']:,} -{s['removed']:,} "
                           f"~{s['changed']:,})")
    for col in ("task", "A", "B", "added", "removed", "changed"):
        view.add_column(col, justify="left" if col == "task" else "right")
    for t in result["tasks"]:
        d = s["by_task"].get(t["task"], {})
        view.add_row(t["task"], f"{t['a']:,}", f"{t['b']:,}", f"{d.get('added', 0):,}", f"{d.get('removed', 0):,}",
                     f"{d.get('changed', 0):,}")
    console.print(view)
    for kind in ("added", "removed", "changed"):
        for e in s["examples"][kind][:3]:
            extra = f": {e['old_answer']!r} -> {e['new_answer']!r}" if kind == "changed" else ""
            console.print(f"{kind} {e['id']} {e['task']}: {e['question'][:90]!r}{extra}", highlight=False)
    if s.get("answer_changed"):
        console.print(f"gold answers changed: {s['answer_changed']:,} of the {s['changed']:,} changed samples",
                      highlight=False)
        for e in s.get("answers_changed", [])[:50]:
            console.print(f"  {e['id']} {e['task']}: {e['question'][:80]!r}: {e['old_answer']!r} -> "
                          f"{e['new_answer']!r}", highlight=False)


def _render_release_verify(report: dict[str, Any]) -> None:
    console = _console()
    files = report["files"]
    for problem in files["problems"][:50]:
        console.print(f"[red]{problem['kind']}[/] {problem['path']}: {problem['why']}", highlight=False)
    if len(files["problems"]) > 50:
        console.print(f"[red]... and {len(files['problems']) - 50} more[/] (--json lists them all)", highlight=False)
    for problem in files.get("inconsistent", []):
        console.print(f"[red]inconsistent[/] {problem}", highlight=False)
    fp = files["fingerprint"]
    if fp["manifest"] != fp["computed"]:
        console.print(f"[red]fingerprint[/] manifest {fp['manifest']}, content {fp['computed']}", highlight=False)
    console.print(f"files: {files['files']} checked, " + ("OK" if files["ok"] else "FAILED"), highlight=False)
    if "skipped" in report["programs"]:
        console.print(f"[red]{report['programs']['skipped']}[/]", highlight=False)
    else:
        _render_verify(report["programs"])
    console.print("release OK" if report["ok"] else "release FAILED", highlight=False)

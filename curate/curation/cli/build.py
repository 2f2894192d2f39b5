"""`curate build`: the declared pipeline from sources to a release."""

from __future__ import annotations

import sys
from typing import Any

import click

from curate.curation.cli.base import (_console, _emit, _executor, executor_options, json_option, main, _workspace,
                              workspace_option)


class StepsOption(click.Option):
    """`--until`: its help lists the steps, read from the stages' marks when the help is shown (not when
    the CLI is imported: `curate --help` reads no stage source)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from curate.curation.build import CORRECTED_STEPS
        from curate.curation.pipeline.graph import STEPS

        name, text = super().get_help_record(ctx) or ("", "")
        return name, f"{text} ({', '.join(STEPS)}; of a corrected build: {', '.join(CORRECTED_STEPS)})."


@main.command()
@click.argument("config", required=False, type=click.Path(exists=True))
@workspace_option
@click.option("--releases", default="releases", show_default=True, envvar="CURATE_RELEASES",
              help="Folder that holds the releases (<name>/<version>/).")
@click.option("--until", default=None, cls=StepsOption, help="Stop after this step")
@click.option("--replies", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A batch output (OpenAI Batch API, `vllm run-batch`) of the requests a role with `batch = true` "
                   "wrote to <workspace>/batches/; kept in the workspace, the build goes on with them "
                   "(repeatable; docs/batch.md).")
@executor_options
@json_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def build(config: str | None, workspace: str, releases: str, until: str | None, replies: tuple[str, ...],
          workers: int | None, as_json: bool, quiet: bool) -> None:
    """Build a benchmark release from CONFIG (TOML; see examples/build.toml), from a folder of your own
    tables, or the default release from the built-in corpus: ingest, clean, rule-based QA and chains,
    SQL synthesis, selection, execution checks, data contracts, release.

    CONFIG may be a folder of CSVs, spreadsheets and databases (or one such file): `curate build
    mydata/` runs the default pipeline over them, no config needed, and names the release after the
    folder.

    A rerun reuses every finished stage and part; a failed data contract blocks the release.

    CONFIG may also be a release folder (or a config with `[build] release = PATH`): the corrected
    release of an imported benchmark, with the decisions `curate review pull` brought back applied
    (audit findings confirmed or corrected, ambiguous questions removed), written beside it as the
    next version, the errata in its card.
    """
    from pathlib import Path

    from curate.curation.cli.named import name_step
    from curate.curation.sources import extensions
    from curate.curation.build import (BuildError, ContractsFailed, folder_config, load_build_config, release_config,
                                       run_build)

    console = None if as_json else _console()

    def on_step(step: dict[str, Any]) -> None:
        if console is not None:
            state = "[dim]cached[/]" if step["cached"] else f"{step['seconds']:.1f}s"
            console.print(f"[bold]{step['stage']:<10}[/] {state:>8}  {step['summary']}", highlight=False)
            name_step(console, step)

    try:
        if config and Path(config).is_dir():  # a release to correct, or a folder of one's own tables
            is_release = (Path(config) / "manifest.json").exists()
            settings = release_config(config) if is_release else folder_config(config)
        elif config and Path(config).suffix.lower() in extensions():  # one table file (a .csv, an .xlsx, ...)
            settings = folder_config(config)
        else:
            settings = load_build_config(config)
        if replies:
            _bring_back(replies, workspace, console)
        result = run_build(_workspace(workspace), settings, releases, executor=_executor(workers),
                           show_progress=not (quiet or as_json), until=until, on_step=on_step)
    except ContractsFailed as e:
        _emit({"ok": False, "error": str(e), "contracts": e.report, "steps": e.steps}, as_json,
              lambda r: _render_contracts(r["contracts"]))
        sys.exit(1)
    except (BuildError, ValueError) as e:
        raise click.ClickException(str(e) + _batches_waiting(workspace)) from None
    _emit(result, as_json, _render_build)


def _bring_back(replies: tuple[str, ...], workspace: str, console: Any) -> None:
    from pathlib import Path

    from curate.curation.llm.batch import bring_back
    from curate.curation.llm.cache import CACHE_FILE

    root = _workspace(workspace).root
    counts = bring_back(list(replies), root / CACHE_FILE, root / "batches")
    if console is not None:
        console.print(f"batch replies: {counts['kept']:,} of {counts['replies']:,} kept "
                      f"({counts['replies'] - counts['kept']:,} failed: asked again); "
                      f"{counts['pending']:,} requests still wait in {Path(root) / 'batches'}", highlight=False)


def _batches_waiting(workspace: str) -> str:
    """The batch files whose requests wait for replies, for the message of a build that stopped."""
    from curate.curation.llm.batch import pending_files

    waiting = pending_files(_workspace(workspace).root / "batches")
    if not waiting:
        return ""
    return ("\nbatch files waiting for replies: " + ", ".join(f"{f} ({n:,} requests)" for f, n in waiting.items())
            + "\nrun each as a batch and rerun with --replies OUTPUT (one per file)")


def _render_build(result: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    console = _console()
    release = result.get("release")
    if not release:
        console.print(f"stopped after {result['steps'][-1]['stage']} (workspace {result['workspace']})", highlight=False)
        return
    counts = release["counts"]
    view = RichTable(title=f"{release['name']} {release['version']}: {counts['samples']:,} samples, "
                           f"{counts['tables']:,} tables")
    for col in ("task", *sorted(counts["by_split"])):
        view.add_column(col, justify="left" if col == "task" else "right")
    for task, by_split in sorted(counts["by_task_split"].items()):
        view.add_row(task, *(f"{by_split.get(split, 0):,}" for split in sorted(counts["by_split"])))
    console.print(view)
    if counts.get("source_tables"):  # every table accounted for, by why it gave no question
        from curate.curation.registry import resolve

        console.print(resolve("curate.exports.release.accounting:accounting_line")(counts["source_tables"]),
                      highlight=False, markup=False, soft_wrap=True)
    if release["status"] == "written":
        d = release.get("diff", {})
        against = f" against {release['parent']}: +{d.get('added', 0):,} -{d.get('removed', 0):,} " \
                  f"~{d.get('changed', 0):,} samples" if release.get("parent") else ""
        console.print(f"release written to {release['path']}{against}", highlight=False)
    elif release["status"] == "up_to_date":
        console.print(f"nothing changed: {release['path']} is this build's release", highlight=False)
    else:
        console.print(release.get("note", ""), highlight=False)
    console.print(f"fingerprint {release['fingerprint']}; stages rerun: {', '.join(result['reran']) or 'none'}; "
                  f"{result['seconds']:.1f}s", highlight=False)


def _render_contracts(report: dict[str, Any]) -> None:
    console = _console()
    for e in report.get("expectations", []):
        args = ", ".join(f"{k}={v}" for k, v in e["kwargs"].items())
        mark = "[green]ok[/]    " if e["success"] else "[red]FAILED[/]"
        console.print(f"{mark} {e['suite']}: {e['expectation']}({args})"
                      + ("" if e["success"] else f": {e['unexpected']:,} unexpected"), highlight=False)
        for example in e.get("examples", [])[:5]:
            console.print(f"         {example}", highlight=False, markup=False)
        if e.get("error"):
            console.print(f"         error: {e['error']}", highlight=False, markup=False)
    console.print("[red]the data contracts failed: no release was written[/]")

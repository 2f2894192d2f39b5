"""`curate review push|pull|status|serve`: human review through Label Studio."""

from __future__ import annotations

from typing import Any

import click

from curate.curation.cli.base import _emit, json_option, main, workspace_option


@main.group()
def review() -> None:
    """Human review in Label Studio, in four steps:

    \b
    1. push      `curate review push` sends the review queue (samples a vote, a
                 classifier or `curate audit --queue` left undecided, and an audit
                 share) to a Label Studio project, creating it the first time.
    2. annotate  people open the project and decide each sample: accept, fix the
                 gold answer, or reject (--kind question: RealHiTBench's criteria;
                 --kind audit: confirm, correct, keep or ambiguous).
    3. pull      `curate review pull` brings the decisions back into the workspace
                 (`curate review status` says what is still open).
    4. build     `curate build` applies them: fixes replace golds, rejects leave
                 the next release (`[review] required = true` holds back the rest).

    push and pull need the Label Studio client: pip install 'curate[review]'.
    `curate review serve` starts a local Label Studio; its token goes in
    LABEL_STUDIO_API_KEY.
    """


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


def _client_installed() -> None:
    """push and pull talk to Label Studio through its client, an optional dependency: say how to get it
    (exit 2, a usage error) rather than fail on the import."""
    import importlib.util

    if importlib.util.find_spec("label_studio_sdk") is None:
        error = click.ClickException("this needs the Label Studio client (label-studio-sdk), not installed here: "
                                     "pip install 'curate[review]'")
        error.exit_code = 2
        raise error


def _review_call(name: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    from curate.curation.registry import resolve

    if name in ("push", "pull"):
        _client_installed()
    try:
        return resolve(f"curate.annotation.review:{name}")(*args, **kwargs)
    except resolve("curate.annotation.review:ReviewError") as e:
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
    from curate.curation.workspace import Workspace

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
    from curate.curation.workspace import Workspace

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
    from curate.curation.workspace import Workspace

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

    from curate.curation.registry import resolve

    server = resolve("curate.annotation.server:LocalLabelStudio")(Path(data_dir), Path(env_dir), port)
    click.echo(f"starting Label Studio (first time: installing it into {env_dir}, then migrating; minutes)...")
    try:
        server.start()
    except resolve("curate.annotation.server:ServerError") as e:
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

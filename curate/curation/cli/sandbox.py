"""`curate sandbox run|check`: programs run the way the evaluator runs model-written code."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from curate.curation.cli.base import _emit, json_option, main


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
    from curate.curation.registry import resolve

    run_file = resolve("curate.evaluation.sandbox:run_file")
    if isolation == "none":
        click.echo(f"warning: {resolve('curate.evaluation.evaluate:NO_ISOLATION')}", err=True)
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
    from curate.curation.registry import resolve

    found = resolve("curate.evaluation.isolation:support")().as_dict()

    def show(s: dict[str, Any]) -> None:
        if s["isolation"]:
            click.echo(f"isolation: bubblewrap ({s['bwrap']}): namespaces (mount, pid, network, ipc, uts, user)")
        else:
            click.echo(f"isolation: none: {s['problem']}\nto fix: {resolve('curate.evaluation.isolation:INSTALL')}")
        inside = s.get("inside") or {}
        if inside:
            click.echo(f"  runs on the host as uid {', '.join(map(str, inside['host_uids']))}; seccomp filter: "
                       f"{'on' if inside['seccomp'] else 'off'}; /proc/sys: {inside['proc_sys']}")
        for what, how in s["bounds"].items():
            click.echo(f"  {what.replace('_', ' ')}: {how}")

    _emit(found, as_json, show)
    if not found["isolation"]:
        sys.exit(1)

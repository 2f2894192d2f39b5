"""`curate evaluate` and `curate report`: a model scored on a release, and models compared."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from curate.curation.cli.base import _console, _emit, json_option, main


def _backend_settings(backend: str, offered: dict[str, Any], settings_json: str = "{}", model_args: tuple[str, ...] = (),
                      explicit: dict[str, Any] | None = None) -> dict[str, Any]:
    """A backend's settings from the command line: of the generic options, those its constructor names;
    then --engine's JSON, then each --model-arg, then options given explicitly (which it must take)."""
    from curate.curation.llm import BACKENDS
    from curate.curation.llm.backend import parse_model_args, settings_taken

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
              "this process; replay, the replies in --predictions), or gold: every sample answered with its own gold "
              "(a self-test: expect 1.000).")
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
@click.option("--export-requests", type=click.Path(dir_okay=False), default=None,
              help="Ask nothing: write every request still without a reply to FILE as a batch (OpenAI Batch API "
              "input, which `vllm run-batch` reads) and stop; score the batch output with --backend replay "
              "--predictions OUTPUT and the same options (docs/batch.md).")
@click.option("--modes", default="tcot", show_default=True, help="Comma-separated: tcot, pot, icot, treethinker.")
@click.option("--configs", default="", help="Comma-separated serialization:perturbation (default: the release's).")
@click.option("--limit", type=int, default=None, help="At most N samples, drawn per task (tasks take turns, each in "
              "content-hash order: the same N draws the same samples).")
@click.option("--split", default=None, help="Only this split.")
@click.option("--tasks", default="", help="Comma-separated task prefixes (e.g. TCO/,MMQA/).")
@click.option("--out", "out_dir", default=None, help="Results folder (default: results/<release>/<version>/<model>/"
              "run-<id>, the id a hash of the settings: the same settings resume their run, others get their own).")
@click.option("--allow-partial", is_flag=True, help="Exit 0 when fewer predictions were scored than selected "
              "(missing replies, failed requests); the report says the run is partial either way.")
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--max-tokens", type=int, default=1024, show_default=True)
@click.option("--concurrency", type=int, default=16, show_default=True, help="Requests in flight (openai).")
@click.option("--request-timeout", type=float, default=120.0, show_default=True,
              help="Seconds one try of a request may take, all of it: connect, headers and body (openai). One "
                   "past it is recorded failed (not scored) and asked again by the next run.")
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
             predictions: str | None, export_requests: str | None, modes: str, configs: str, limit: int | None, split: str | None, tasks: str,
             out_dir: str | None, temperature: float, max_tokens: int, concurrency: int, request_timeout: float,
             retries: int, max_failures_in_a_row: int, engine_json: str, data_parallel_size: int | None,
             judge_model: str | None, judge_backend: str | None, judge_base_url: str | None, judge_json: str,
             max_turns: int, sandbox_workers: int, isolation: str, timeout: float, prompt_kind: str,
             profile: str | None, as_json: bool, quiet: bool, allow_partial: bool) -> None:
    """Score a model on a release: every sample x mode x table configuration, predicted, extracted,
    scored by its task's metric; results.parquet, report.md and report.html in the results folder.

    An interrupted run resumes: finished predictions are stored as they arrive.
    """
    from pathlib import Path

    from curate.curation.registry import resolve

    ReleaseError = resolve("curate.evaluation.dataset:ReleaseError")
    Evaluator, Settings = resolve("curate.evaluation.evaluate:Evaluator"), resolve("curate.evaluation.evaluate:Settings")

    from curate.curation.llm import BACKENDS
    from curate.curation.llm.backends import offered

    for option, chosen_backend in (("--backend", backend), ("--judge-backend", judge_backend)):
        gold = option == "--backend" and chosen_backend == "gold"
        if chosen_backend and chosen_backend not in offered() and not gold:
            raise click.UsageError(f"{option} {chosen_backend!r}: choose one of {', '.join(offered())}"
                                   + (", gold" if option == "--backend" else ""))
    split_list = lambda text: [x.strip() for x in text.split(",") if x.strip()]  # noqa: E731
    known_modes = resolve("curate.evaluation.modes:MODES")
    if [m for m in split_list(modes) if m not in known_modes] or not split_list(modes):
        raise click.BadParameter(f"{modes!r}: choose among {', '.join(known_modes)} (comma-separated)",
                                 param_hint="--modes")
    settings = Settings(modes=split_list(modes), configs=split_list(configs), limit=limit, split=split,
                        tasks=split_list(tasks), max_turns=max_turns, sandbox_workers=sandbox_workers,
                        sandbox=isolation, timeout=timeout, max_failures_in_a_row=max_failures_in_a_row,
                        profile=profile, prompt=prompt_kind, allow_partial=allow_partial)
    # issue 46: what matched nothing, or an option the backend would ignore, is a usage error (exit 2)
    if backend == "gold" and predictions:
        raise click.UsageError("--backend gold answers every sample with its own gold: --predictions would be "
                               "ignored (replay a file with --backend replay)")
    import importlib

    runs = importlib.import_module("curate.evaluation.runs")  # run ids and folders (evaluation/runs.py)

    def selection() -> tuple[Any, list[Any]]:
        """The release and its selected samples, before any model is loaded or file written."""
        try:
            data = resolve("curate.evaluation.dataset:ReleaseData")(release_path)
            return data, resolve("curate.evaluation.selection:select")(data, split, split_list(tasks), limit)
        except resolve("curate.evaluation.selection:EmptySelection") as e:
            raise click.UsageError(str(e)) from None
        except ReleaseError as e:
            raise click.ClickException(str(e)) from None

    def folder(model_name: str, model_key: str) -> Path:
        """--out, else this run's own folder (results/<release>/<version>/<model>/run-<id>)."""
        return Path(out_dir) if out_dir else runs.default_folder(data, model_name, runs.run_id(data, model_key, settings))

    if isolation == "none":
        click.echo(f"warning: {resolve('curate.evaluation.evaluate:NO_ISOLATION')}", err=True)
    client, params = None, {}
    if backend == "gold":  # the gold replies are written as a replay file, then scored like any other
        data, chosen = selection()
        run_id = runs.run_id(data, "gold", settings)
        out = gold_out = folder("gold", "gold")
        try:
            runs.check_folder(out, run_id, data.name)
        except ReleaseError as e:
            raise click.UsageError(str(e)) from None
        predictions = str(resolve("curate.evaluation.gold:write_gold_replies")(settings.modes, gold_out / "gold-replies.jsonl",
                                                                        chosen))
    else:
        from curate.curation.llm.backend import required_settings
        from curate.curation.llm.client import client_from_config

        section: dict[str, Any] = {"backend": backend, "temperature": temperature, "max_tokens": max_tokens}
        section.update({"model": model} if model else {})
        offered = {"base_url": base_url, "api_key_env": api_key_env, "concurrency": concurrency,
                   "timeout": request_timeout, "retries": retries, "predictions": predictions}
        section.update(_backend_settings(backend, offered, engine_json, model_args,
                                         {"data_parallel_size": data_parallel_size} if data_parallel_size else {}))
        missing = [k for k in required_settings(BACKENDS.get(backend)) if section.get(k) is None]
        if missing:
            raise click.UsageError(f"--backend {backend} needs "
                                   + ", ".join(f"--{k.replace('_', '-')}" for k in missing))
        data, _ = selection()
        try:
            client, params = client_from_config(section, None, "model")
        except ValueError as e:
            raise click.UsageError(str(e)) from None
        key = runs.model_key(client, params, prompt_kind)
        run_id = runs.run_id(data, key, settings)
        if BACKENDS.meta(backend).get("recorded"):  # replies made elsewhere (a file): nothing to cache
            out = folder(f"{backend}-{Path(client.identity['model']).stem}", key)
        else:
            from curate.curation.llm.cache import ResponseCache

            out = folder(str(model).rstrip("/").split("/")[-1], key)
            try:
                runs.check_folder(out, run_id, data.name)
            except ReleaseError as e:
                raise click.UsageError(str(e)) from None
            out.mkdir(parents=True, exist_ok=True)
            # a default run folder shares its model's cache and prediction store with the model's other runs
            client.cache = ResponseCache((out if out_dir else out.parent) / "llm-cache.sqlite")
    exporting = _export_requests(client, export_requests) if export_requests and client is not None else None
    judge = None
    if judge_model:
        from curate.curation.llm.client import client_from_config

        try:
            extra = json.loads(judge_json)
        except json.JSONDecodeError as e:
            raise click.UsageError(f"--judge-settings: not JSON ({e})") from None
        recorded = backend == "gold" or BACKENDS.meta(backend).get("recorded")
        chosen = judge_backend or ("openai" if recorded else backend)  # a file of replies cannot judge
        judge_section: dict[str, Any] = {"backend": chosen, "model": judge_model, "temperature": 0.0,
                                         "max_tokens": 256}
        judge_section.update(_backend_settings(chosen, {"base_url": judge_base_url or base_url,
                                                        "api_key_env": api_key_env, "concurrency": concurrency}))
        judge_section.update(extra)
        out.mkdir(parents=True, exist_ok=True)
        try:
            cache_at = (out if out_dir else out.parent) / "llm-cache.sqlite"
            judge_client, judge_params = client_from_config(judge_section, cache_at, "judge")
        except ValueError as e:
            raise click.UsageError(f"judge: {e}") from None
        judge = resolve("curate.evaluation.judge:AnswerJudge")(judge_client, judge_params)
    from curate.curation.progress import progress_bars

    try:
        with progress_bars(False if (quiet or as_json) else None) as factory:
            progress = None
            if factory is not None:
                advance, seen = factory("evaluate", 1.0), [0.0]

                def progress(done: int, total: int) -> None:
                    fraction = done / total if total else 1.0
                    advance(fraction - seen[0])
                    seen[0] = fraction

            result = Evaluator(release_path, out, settings, client, params, predictions if backend == "gold" else None,
                               progress, judge, run_id, None if out_dir else out.parent / "predictions.sqlite").run()
    except (resolve("curate.evaluation.selection:EmptySelection"), resolve("curate.evaluation.runs:RunConflict")) as e:
        raise click.UsageError(str(e)) from None
    except (ReleaseError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    except RuntimeError as e:  # a dead server (ModelUnavailable), a missing vLLM
        raise click.ClickException(f"{e}") from None
    result["out"] = str(out)
    if exporting is not None:
        _report_export(result, exporting, release_path, as_json)
        return
    coverage = result["coverage"]
    if not coverage["complete"]:  # said first, before any score
        click.echo(resolve("curate.evaluation.report:coverage_line")(coverage), err=True)
    _emit(result, as_json, _render_evaluate)
    failed = result.get("failures") or {}
    if failed.get("count"):  # a failure is never a score: the run says so
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(failed["by_kind"].items()))
        click.echo(f"{failed['count']} requests got no usable reply ({kinds}), e.g. {failed['example']}; they are not "
                   "scored: rerun to ask them again", err=True)
    if not coverage["complete"] and not allow_partial:
        sys.exit(1)


def _export_requests(client: Any, path: str) -> Any:
    """The client turned into one that writes its requests to `path` (a BatchBackend)."""
    from curate.curation.llm.backend import RecordedBackend
    from curate.curation.llm.batch import export_requests

    if client is None or isinstance(client.backend, RecordedBackend):
        raise click.UsageError("--export-requests writes a model's requests: name the model (--model, with --backend "
                               "openai or vllm), or replay a batch output (--predictions) to write what it lacks")
    return export_requests(client, path)


def _report_export(result: dict[str, Any], backend: Any, release_path: str, as_json: bool) -> None:
    """What was written, and the command that scores its output."""
    written = {"requests": backend.written, "file": str(backend.requests), "model": backend.model,
               "scored": result.get("results", 0)}
    if as_json:
        _emit({**result, "exported": written}, True, None)
        return
    if not backend.written:
        click.echo(f"no request left to export: every one has a reply ({written['scored']:,} results in {result['out']})")
        return
    click.echo(f"{backend.written:,} requests written to {backend.requests} (model {backend.model}). Run them as a "
               f"batch (OpenAI Batch API; or `vllm run-batch -i {backend.requests} -o OUTPUT --model {backend.model}`), "
               f"then score the output with `curate evaluate {release_path} --backend replay --predictions OUTPUT` "
               "and the same --modes, --configs, --temperature and --max-tokens (a multi-turn mode: add "
               "--export-requests NEXT for the next turn)")


@main.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out_dir", default="report", show_default=True, help="Folder for report.md and report.html.")
@click.option("--allow-mismatch", is_flag=True, help="Compare runs of different releases anyway (on the samples "
              "they share, with a warning); refused otherwise.")
@json_option
def report(results: tuple[str, ...], out_dir: str, as_json: bool, allow_mismatch: bool) -> None:
    """Compare models: several results folders of `curate evaluate` in one report (rankings with
    bootstrap intervals, separability, Kendall's W across table configurations), on the predictions
    every run scored; runs of different releases are refused unless --allow-mismatch."""
    from pathlib import Path

    from curate.curation.registry import resolve

    write_report = resolve("curate.evaluation.report:write_report")

    try:
        summary = write_report([Path(r) for r in results], Path(out_dir), allow_mismatch)
    except (FileNotFoundError, resolve("curate.evaluation.report:Incomparable")) as e:
        raise click.ClickException(str(e)) from None
    comparison = summary.get("comparison") or {}
    for warning in comparison.get("warnings", []):  # said loudly, before the report
        click.echo(f"WARNING: {warning}", err=True)
    if comparison:
        click.echo(comparison["note"], err=True)
    _emit({"out": out_dir, **summary}, as_json, lambda s: click.echo((Path(out_dir) / "report.md").read_text()))


def _render_evaluate(result: dict[str, Any]) -> None:
    from pathlib import Path

    summary = json.loads((Path(result["out"]) / "summary.json").read_text())
    console = _console()
    console.print(f"[bold]{result['model']}[/] on {result['release']}: {result['samples']:,} samples, modes "
                  f"{', '.join(result['modes'])}, configurations {', '.join(result['configs'])}; "
                  f"{result['predicted_now']:,} predictions made now, in {result['seconds']:.1f}s", highlight=False)
    for model, s in summary["models"].items():
        modes = s.get("cells", {}).get("by_mode", {})
        console.print(f"score {s['score']:.3f} (n={s['n']:,}; 95% {s['interval'][0]:.3f}-{s['interval'][1]:.3f}); "
                      "by mode: " + ", ".join(f"{k} {v:.3f}" + (f" (n={modes[k]['n']:,})" if k in modes else "")
                                              for k, v in s["by_mode"].items())
                      + f"; unextracted {s['unextracted']:,}", highlight=False)
    if result.get("truncated"):
        console.print(f"{result['truncated']:,} replies were cut at max_tokens (marked truncated)", highlight=False)
    coverage = result["coverage"]
    console.print(f"coverage: {coverage['scored']:,} of {coverage['selected']:,} scored"
                  + ("" if coverage["complete"] else " (PARTIAL)"), highlight=False)
    console.print(f"results: {result['out']}/samples.jsonl (every sample), results.parquet; report: "
                  f"{result['out']}/report.md, report.html (open a sample from any score)", highlight=False)

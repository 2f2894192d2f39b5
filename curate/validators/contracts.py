"""Data contracts: Great Expectations suites that a release's samples must pass before it is written.

The `contracts` stage checks the selected samples, joined with their `verify` verdicts and the
tables they reference, against two suites:

- **samples** (one row per sample): unique ids; no null gold answer; every task in the taxonomy;
  every (task, answer type) pair one the taxonomy allows; every referenced table present; every
  stored program re-executing to its gold answer (or a gold an annotator fixed, `human_fixed`); every
  split one the build configured.
- **splits** (one row per configured split): its size within `[min_split_size, max_split_size]`.

Leakage across splits (the same tables and program in two splits, `curate check`) is a third,
DuckDB-computed contract. A failed expectation is reported with the offending values and the ids
of example samples, and blocks the release.

great_expectations is imported inside the stage only: the import alone takes about 5 s.
"""

from __future__ import annotations

import os
from typing import Any

from curate.curation.config import with_defaults
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import ContractsReport
from curate.curation.pipeline.stage import Plan, Stage
from curate.curation.pipeline.store import Dataset

DEFAULTS: dict[str, Any] = {"min_split_size": 1, "max_split_size": 0, "splits": ["test"], "examples": 5}
PASSING_VERDICTS = ["match", "no_program", "human_fixed"]


def settings(config: dict[str, Any]) -> dict[str, Any]:
    out = with_defaults("contracts", config, DEFAULTS)
    for key in ("min_split_size", "max_split_size", "examples"):
        if not isinstance(out[key], int) or isinstance(out[key], bool) or out[key] < 0:
            raise ValueError(f"[contracts] {key} must be a whole number >= 0, got {out[key]!r}")
    return out


def sample_frame(sample_files: list[str], verdict_files: list[str], table_files: list[str]) -> Any:
    """One row per sample: what the samples suite looks at (pandas, as Great Expectations wants)."""
    import duckdb

    con = duckdb.connect()
    if table_files:
        con.execute("CREATE TEMP TABLE present AS SELECT DISTINCT id FROM read_parquet(?)", [table_files])
    else:
        con.execute("CREATE TEMP TABLE present (id VARCHAR)")
    if verdict_files:
        con.execute("CREATE TEMP TABLE verdicts AS SELECT id, verdict, detail FROM read_parquet(?)", [verdict_files])
    else:
        con.execute("CREATE TEMP TABLE verdicts (id VARCHAR, verdict VARCHAR, detail VARCHAR)")
    frame = con.execute("""
        WITH s AS (SELECT id, task, answer, answer_type, split, table_ids FROM read_parquet(?)),
        missing AS (
            SELECT u.id, string_agg(u.tid, ', ' ORDER BY u.tid) AS missing_tables
            FROM (SELECT id, unnest(table_ids) AS tid FROM s) u LEFT JOIN present p ON u.tid = p.id
            WHERE p.id IS NULL GROUP BY u.id)
        SELECT s.id, s.task, s.answer_type, s.split,
               CASE WHEN s.answer IS NULL OR s.answer = 'null' THEN NULL ELSE s.answer END AS answer,
               coalesce(v.verdict, 'not_verified') AS verdict, m.missing_tables
        FROM s LEFT JOIN verdicts v ON s.id = v.id LEFT JOIN missing m ON s.id = m.id
        ORDER BY s.id""", [sample_files]).df()
    con.close()
    return frame


def _quiet_great_expectations() -> Any:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import logging

    import great_expectations as gx

    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    return gx


def run_suites(samples: Any, split_sizes: Any, s: dict[str, Any]) -> list[dict[str, Any]]:
    """Validate the two frames; one entry per expectation, failed ones with examples."""
    from curate.curation.taxonomy import tasks

    gx = _quiet_great_expectations()
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    source = context.data_sources.add_pandas("release")
    taxonomy = tasks()
    allowed_pairs = [(key, t) for key, task in taxonomy.items() for t in (task.answer_types or (task.answer_type,))]
    E = gx.expectations
    suites = {
        "samples": (samples, [
            E.ExpectColumnValuesToBeUnique(column="id"),
            E.ExpectColumnValuesToNotBeNull(column="answer"),
            E.ExpectColumnValuesToBeInSet(column="task", value_set=sorted(taxonomy)),
            E.ExpectColumnPairValuesToBeInSet(column_A="task", column_B="answer_type",
                                              value_pairs_set=allowed_pairs),
            E.ExpectColumnValuesToBeNull(column="missing_tables"),
            E.ExpectColumnValuesToBeInSet(column="verdict", value_set=PASSING_VERDICTS),
            E.ExpectColumnValuesToBeInSet(column="split", value_set=list(s["splits"])),
        ]),
        "splits": (split_sizes, [
            E.ExpectColumnValuesToBeBetween(column="samples", min_value=s["min_split_size"],
                                            max_value=s["max_split_size"] or None),
        ]),
    }
    out: list[dict[str, Any]] = []
    for name, (frame, expectations) in suites.items():
        batch = source.add_dataframe_asset(name=name).add_batch_definition_whole_dataframe("all").get_batch(
            batch_parameters={"dataframe": frame})
        suite = gx.ExpectationSuite(name=name)
        for expectation in expectations:
            suite.add_expectation(expectation)
        key = "id" if name == "samples" else "split"
        result = batch.validate(suite, result_format={
            "result_format": "SUMMARY", "partial_unexpected_count": s["examples"],
            "unexpected_index_column_names": [key]})
        for r in result.results:
            config = r.expectation_config
            details = r.result or {}
            entry = {"suite": name, "expectation": config.type,
                     "kwargs": {k: v for k, v in config.kwargs.items()
                                if k in ("column", "column_A", "column_B", "min_value", "max_value")},
                     "success": bool(r.success), "checked": details.get("element_count", len(frame)),
                     "unexpected": details.get("unexpected_count", 0), "examples": []}
            if not r.success:
                entry["examples"] = [{k: _plain(v) for k, v in row.items()}
                                     for row in details.get("partial_unexpected_index_list", [])[:s["examples"]]]
                if r.exception_info and r.exception_info.get("raised_exception"):
                    entry["error"] = r.exception_info.get("exception_message", "")
            out.append(entry)
    return out


def _plain(value: Any) -> Any:
    """numpy scalars and tuples as plain JSON values."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    return value


def leakage_contract(sample_files: list[str], examples: int) -> dict[str, Any]:
    from curate.validators.checks import check_samples

    leak = check_samples(sample_files, examples)["leakage"]
    return {"suite": "samples", "expectation": "expect_no_program_in_two_splits", "kwargs": {},
            "success": leak["groups"] == 0, "checked": None, "unexpected": leak["samples"],
            "examples": [{"id": e["ids"][0], "splits": e["splits"], "program": e["program"][:200]}
                         for e in leak["examples"][:examples]]}


@stage("contracts", outputs=(), inputs={"samples": ("imported", "<samples"), "verdicts": ("verify",),
                           "tables": ("imported", "clean", "rules")},
       latest=("samples",), section=("contracts",), settings="curate.validators.contracts:settings")
class ContractsStage(Stage):
    """Inputs: the selected samples, their verdicts, then every dataset whose tables they may use."""

    version = "1"

    report_type = ContractsReport

    def plan(self, config: dict[str, Any], inputs: list[Dataset]) -> Plan:
        settings(config)
        if len(inputs) < 2:
            raise ValueError("the contracts stage needs the selected samples and their verdicts")
        return Plan(tasks=[{
            "samples": [str(p) for p in inputs[0].files("samples")],
            "verdicts": [str(p) for p in inputs[1].files("verdicts")],
            "tables": [str(p) for d in inputs[2:] for p in d.files("tables")],
        }])

    def run_part(self, task: dict[str, Any], shared: dict[str, Any], config: dict[str, Any]):
        import pandas as pd

        s = settings(config)
        samples = sample_frame(task["samples"], task["verdicts"], task["tables"])
        counts = samples["split"].value_counts()
        split_sizes = pd.DataFrame({"split": list(s["splits"]),
                                    "samples": [int(counts.get(name, 0)) for name in s["splits"]]})
        results = run_suites(samples, split_sizes, s) + [leakage_contract(task["samples"], s["examples"])]
        failed = [r for r in results if not r["success"]]
        summary = {"ok": not failed, "samples": len(samples), "expectations": results,
                   "failed": [f"{r['suite']}: {r['expectation']}({_describe(r['kwargs'])})" for r in failed],
                   "split_sizes": dict(zip(split_sizes["split"], split_sizes["samples"].astype(int).tolist()))}
        return {}, summary

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        return summaries[0] if summaries else {"ok": True, "samples": 0, "expectations": [], "failed": []}


def _describe(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in kwargs.items())

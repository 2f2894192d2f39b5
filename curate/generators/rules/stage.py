"""The `rules` stage: every template over every cleaned table, in parts of similar weight."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curate.curation.config import with_defaults

import pyarrow.parquet as pq

from curate.curation.arrow_io import SAMPLE_SCHEMA, TABLE_SCHEMA, tables_from_arrow, tables_to_arrow
from curate.curation.hashing import content_hash
from curate.curation.table import shown_chars
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import SamplesReport
from curate.curation.pipeline.stage import Plan, Stage, merge_counts
from curate.curation.pipeline.store import Dataset

TARGET_PARTS = 24  # enough parts to keep every core busy, few enough to keep files large
# a table whose default (markdown) serialization is longer than the evaluator puts in a prompt
# (`curate evaluate`'s max_table_chars) would be asked about rows the model never sees
# `hierarchical_flat_scale`: on a hierarchical table, TReB's flat templates (which read it as flat
# columns) get this share of their caps, so the questions that navigate its tree are not drowned
DEFAULTS: dict[str, Any] = {"seed": 0, "scale": 1.0, "templates": [], "exclude": [], "caps": {},
                            "max_table_chars": 30_000, "hierarchical_flat_scale": 0.15}


def settings(config: dict[str, Any]) -> dict[str, Any]:
    out = with_defaults("generate.rules", config, DEFAULTS)
    if not isinstance(out["seed"], int) or isinstance(out["seed"], bool):
        raise ValueError(f"[generate.rules] seed must be an integer, got {out['seed']!r}")
    if not isinstance(out["scale"], (int, float)) or out["scale"] <= 0:
        raise ValueError(f"[generate.rules] scale must be a positive number, got {out['scale']!r}")
    flat = out["hierarchical_flat_scale"]
    if isinstance(flat, bool) or not isinstance(flat, (int, float)) or flat <= 0:
        raise ValueError(f"[generate.rules] hierarchical_flat_scale must be a positive number, got {flat!r}")
    return out


@dataclass
class RulesReport(SamplesReport):
    """The rules stage: samples, and every table that yielded none, counted by why and named."""

    without_questions: dict[str, int] = field(default_factory=dict)
    without_questions_tables: list[dict[str, str]] = field(default_factory=list)  # {table, id, reason}, each one

    def summary(self, detail: str = "") -> str:
        out = super().summary(detail)
        if self.without_questions:
            n = sum(self.without_questions.values())
            out += (f"; {n:,} tables gave no question (" + ", ".join(
                f"{why} {k:,}" for why, k in sorted(self.without_questions.items(), key=lambda kv: -kv[1])) + ")")
        return out


def why_nothing(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]) -> str:
    """The reason most templates gave for rejecting one table's candidates (the counts it added)."""
    added: dict[str, int] = {}
    for task, reasons in after.items():
        for reason, n in reasons.items():
            extra = n - before.get(task, {}).get(reason, 0)
            if extra > 0:
                added[reason] = added.get(reason, 0) + extra
    return max(added, key=lambda r: (added[r], r)) if added else "no_candidate"


@stage("rules", outputs=("samples", "tables"), inputs={"tables": ("clean",)}, kind="generator",
       section=("generate", "rules"), settings="curate.generators.rules.stage:settings")
class RulesStage(Stage):
    version = "6"  # 2: skips tables flagged too long; 3: the hierarchical track's tree questions;
    # 4: column semantics, and tables longer than a prompt shows are skipped; 5: round thresholds, rows named
    # for what they are ("counties"), designs and ids left out of tests; 6: tests asked as questions,
    # rows without a key are "observations", no lookups by a number; shares only of parts of a whole,
    # per-unit figures per head or area, coordinates and trial sites never measured

    report_type = RulesReport

    def fingerprint(self, config: dict[str, Any]) -> Any:
        """The data the code reads: the templates and the taxonomy (the code itself is in every
        stage's signature, from its imports)."""
        from curate.curation.taxonomy import TAXONOMY_FILE
        from curate.generators.rules.catalog import catalog_fingerprint

        return content_hash(catalog_fingerprint(), TAXONOMY_FILE.read_text())

    def plan(self, config: dict[str, Any], inputs: list[Dataset]) -> Plan:
        from curate.generators.rules.catalog import load_templates

        s = settings(config)
        load_templates(only=s["templates"] or None, exclude=s["exclude"], caps=s["caps"])  # fail early
        entries = []
        for dataset in inputs:
            for path in dataset.files("tables"):
                meta = pq.read_table(path, columns=["n_rows", "n_cols"])
                for row, (r, c) in enumerate(zip(meta.column("n_rows").to_pylist(), meta.column("n_cols").to_pylist())):
                    entries.append((str(path), row, float(max(1, r) * max(1, c))))
        total = sum(w for *_, w in entries) or 1.0
        per_part = total / TARGET_PARTS
        tasks, weights = [], []
        current: dict[str, Any] | None = None
        weight = 0.0
        for path, row, w in entries:
            if current is None or current["file"] != path or weight >= per_part:
                current = {"file": path, "start": row, "stop": row}
                tasks.append(current)
                weights.append(0.0)
                weight = 0.0
            current["stop"] = row + 1
            weight += w
            weights[-1] += w
        return Plan(tasks=tasks, weights=weights)

    def run_part(self, task: dict[str, Any], shared: dict[str, Any], config: dict[str, Any]):
        from curate.generators.rules.catalog import load_templates
        from curate.generators.rules.emit import SampleColumns
        from curate.generators.rules.engine import Stats, generate_for_table

        s = settings(config)
        templates = load_templates(only=s["templates"] or None, exclude=s["exclude"], caps=s["caps"])
        data = pq.read_table(task["file"]).slice(task["start"], task["stop"] - task["start"])
        out = SampleColumns()
        derived: list = []
        stats = Stats()
        failed: list[dict[str, str]] = []
        started = time.perf_counter()
        n_tables = too_large = 0
        nothing: dict[str, int] = {}
        named: list[dict[str, str]] = []

        def gave_nothing(table: Any, why: str) -> None:
            nothing[why] = nothing.get(why, 0) + 1
            named.append({"table": table.name, "id": table.id, "reason": why})

        for table in tables_from_arrow(data):
            if "too_long" in table.flags:
                gave_nothing(table, "too_long")
                continue  # kept for SQL over its database; too long to put in a prompt
            if s["max_table_chars"] and shown_chars(table) > s["max_table_chars"]:
                too_large += 1  # the model would not see all of it
                gave_nothing(table, "too_large_to_show")
                continue
            n_tables += 1
            before = (len(out), len(derived), copy.deepcopy(stats))
            try:
                generate_for_table(table, templates, s["seed"], out, derived, stats, s["scale"],
                                   flat_scale=s["hierarchical_flat_scale"])
            except Exception as e:  # noqa: BLE001 - one bad table must not stop the corpus
                out.truncate(before[0])
                del derived[before[1]:]
                stats = before[2]
                failed.append({"table": table.name, "error": f"{type(e).__name__}: {e}"})
                gave_nothing(table, "error")
                continue
            if len(out) == before[0]:  # every table accounted for: why this one yielded nothing
                gave_nothing(table, why_nothing(before[2].rejected, stats.rejected))
        samples = out.to_arrow() if len(out) else SAMPLE_SCHEMA.empty_table()
        tables = tables_to_arrow(_unique(derived)) if derived else TABLE_SCHEMA.empty_table()
        summary = {"tables": n_tables, "too_large_to_show": too_large, "samples": len(out), "derived_tables": tables.num_rows,
                   "by_task": stats.emitted, "candidates": stats.candidates, "rejected": stats.rejected,
                   "failed": failed, "without_questions": nothing, "without_questions_tables": named,
                   "generate_seconds": time.perf_counter() - started}
        return {"samples": samples, "tables": tables}, summary

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        report = merge_counts(summaries)
        report["settings"] = settings(config)
        return report


def _unique(tables: list) -> list:
    seen, out = set(), []
    for t in tables:
        if t.id not in seen:
            seen.add(t.id)
            out.append(t)
    return out

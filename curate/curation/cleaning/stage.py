"""The clean stage: every rule on every table; duplicates found across the whole input first."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from curate.curation.arrow_io import DATABASE_SCHEMA, TABLE_SCHEMA, tables_from_arrow, tables_to_arrow
from curate.curation.cleaning.rules import CleaningConfig, apply_rules
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import CleanReport
from curate.curation.pipeline.stage import Plan, Stage, merge_counts
from curate.curation.pipeline.store import Dataset

EXAMPLES_PER_RULE = 5


@stage("clean", outputs=("tables", "databases"), inputs={"tables": ("ingest",)}, section=("clean",),
       settings="curate.curation.cleaning.rules:CleaningConfig.from_dict")
class CleanStage(Stage):
    version = "4"  # 3: tables of a database are never dropped as too long or as duplicates; 4: column semantics

    report_type = CleanReport

    def plan(self, config: dict[str, Any], inputs: list[Dataset]) -> Plan:
        CleaningConfig.from_dict(config)  # fail before any work on a bad setting
        tasks, weights = [], []
        seen: dict[str, tuple[int, int]] = {}
        duplicates: list[list] = []  # [part, row, name, first name]: the first occurrence stays
        names: dict[tuple[int, int], str] = {}
        for dataset in inputs:
            table_files = {p.name.split(".")[0]: p for p in dataset.files("tables")}
            db_files = {p.name.split(".")[0]: p for p in dataset.files("databases")}
            for stem in sorted(set(table_files) | set(db_files)):
                part = len(tasks)
                tables = str(table_files[stem]) if stem in table_files else ""
                tasks.append({"index": part, "tables": tables, "databases": str(db_files.get(stem, ""))})
                if not tables:
                    weights.append(1.0)
                    continue
                meta = pq.read_table(tables, columns=["content_hash", "name", "n_rows", "provenance"])
                weights.append(float(max(1, sum(meta.column("n_rows").to_pylist()))))
                members = [p["database"] for p in meta.column("provenance").to_pylist()]
                for row, (h, name) in enumerate(zip(meta.column("content_hash").to_pylist(),
                                                    meta.column("name").to_pylist())):
                    if members[row]:
                        continue  # a database needs every one of its tables, even a copy of another's
                    if h in seen:
                        first = seen[h]
                        duplicates.append([part, row, name, names[first]])
                    else:
                        seen[h] = (part, row)
                        names[(part, row)] = name
        return Plan(tasks=tasks, weights=weights, shared={"duplicates": duplicates})

    def run_part(self, task: dict[str, Any], shared: dict[str, Any], config: dict[str, Any]):
        settings = CleaningConfig.from_dict(config)
        duplicate_rows = {(d[0], d[1]): d[3] for d in shared["duplicates"]}
        kept: list[pa.Table] = []
        counts: dict[str, dict[str, int]] = {}
        examples: dict[str, list[str]] = {}
        dropped_by: dict[str, int] = {}
        dropped_tables: list[dict[str, str]] = []  # every one, named: the console shows the first few
        total = 0

        def count(rule: str, action: str, name: str, reason: str) -> None:
            counts.setdefault(rule, {}).setdefault(action, 0)
            counts[rule][action] += 1
            if action != "keep" and len(examples.setdefault(f"{rule}:{action}", [])) < EXAMPLES_PER_RULE:
                examples[f"{rule}:{action}"].append(f"{name}: {reason}")

        if task["tables"]:
            for row, table in enumerate(tables_from_arrow(pq.read_table(task["tables"]))):
                total += 1
                first = duplicate_rows.get((task["index"], row))
                if first is not None and settings.drop_duplicates:
                    count("duplicate", "drop", table.name, f"same content as {first}")
                    dropped_by["duplicate"] = dropped_by.get("duplicate", 0) + 1
                    dropped_tables.append({"table": table.name, "rule": "duplicate",
                                           "reason": f"same content as {first}"})
                    continue
                cleaned, verdicts = apply_rules(table, settings)
                for v in verdicts:
                    count(v.rule, v.action, table.name, v.reason)
                if cleaned is None:
                    first_drop = next(v for v in verdicts if v.action == "drop")
                    dropped_by[first_drop.rule] = dropped_by.get(first_drop.rule, 0) + 1
                    dropped_tables.append({"table": table.name, "rule": first_drop.rule, "reason": first_drop.reason})
                else:
                    kept.append(tables_to_arrow([cleaned]))
        tables = pa.concat_tables(kept) if kept else TABLE_SCHEMA.empty_table()
        databases = pq.read_table(task["databases"]) if task["databases"] else DATABASE_SCHEMA.empty_table()
        summary = {"tables_in": total, "kept": tables.num_rows, "dropped": total - tables.num_rows,
                   "databases": databases.num_rows, "rules": counts, "dropped_by": dropped_by,
                   "examples": examples, "dropped_tables": dropped_tables}
        return {"tables": tables, "databases": databases}, summary

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        report = merge_counts([{k: v for k, v in s.items() if k != "examples"} for s in summaries])
        examples: dict[str, list[str]] = {}
        for s in summaries:  # in part order: the same examples whatever ran first
            for key, items in s["examples"].items():
                room = EXAMPLES_PER_RULE - len(examples.setdefault(key, []))
                examples[key] += items[:max(0, room)]
        report["examples"] = examples
        report["config"] = CleaningConfig.from_dict(config).as_dict()
        return report

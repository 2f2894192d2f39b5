"""The `sql` stage: MMQA-style multi-table questions over every database in the workspace.

One part per database (a database of more than BIG_DATABASE_ROWS rows is split into several
parts by template, so that one large database does not keep a single core busy while the other
idles). Key-selection samples come from the first part of each database.
"""

from __future__ import annotations

import time
from typing import Any

import pyarrow.parquet as pq

from curate.curation import column_key
from curate.curation.arrow_io import SAMPLE_SCHEMA, databases_from_arrow, read_cached, samples_to_arrow, table_at
from curate.curation.hashing import content_hash
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import SqlReport
from curate.curation.pipeline.stage import Plan, Stage, merge_counts
from curate.curation.pipeline.store import Dataset
from curate.curation.table import shown_chars

def _too_few_tables(tables: int, present: int) -> str:
    """Why a database gives no multi-table question before any is tried."""
    if tables < 2:
        return "one table: no join to ask about"
    lost = tables - present
    return (f"{lost} of its {tables} tables were dropped by cleaning (empty, or too sparse to ask about), "
            f"leaving {present}: no join to ask about")


def why_nothing(graph: Any, stats: Any) -> str:
    """Why a database whose synthesis ran gave no sample, in a reader's words."""
    if graph is None:
        return "not synthesized"
    if not graph.edges:
        return "no foreign keys (none declared, none inferred from the values): no join to ask about"
    if not stats.candidates:
        return (f"{len(graph.edges)} foreign keys, but no join path offers the columns a template needs "
                "(a measure, a category or a name beside the keys), or every path is too large or a sibling join")
    top = ", ".join(f"{reason} {n:,}" for reason, n in sorted(stats.rejected.items(), key=lambda kv: -kv[1])[:3])
    return f"all {stats.candidates:,} candidate queries were rejected ({top})"


BIG_DATABASE_ROWS = 50_000
BIG_DATABASE_PARTS = 4


@stage("sql", outputs=("samples",), inputs={"tables": ("clean",)}, kind="generator", section=("generate", "sql"),
       settings="curate.generators.sql.synth:settings")
class SqlStage(Stage):
    version = "2"  # 2: the report lists the retrieval pool

    report_type = SqlReport

    def fingerprint(self, config: dict[str, Any]) -> Any:
        """The data the code reads: the SQL templates and the taxonomy (the code itself, keys.py
        included, is in every stage's signature, from its imports)."""
        from curate.curation.taxonomy import TAXONOMY_FILE
        from curate.generators.sql.templates import catalog_fingerprint

        return content_hash(catalog_fingerprint(), TAXONOMY_FILE.read_text())

    def plan(self, config: dict[str, Any], inputs: list[Dataset]) -> Plan:
        from curate.generators.sql.synth import settings
        from curate.generators.sql.tasks import qualified
        from curate.generators.sql.templates import load_sql_templates

        s = settings(config)
        load_sql_templates(only=s["templates"] or None, exclude=s["exclude"])  # fail early
        where: dict[str, tuple[str, int, int]] = {}  # table id -> (file, row, rows)
        databases: list[tuple[str, int, Any]] = []
        for dataset in inputs:
            for path in dataset.files("tables"):
                meta = pq.read_table(path, columns=["id", "n_rows"])
                for row, (table_id, n) in enumerate(zip(meta.column("id").to_pylist(),
                                                        meta.column("n_rows").to_pylist())):
                    where[table_id] = (str(path), row, n)
            for path in dataset.files("databases"):
                for row, db in enumerate(databases_from_arrow(pq.read_table(path))):
                    databases.append((str(path), row, db))
        tasks, weights, pool = [], [], []
        for path, row, db in sorted(databases, key=lambda d: (d[2].name, d[2].id)):
            present = [(name, *where[table_id][:2]) for name, table_id in db.tables if table_id in where]
            missing = [name for name, table_id in db.tables if table_id not in where]  # e.g. dropped by cleaning
            if len(present) < 2:  # said in the report, with why: no database is lost in silence
                tasks.append({"database": [path, row], "name": db.name, "tables": present, "part": 0, "parts": 1,
                              "missing": missing, "skip": _too_few_tables(len(db.tables), len(present))})
                weights.append(0.1)
                continue
            pool += [qualified(db.name, name) for name, *_ in present]
            rows = sum(where[table_id][2] for _, table_id in db.tables if table_id in where)
            parts = BIG_DATABASE_PARTS if rows > BIG_DATABASE_ROWS else 1
            for part in range(parts):
                tasks.append({"database": [path, row], "name": db.name, "tables": present, "part": part,
                              "parts": parts, "missing": missing})
                weights.append(len(present) + rows / 10_000 / parts)
        order = sorted(range(len(tasks)), key=lambda i: (-weights[i], i))  # the heaviest start first
        pool = sorted(pool)
        return Plan(tasks=[tasks[i] for i in order], weights=[weights[i] for i in order],
                    shared={"pool": {"size": len(pool), "hash": content_hash(pool)[:16]}})

    def run_part(self, task: dict[str, Any], shared: dict[str, Any], config: dict[str, Any]):
        from curate.generators.sql.synth import Stats, settings, synthesize_database
        from curate.generators.sql.tasks import key_samples, qualified, query_samples
        from curate.generators.sql.templates import load_sql_templates

        if task.get("skip"):
            return {"samples": SAMPLE_SCHEMA.empty_table()}, {
                "by_database": {task["name"]: 0}, "without_samples": {task["name"]: task["skip"]},
                "missing_tables": [f"{task['name']}.{n}" for n in task["missing"]]}
        started = time.perf_counter()
        s = settings(config)
        templates = load_sql_templates(only=s["templates"] or None, exclude=s["exclude"])
        templates = templates[task["part"]::task["parts"]]
        path, row = task["database"]
        database = next(databases_from_arrow(read_cached(path).slice(row, 1)))
        tables = {name: table_at(file, table_row)
                  for name, file, table_row in task["tables"]}
        samples = []
        failed: list[dict[str, str]] = []
        stats = Stats()
        queries, hidden, graph, personal = [], frozenset(), None, {}
        try:
            queries, stats, graph, personal = synthesize_database(database, tables, templates, config)
            ids = {name: t.id for name, t in tables.items()}
            hidden = frozenset(name for name, t in tables.items()
                               if t.body.num_rows * t.body.num_columns > s["max_visible_cells"]
                               or (s["max_table_chars"] and shown_chars(t) > s["max_table_chars"]))
            if task["part"] == 0:
                samples += key_samples(database, graph, ids, hidden)
            for query in queries:
                samples += query_samples(database, graph, query, ids, shared["pool"], hidden)
        except Exception as e:  # noqa: BLE001 - one bad database must not stop the others
            samples = []
            failed.append({"database": database.name, "error": f"{type(e).__name__}: {e}"})
        by_task: dict[str, int] = {}
        for sample in samples:
            by_task[sample.task] = by_task.get(sample.task, 0) + 1
        out = samples_to_arrow(samples) if samples else SAMPLE_SCHEMA.empty_table()
        schema_only = sum(1 for q in queries if any(t in hidden for t in q.orientation.tables)) if not failed else 0
        nothing = {database.name: failed[0]["error"] if failed else why_nothing(graph, stats)} if not samples else {}
        summary = {"databases": 1 if task["part"] == 0 else 0, "queries": stats.kept, "samples": len(samples),
                   "samples_by_database": {database.name: len(samples)}, "without_samples": nothing,
                   # personal data found in the tables: never asked about, but present (the card lists it)
                   "personal_data": {f"{database.name}.{t}.{c}": kind for t, found in personal.items()
                                     for c, kind in found.items()} if task["part"] == 0 else {},
                   "queries_over_unserialized_tables": schema_only,
                   "by_task": by_task, **{k: v for k, v in stats.as_dict().items() if k != "kept"},
                   # each part of a database tries the same paths: its budget's loss is said once, by database
                   "paths_over_budget": ({database.name: stats.paths_over_budget}
                                         if task["part"] == 0 and stats.paths_over_budget else {}),
                   "by_database": {database.name: stats.kept}, "failed": failed,
                   "missing_tables": [f"{database.name}.{n}" for n in task["missing"]] if task["part"] == 0 else [],
                   # the pool retrieval chooses from, each table with its columns: the columns a
                   # question names are what point to its tables (MMQA's questions name none)
                   "retrieval_pool": {qualified(database.name, n): list(t.body.column_names)
                                      for n, t in tables.items()} if task["part"] == 0 else {},
                   # and each table's column key, by which a retrieval question names a column by its label
                   "retrieval_keys": {qualified(database.name, n): [list(e) for e in key]
                                      for n, t in tables.items()
                                      if (key := column_key.entries(t.semantics, t.body.column_names))}
                   if task["part"] == 0 else {},
                   "generate_seconds": time.perf_counter() - started}
        return {"samples": out}, summary

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        from curate.generators.sql.synth import settings
        from curate.generators.sql.templates import load_sql_templates

        report = merge_counts(summaries)
        s = settings(config)
        report["settings"] = s
        report["disagreements"] = report.get("disagreements", [])[:10]
        report["retrieval_pool"] = dict(sorted(report.get("retrieval_pool", {}).items()))  # what retrieval chooses from
        report["retrieval_keys"] = dict(sorted(report.get("retrieval_keys", {}).items()))
        names = [t.id for t in load_sql_templates(only=s["templates"] or None, exclude=s["exclude"])]
        # a database some part of which gave samples gave something: only the ones that gave none are losses
        given = report.pop("samples_by_database", {})
        report["without_samples"] = {db: why for db, why in sorted(report.get("without_samples", {}).items())
                                     if not given.get(db)}
        report["personal_data"] = dict(sorted(report.get("personal_data", {}).items()))
        report["templates"] = len(names)
        report["templates_without_samples"] = [n for n in names if n not in report.get("by_template", {})]
        return report

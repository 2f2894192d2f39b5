"""The `select` stage: which generated samples a release holds, and in which split.

A filter in datatrove's sense: every sample is kept or dropped with a counted reason.

- **near_duplicate**: the same task and tables, and the same question once case, punctuation and
  spacing are ignored (as `curate check` sees it). The sample with the smallest id stays.
- **over_cap**: a task keeps at most `max_per_task` samples (0: all), spread evenly over its
  templates. Within a template the order is a content hash of (seed, id), so the choice never
  depends on the order samples arrive in.

Splits are drawn per **group**: a database for SQL samples, else the source table. Every sample
of a table lands in the same split, so no table and no program appears in two splits.

The choices are made in one DuckDB pass over every sample file (a window per task and template);
each part then filters one file.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from curation.config import with_defaults
from curation.pipeline.rng import record_seed
from curation.pipeline.stage import Plan, Stage, merge_counts
from curation.pipeline.store import Dataset

DEFAULTS: dict[str, Any] = {"seed": 0, "max_per_task": 0, "splits": {"test": 1.0}, "drop_near_duplicates": True}
SPLIT_NAME = r"^\w+$"


def settings(config: dict[str, Any]) -> dict[str, Any]:
    import re

    out = with_defaults("select", config, DEFAULTS)
    splits = out["splits"]
    if not isinstance(splits, dict) or not splits:
        raise ValueError(f"[select] splits must be a table of split name = fraction, got {splits!r}")
    for name, fraction in splits.items():
        if not re.match(SPLIT_NAME, name):
            raise ValueError(f"[select] split name {name!r}: use letters, digits and underscores")
        if not isinstance(fraction, (int, float)) or isinstance(fraction, bool) or fraction <= 0:
            raise ValueError(f"[select] split {name!r}: the fraction must be a positive number, got {fraction!r}")
    if abs(sum(splits.values()) - 1.0) > 1e-9:
        raise ValueError(f"[select] split fractions must add up to 1, got {sum(splits.values())}")
    if not isinstance(out["max_per_task"], int) or isinstance(out["max_per_task"], bool) or out["max_per_task"] < 0:
        raise ValueError(f"[select] max_per_task must be a whole number >= 0 (0: all), got {out['max_per_task']!r}")
    if not isinstance(out["seed"], int) or isinstance(out["seed"], bool):
        raise ValueError(f"[select] seed must be an integer, got {out['seed']!r}")
    return out


def split_of(seed: int, group: str, splits: dict[str, float]) -> str:
    """The split of a group: a uniform draw from its content hash against the cumulative fractions."""
    u = record_seed(seed, group, "split") / 2.0 ** 64
    total = 0.0
    for name, fraction in splits.items():
        total += fraction
        if u < total:
            return name
    return list(splits)[-1]


def group_of(provenance: dict[str, str], table_ids: list[str]) -> str:
    """What must stay within one split: a database, else the source table, else the tables."""
    if provenance.get("database"):
        return "db:" + provenance["database"]
    if provenance.get("table"):
        return "table:" + provenance["table"]
    return "ids:" + ",".join(sorted(table_ids))


class SelectStage(Stage):
    name = "select"
    version = "1"
    outputs = ("samples",)

    def plan(self, config: dict[str, Any], inputs: list[Dataset]) -> Plan:
        """Decide in one DuckDB pass over every sample file; each part then filters one file."""
        import duckdb

        from curation.sample import NORMALIZED_QUESTION_SQL

        s = settings(config)
        files = [str(p) for d in inputs for p in d.files("samples")]
        if not files:
            return Plan(tasks=[])
        con = duckdb.connect()
        drop_near = "dup = 1" if s["drop_near_duplicates"] else "true"
        cap = f"rank_in_task <= {s['max_per_task']}" if s["max_per_task"] else "true"
        con.execute(f"""
            CREATE TEMP TABLE decided AS
            WITH s AS (SELECT id, task, template, table_ids, question, filename, file_row_number AS row,
                              md5($seed || id) AS h FROM read_parquet($files, filename = true, file_row_number = true)),
            d AS (SELECT *, row_number() OVER (PARTITION BY task, table_ids, {NORMALIZED_QUESTION_SQL} ORDER BY id)
                            AS dup FROM s),
            k AS (SELECT *, row_number() OVER (PARTITION BY task, template ORDER BY h, id) AS rank_in_template
                  FROM d WHERE {drop_near}),
            r AS (SELECT *, row_number() OVER (PARTITION BY task ORDER BY rank_in_template, h, id) AS rank_in_task
                  FROM k)
            SELECT d.task, d.id, d.filename, d.row, d.dup > 1 AS near_duplicate, r.id IS NOT NULL AND {cap} AS kept
            FROM d LEFT JOIN r ON d.filename = r.filename AND d.row = r.row""",
                    {"seed": str(s["seed"]), "files": files})
        counts = con.execute("""SELECT task, count(*), count(*) FILTER (WHERE near_duplicate),
                                       count(*) FILTER (WHERE kept) FROM decided GROUP BY 1 ORDER BY 1""").fetchall()
        kept: dict[str, list[int]] = {}  # file -> rows (an id may repeat: two templates, one question)
        for filename, row in con.execute("SELECT filename, row FROM decided WHERE kept ORDER BY 1, 2").fetchall():
            kept.setdefault(filename, []).append(row)
        near_examples = [r[0] for r in con.execute(
            "SELECT id FROM decided WHERE near_duplicate ORDER BY id LIMIT 5").fetchall()]
        con.close()
        stats = {"candidates": {t: n for t, n, _, _ in counts}, "kept": {t: k for t, _, _, k in counts},
                 "dropped": {t: {"near_duplicate": near if s["drop_near_duplicates"] else 0,
                                 "over_cap": n - k - (near if s["drop_near_duplicates"] else 0)}
                             for t, n, near, k in counts},
                 "near_duplicate_examples": near_examples}
        tasks = [{"file": f, "keep": kept.get(f, []), "stats": stats if i == 0 else None}
                 for i, f in enumerate(files)]
        return Plan(tasks=tasks, weights=[1.0 + len(t["keep"]) for t in tasks])

    def run_part(self, task: dict[str, Any], shared: dict[str, Any], config: dict[str, Any]):
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        from curation.arrow_io import SAMPLE_SCHEMA

        s = settings(config)
        data = pq.read_table(task["file"]).take(pa.array(task["keep"], pa.int64()))
        data = data.take(pc.sort_indices(data, sort_keys=[("id", "ascending")]))
        groups = {}
        splits = []
        for provenance, table_ids in zip(data.column("provenance").to_pylist(), data.column("table_ids").to_pylist()):
            group = group_of(dict(provenance or []), table_ids)
            if group not in groups:
                groups[group] = split_of(s["seed"], group, s["splits"])
            splits.append(groups[group])
        data = data.set_column(data.schema.get_field_index("split"), "split", pa.array(splits, pa.string()))
        data = data.select(SAMPLE_SCHEMA.names).cast(SAMPLE_SCHEMA)
        by_split: dict[str, int] = {}
        for name in splits:
            by_split[name] = by_split.get(name, 0) + 1
        summary = {**(task["stats"] or {}), "by_split": by_split}
        return {"samples": data}, summary

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        out = merge_counts(summaries)
        out["samples"] = sum(out.get("kept", {}).values())
        out["settings"] = settings(config)
        return out

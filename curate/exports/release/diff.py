"""Releases compared: `diff.json` (samples added, removed and changed against the parent) and
`curate diff A B` (settings, stage signatures, counts per task, samples).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curate.exports.release.base import ANSWER_EXAMPLES, DIFF_EXAMPLES, MANIFEST, read_manifest


SAMPLE_DIGEST = ("md5(concat_ws(chr(31), task, question, question_short, answer, answer_type, split, quality, origin, "
                 "template, CAST(table_ids AS VARCHAR), coalesce(program.text, ''), judge_verdict, "
                 "CAST(votes AS VARCHAR), CAST(reviews AS VARCHAR)))")


def _sample_files(path: Path | None) -> list[str]:
    return sorted(str(p) for p in (path / "samples").rglob("*.parquet")) if path else []


def diff_releases(old: Path | None, new: Path) -> dict[str, Any]:
    """Samples added, removed and changed (same id, other content) from `old` to `new`, by id."""
    import duckdb

    con = duckdb.connect()
    empty = "SELECT NULL::VARCHAR AS id, NULL::VARCHAR AS task, NULL::VARCHAR AS digest, NULL::VARCHAR AS question, " \
            "NULL::VARCHAR AS answer WHERE false"
    for alias, path in (("a", old), ("b", new)):
        files = _sample_files(path)
        if files:
            con.execute(f"CREATE TEMP TABLE {alias} AS SELECT id, task, {SAMPLE_DIGEST} AS digest, question, answer "
                        "FROM read_parquet(?)", [files])
        else:
            con.execute(f"CREATE TEMP TABLE {alias} AS {empty}")
    rows = con.execute("""
        SELECT coalesce(a.id, b.id) AS id, coalesce(b.task, a.task) AS task,
               CASE WHEN a.id IS NULL THEN 'added' WHEN b.id IS NULL THEN 'removed' ELSE 'changed' END AS kind,
               coalesce(b.question, a.question) AS question, a.answer AS old_answer, b.answer AS new_answer
        FROM a FULL OUTER JOIN b ON a.id = b.id
        WHERE a.id IS NULL OR b.id IS NULL OR a.digest <> b.digest
        ORDER BY kind, id""").fetchall()
    by_task: dict[str, dict[str, int]] = {}
    ids: dict[str, list[str]] = {"added": [], "removed": [], "changed": [], "answer_changed": []}
    examples: dict[str, list[dict[str, Any]]] = {"added": [], "removed": [], "changed": []}
    answers: list[dict[str, Any]] = []  # every sample whose gold answer changed (up to ANSWER_EXAMPLES)
    for sid, task, kind, question, old_answer, new_answer in rows:
        ids[kind].append(sid)
        if kind == "changed" and json.loads(old_answer) != json.loads(new_answer):
            ids["answer_changed"].append(sid)
            if len(answers) < ANSWER_EXAMPLES:
                answers.append({"id": sid, "task": task, "question": question, "old_answer": json.loads(old_answer),
                                "new_answer": json.loads(new_answer)})
        by_task.setdefault(task, {"added": 0, "removed": 0, "changed": 0})[kind] += 1
        if len(examples[kind]) < DIFF_EXAMPLES:
            example = {"id": sid, "task": task, "question": question}
            if kind == "changed":
                example.update(old_answer=json.loads(old_answer), new_answer=json.loads(new_answer))
            examples[kind].append(example)
    totals = [con.execute(f"SELECT count(*) FROM {alias}").fetchone()[0] for alias in ("a", "b")]
    con.close()
    return {"samples": {"old": totals[0], "new": totals[1], **{k: len(v) for k, v in ids.items()},
                        "by_task": dict(sorted(by_task.items())), "examples": examples, "answers_changed": answers,
                        "ids": ids}}


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def compare_releases(a: str, b: str) -> dict[str, Any]:
    """`curate diff A B`: the two builds' settings, counts per task, and samples by id."""
    pa_, pb = Path(a), Path(b)
    for p in (pa_, pb):
        if not (p / MANIFEST).exists():
            raise SystemExit(f"{p}: not a release folder (no {MANIFEST})")
    ma, mb = read_manifest(pa_), read_manifest(pb)
    ca, cb = _flatten(ma.get("build", {}).get("config", {})), _flatten(mb.get("build", {}).get("config", {}))
    config = [{"key": k, "a": ca.get(k), "b": cb.get(k)} for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)]
    sa, sb = ma.get("build", {}).get("stages", {}), mb.get("build", {}).get("stages", {})
    from curate.curation.pipeline import PIPELINE_ORDER

    order = sorted(set(sa) | set(sb), key=lambda k: (PIPELINE_ORDER.index(k) if k in PIPELINE_ORDER else 99, k))
    stages = [{"stage": k, "a": sa.get(k, {}).get("signature"), "b": sb.get(k, {}).get("signature")}
              for k in order if sa.get(k, {}).get("signature") != sb.get(k, {}).get("signature")]
    ta, tb = ma["counts"]["by_task"], mb["counts"]["by_task"]
    tasks_ = [{"task": k, "a": ta.get(k, 0), "b": tb.get(k, 0)} for k in sorted(set(ta) | set(tb))]
    samples = diff_releases(pa_, pb)["samples"]
    samples.pop("ids")
    return {"a": {"path": a, "name": ma["name"], "version": ma["version"], "fingerprint": ma["fingerprint"]},
            "b": {"path": b, "name": mb["name"], "version": mb["version"], "fingerprint": mb["fingerprint"]},
            "same_content": ma["fingerprint"] == mb["fingerprint"], "config": config, "stages_rerun": stages,
            "tasks": tasks_, "samples": samples}

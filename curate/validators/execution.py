"""Execution checks: re-run every stored program and compare with the stored gold answer.

This is `curate verify`. Programs run through `curate.curation.programs` (DuckDB for SQL, the chain
interpreter for reasoning chains), independently of the bulk code that generated the answers,
so agreement over a whole corpus is evidence that both are right.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from curate.curation.arrow_io import table_at, table_index
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import VerifyReport
from curate.curation.pipeline.stage import Plan, Stage, merge_counts
from curate.curation.pipeline.store import Dataset
from curate.curation.sample import ReviewState

SAMPLES_PER_TASK = 20_000
MAX_REPORTED = 50


def verify_part(sample_file: str, start: int, stop: int, index: dict[str, tuple[str, int]],
                fraction: float, verdicts: list[tuple[str, str, str]] | None = None) -> dict[str, Any]:
    """Re-run the programs of samples[start:stop] of one file (a worker task).

    With `verdicts`, append (sample id, verdict, detail) for every sample checked: verdict is
    match, mismatch, error or no_program; detail is the computed answer (JSON) or the error.
    A gold an annotator fixed (`provenance["review"] == "fixed"`) that its program no longer
    computes is `human_fixed`, not a mismatch: the person has the last word, and the report
    counts these apart."""
    from curate.curation.answers import answers_match
    from curate.curation.programs import ProgramError, ProgramRunner
    from curate.curation.sample import Program
    from curate.curation.taxonomy import tasks

    columns = ["id", "task", "template", "answer", "table_ids", "program", "provenance"]
    data = pq.read_table(sample_file, columns=columns).slice(start, stop - start).to_pylist()
    # samples of the same tables together: each table is decoded once, not once per sample
    data.sort(key=lambda row: (list(row["table_ids"]), row["id"]))
    from curate.curation.programs.sqlite import SqliteRunner, is_sqlite

    runner, sqlite_runner = ProgramRunner(), SqliteRunner()  # the second for imported SQLite-dialect SQL
    tables: dict[str, Any] = {}
    formats = {k: t.format for k, t in tasks().items()}
    out: dict[str, Any] = {"checked": 0, "matched": 0, "skipped": 0, "no_program": 0, "human_fixed": 0, "by_task": {},
                           "mismatches": [], "errors": [], "mismatch_count": 0, "error_count": 0}

    def table(table_id: str) -> Any:
        if table_id not in tables:
            if table_id not in index:
                raise ProgramError(f"table {table_id} is not in the workspace or release")
            path, row = index[table_id]
            if len(tables) > 64:
                tables.clear()
            tables[table_id] = table_at(path, row)
        return tables[table_id]

    try:
        for row in data:
            if fraction < 1.0 and int(row["id"][-8:], 16) / 0xFFFFFFFF >= fraction:
                out["skipped"] += 1
                continue
            if row["program"] is None:
                out["no_program"] += 1
                if verdicts is not None:
                    verdicts.append((row["id"], "no_program", ""))
                continue
            program = Program(**row["program"])
            provenance = provenance_dict(row["provenance"])
            rule = provenance.get("format") or formats.get(row["task"], "exact")
            gold = json.loads(row["answer"])
            task_counts = out["by_task"].setdefault(row["task"], {"checked": 0, "mismatched": 0, "errors": 0})
            out["checked"] += 1
            task_counts["checked"] += 1
            ids = list(row["table_ids"])
            if program.kind == "metadata":
                ids.append(json.loads(program.text).get("table", ""))
            names = json.loads(provenance["tables"]) if program.kind == "sql" and "tables" in provenance else None
            try:
                computed = (sqlite_runner.run(program.text, [table(i) for i in ids], names) if is_sqlite(program)
                            else runner.run(program, [table(i) for i in ids], names))
            except ProgramError as e:
                if verdicts is not None:
                    verdicts.append((row["id"], "error", str(e)))
                out["error_count"] += 1
                task_counts["errors"] += 1
                if len(out["errors"]) < MAX_REPORTED:
                    out["errors"].append({"id": row["id"], "task": row["task"], "template": row["template"],
                                          "error": str(e)})
                continue
            matched = answers_match(gold, computed, rule)
            fixed = not matched and provenance.get("review") == ReviewState.FIXED
            if verdicts is not None:
                verdicts.append((row["id"], "match" if matched else "human_fixed" if fixed else "mismatch",
                                 json.dumps(computed, ensure_ascii=False, default=str)))
            if matched:
                out["matched"] += 1
            elif fixed:
                out["human_fixed"] += 1
            else:
                out["mismatch_count"] += 1
                task_counts["mismatched"] += 1
                if len(out["mismatches"]) < MAX_REPORTED:
                    out["mismatches"].append({"id": row["id"], "task": row["task"], "template": row["template"],
                                              "stored": gold, "computed": computed, "format": rule,
                                              "program": program.text})
    finally:
        runner.close()
        sqlite_runner.close()
    return out


def provenance_dict(value: Any) -> dict[str, str]:
    """A sample's provenance: a map in the workspace, a JSON object in release files."""
    if isinstance(value, str):
        return json.loads(value) if value else {}
    return dict(value or {})


def verify(sample_files: list[str], table_files: list[str], executor: Any = None, fraction: float = 1.0,
           progress: Any = None) -> dict[str, Any]:
    from curate.curation.pipeline.executor import LocalExecutor

    started = time.perf_counter()
    index = table_index(table_files)
    calls = []
    for path in sample_files:
        n = pq.ParquetFile(path).metadata.num_rows
        for start in range(0, n, SAMPLES_PER_TASK):
            calls.append((path, start, min(n, start + SAMPLES_PER_TASK), index, fraction))
    advance = progress("verify", float(len(calls))) if progress else (lambda n: None)
    results = []
    for result in (executor or LocalExecutor()).map_unordered(verify_part, calls):
        results.append(result)
        advance(1.0)
    mismatches = [m for r in results for m in r.pop("mismatches")][:MAX_REPORTED]
    errors = [e for r in results for e in r.pop("errors")][:MAX_REPORTED]
    report = merge_counts(results) if results else {"checked": 0, "matched": 0, "mismatch_count": 0, "error_count": 0}
    report.update(mismatches=sorted(mismatches, key=lambda m: m["id"]), errors=sorted(errors, key=lambda e: e["id"]),
                  sample_files=len(sample_files), seconds=time.perf_counter() - started)
    report["ok"] = report.get("mismatch_count", 0) == 0 and report.get("error_count", 0) == 0
    return report


def files_of(path: Path) -> tuple[list[str], list[str]]:
    """Sample and table files under a release folder (any depth): samples are the Parquet files
    named so or kept under a `samples` folder; tables are the files of Table records
    (`tables.parquet`, `part-N.tables.parquet`), not the serialized texts beside them. A release
    (a folder with SHA256SUMS) gives only its listed files (`curate.curation.release_files`)."""
    from curate.curation.release_files import CHECKSUMS, TABLE_RECORDS

    if (path / CHECKSUMS).exists() or (path / CHECKSUMS).is_symlink():
        from curate.curation.release_files import open_release

        listed = open_release(path, check_hashes=False)
        tables = [f"tables/{TABLE_RECORDS}"] if listed.has(f"tables/{TABLE_RECORDS}") else []
        return [str(p) for p in listed.sample_files()], [str(listed.path(rel)) for rel in tables]
    samples = sorted(str(p) for p in path.rglob("*.parquet")
                     if "sample" in p.name or "samples" in p.relative_to(path).parts)
    tables = sorted(str(p) for p in path.rglob("*.parquet") if "table" in p.name and str(p) not in samples)
    return samples, tables


@stage("verify", outputs=("verdicts",), inputs={"samples": ("imported", "<samples"),
                                                "tables": ("imported", "clean", "rules")}, latest=("samples",))
class VerifyStage(Stage):
    """The `verify` stage: every program of the selected samples re-run, one verdict per sample.

    Inputs: the first holds the samples; the tables of every input, in order (a later copy of a
    table wins, as in `curate verify`), resolve the samples' table ids.
    """

    version = "1"

    report_type = VerifyReport

    def plan(self, config: dict[str, Any], inputs: list[Dataset]) -> Plan:
        if config:
            raise ValueError(f"[verify] takes no settings, got {', '.join(sorted(config))}")
        sample_files = [str(p) for p in inputs[0].files("samples")] if inputs else []
        table_files = [str(p) for d in inputs for p in d.files("tables")]
        tasks, weights = [], []
        for path in sample_files:
            n = pq.ParquetFile(path).metadata.num_rows
            for start in range(0, n, SAMPLES_PER_TASK):
                tasks.append((path, start, min(n, start + SAMPLES_PER_TASK)))
                weights.append(float(min(n, start + SAMPLES_PER_TASK) - start))
        return Plan(tasks=tasks, shared={"index": table_index(table_files)}, weights=weights)

    def run_part(self, task: tuple[str, int, int], shared: dict[str, Any], config: dict[str, Any]):
        import pyarrow as pa

        verdicts: list[tuple[str, str, str]] = []
        summary = verify_part(*task, shared["index"], 1.0, verdicts)
        schema = pa.schema([("id", pa.string()), ("verdict", pa.string()), ("detail", pa.string())])
        table = pa.Table.from_pylist([{"id": i, "verdict": v, "detail": d} for i, v, d in verdicts], schema=schema)
        return {"verdicts": table}, summary

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        mismatches = sorted((m for s in summaries for m in s["mismatches"]), key=lambda m: m["id"])[:MAX_REPORTED]
        errors = sorted((e for s in summaries for e in s["errors"]), key=lambda e: e["id"])[:MAX_REPORTED]
        report = merge_counts([{k: v for k, v in s.items() if k not in ("mismatches", "errors")} for s in summaries])
        report.update(mismatches=mismatches, errors=errors)
        report["ok"] = report.get("mismatch_count", 0) == 0 and report.get("error_count", 0) == 0
        return report


def run_verify(path: str, executor: Any = None, show_progress: bool = False,
               fraction: float = 1.0) -> dict[str, Any]:
    """Re-run every stored program of a workspace (or a release folder) and compare answers."""
    from pathlib import Path

    from curate.curation.progress import progress_bars
    from curate.curation.workspace import Workspace

    root = Path(path)
    workspace = Workspace(root)
    if workspace.exists():
        from curate.curation.commands import sample_datasets
        from curate.curation.pipeline import PIPELINE_ORDER

        # in pipeline order (as declared): a later stage's copy of a table (with its cleaning marks) wins

        stages = sorted(workspace.state()["current"],
                        key=lambda s: PIPELINE_ORDER.index(s) if s in PIPELINE_ORDER else len(PIPELINE_ORDER))
        datasets = [d for stage in stages for d in workspace.current(stage)]
        sample_files = [str(p) for d in sample_datasets(workspace) for p in d.files("samples")]
        table_files = [str(p) for d in datasets for p in d.files("tables")]
    elif root.is_dir():
        sample_files, table_files = files_of(root)
    else:
        raise SystemExit(f"{path}: neither a workspace nor a release folder")
    if not sample_files:
        raise SystemExit(f"{path}: no samples to verify (run `curate generate rules` first)")
    with progress_bars(show_progress) as bars:
        report = verify(sample_files, table_files, executor, fraction, bars)
    report["path"] = path
    return report

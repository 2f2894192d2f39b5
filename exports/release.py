"""Versioned, immutable benchmark releases: `releases/<name>/<version>/`.

    manifest.json                    version, fingerprint, parent, build config, stage signatures,
                                     models, seed, counts, package versions, git commit
    README.md                        the dataset card; its YAML header tells Hugging Face `datasets`
                                     which files make which config and split
    samples/<task>/<split>.parquet   the samples of one task (Hugging Face loads these)
    samples/<task>/<split>.jsonl     the same samples as JSON Lines (answers as JSON values)
    tables/tables.parquet            every table the samples use, typed bodies included
    tables/<format>.parquet          each table serialized (ToRR's seven formats plus LaTeX)
    tables/retrieval_pool.json       every database.table retrieval samples choose from, with its columns
    diff.json                        samples added, removed and changed against the parent, by id
    SHA256SUMS                       the SHA-256 of every other file (`sha256sum -c` reads it)

The **fingerprint** hashes the content, not the bytes of a particular writer: the samples' JSON
Lines files, the serialized texts, the retrieval pool and the tables' content hashes. The same samples
and tables give the same fingerprint whatever machine or Parquet writer made them.

A release is written into a hidden temporary folder and renamed into place, so a killed build
leaves no half-written version; an existing version is never written again, and its files are
made read-only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from curation.config import with_defaults
from curation.pipeline.store import atomic_write_json

MANIFEST, CARD, CHECKSUMS, DIFF = "manifest.json", "README.md", "SHA256SUMS", "diff.json"
SEMVER = re.compile(r"(\d+)\.(\d+)\.(\d+)")  # used with fullmatch: "1.0.0\n" is not a version
RELEASE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
DEFAULT_SERIALIZATION, DEFAULT_PERTURBATION = "markdown", "none"
DEFAULTS: dict[str, Any] = {"name": "curate-rdatasets", "version": "", "serializations": [],
                            "max_serialized_cells": 50_000, "description": ""}
ANSWER_EXAMPLES = 1000  # samples whose gold changed, each listed by `curate diff`
DIFF_EXAMPLES = 10
SERIALIZE_CHUNK = 250  # tables per worker task
TABLE_RECORDS = "tables.parquet"


def _serialized_schema() -> Any:
    import pyarrow as pa

    return pa.schema([("table_id", pa.string()), ("name", pa.string()), ("text", pa.string())])


class ReleaseExists(RuntimeError):
    """Writing to a version that exists: releases are immutable."""


class ReleaseBusy(RuntimeError):
    """Another build is writing a release of the same name."""


def settings(config: dict[str, Any]) -> dict[str, Any]:
    from exports.serialize import FORMATS

    out = with_defaults("release", config, DEFAULTS)
    out["serializations"] = list(out["serializations"] or FORMATS)
    bad = [f for f in out["serializations"] if f not in FORMATS]
    if bad:
        raise ValueError(f"[release] serializations: unknown {', '.join(bad)}; known: {', '.join(FORMATS)}")
    if out["version"] and not (isinstance(out["version"], str) and SEMVER.fullmatch(out["version"])):
        raise ValueError(f"[release] version must be MAJOR.MINOR.PATCH, got {out['version']!r}")
    if not (isinstance(out["name"], str) and RELEASE_NAME.fullmatch(out["name"])):
        raise ValueError(f"[release] name {out['name']!r}: use letters, digits, '.', '_' and '-'")
    return out


def task_slug(task: str) -> str:
    """A task key as a folder and config name: `TCO/general_operations` -> `TCO-general_operations`."""
    return task.replace("/", "-")


def versions(folder: Path) -> list[str]:
    """The complete versions of one release name, oldest first."""
    if not folder.is_dir():
        return []
    found = [p.name for p in folder.iterdir() if SEMVER.fullmatch(p.name) and (p / MANIFEST).exists()]
    return sorted(found, key=lambda v: tuple(int(x) for x in v.split(".")))


def next_version(parent: str | None, diff: dict[str, Any]) -> str:
    """Semantic versions for data: a sample removed or changed breaks comparability (major), samples
    only added extend it (minor), anything else (tables, card) is a patch."""
    if parent is None:
        return "1.0.0"
    major, minor, patch = (int(x) for x in parent.split("."))
    if diff["removed"] or diff["changed"]:
        return f"{major + 1}.0.0"
    if diff["added"]:
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def read_manifest(path: Path) -> dict[str, Any]:
    return json.loads((path / MANIFEST).read_text())


# ------------------------------------------------------------------------------ inputs


@dataclass
class ReleaseInputs:
    """What the build hands the writer: files of the pipeline's datasets and what made them."""

    sample_files: list[str]
    table_files: list[str]  # in pipeline order: a later copy of a table wins
    derived_table_files: list[str] = field(default_factory=list)  # those of them a generator made (the card counts them)
    retrieval_pool: dict[str, list[str]] = field(default_factory=dict)  # database.table -> its columns
    build: dict[str, Any] = field(default_factory=dict)  # config, seed, signature, stages, models
    reports: dict[str, Any] = field(default_factory=dict)  # stage name -> report, for the card


# ------------------------------------------------------------------------------ writing


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

    from curation.sample import ReviewState

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
        (staging / CARD).write_text(dataset_card(manifest, inputs.reports, diff))
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

    from curation.arrow_io import TABLE_SCHEMA
    from curation.pipeline.executor import LocalExecutor
    from curation.pipeline.store import write_parquet

    wanted = set(_read_ids(out))
    chosen: dict[str, pa.Table] = {}
    derived: set[str] = set()  # copies a generator made: headers hidden, anomalies injected
    made = set(inputs.derived_table_files)
    for path in inputs.table_files:
        data = pq.read_table(path)
        ids = data.column("id").to_pylist()
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
    return {"tables": records.num_rows, "derived_tables": len(derived), "missing": missing,
            "not_serialized": too_large, "serialization_errors": failed,
            "sources": [{"source": k[0], "licence": k[1], "tables": n} for k, n in sorted(sources.items())],
            "packages": dict(sorted(packages.items())), "column_roles": dict(sorted(roles.items()))}


def serialize_chunk(path: str, start: int, stop: int, formats: list[str], max_cells: int) -> dict[str, Any]:
    """Serialize tables[start:stop] of a table file in every format (a worker task)."""
    import pyarrow.parquet as pq

    from curation.arrow_io import tables_from_arrow
    from exports.serialize import serialize

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


FORMAT = 2  # 2: the fingerprint also covers the samples' Parquet files and the tables' bodies


def content_fingerprint(path: Path, scheme: int = FORMAT) -> str:
    """Hash of the content: every file but the manifest, the card, the diff and the checksums
    (which describe the content; `check_files` holds them against it). Parquet files are hashed by
    what they hold, read back row by row, so the writer's bytes do not matter: the same samples and
    tables give the same fingerprint on any machine. Scheme 1 (releases of format 1) left out the
    samples' Parquet and trusted the tables' stored content hashes."""
    import pyarrow.parquet as pq

    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        rel = p.relative_to(path).as_posix()
        if p.is_file() and (p.suffix == ".jsonl" or p.name == "retrieval_pool.json"):
            h.update(f"{rel}\x00{sha256_file(p)}\n".encode())
        elif scheme >= 2 and p.is_file() and p.suffix == ".parquet" and rel.startswith("samples/"):
            h.update(f"{rel}\x00{_rows_digest(pq.read_table(p))}\n".encode())
    tables = path / "tables"
    if (tables / TABLE_RECORDS).exists():
        if scheme >= 2:
            for table_id, digest, metadata in _table_records(tables / TABLE_RECORDS):
                h.update(f"table\x00{table_id}\x00{digest}\x00{metadata}\n".encode())
        else:
            data = pq.read_table(tables / TABLE_RECORDS, columns=["id", "content_hash"])
            for table_id, digest in zip(data.column("id").to_pylist(), data.column("content_hash").to_pylist()):
                h.update(f"table\x00{table_id}\x00{digest}\n".encode())
    for p in sorted(tables.glob("*.parquet")) if tables.is_dir() else []:
        if p.name == TABLE_RECORDS:
            continue
        data = pq.read_table(p, columns=["table_id", "text"])
        h.update(f"serialized\x00{p.name}\n".encode())
        for table_id, text in zip(data.column("table_id").to_pylist(), data.column("text").to_pylist()):
            h.update(f"{table_id}\x00{len(text)}\x00".encode() + text.encode())
    return h.hexdigest()[:16]


def _rows_digest(data: Any) -> str:
    """What a Parquet file holds, row by row, as canonical JSON."""
    h = hashlib.sha256()
    for batch in data.to_batches(max_chunksize=4096):
        for row in batch.to_pylist():
            h.update(json.dumps(row, sort_keys=True, default=str, ensure_ascii=False).encode())
            h.update(b"\n")
    return h.hexdigest()


def _table_records(path: Path) -> Iterator[tuple[str, str, str]]:
    """Each table's id and content hash computed again from its header and body (not the stored
    ones, which an edit of the body would leave as they were), and its other fields as JSON."""
    import pyarrow.parquet as pq

    from curation.arrow_io import body_from_bytes
    from curation.table import HeaderNode, table_content_hash

    data = pq.read_table(path)
    for batch in data.to_batches(max_chunksize=256):
        for row in batch.to_pylist():
            header = tuple(HeaderNode(**n) for n in row["header"])
            digest = table_content_hash(header, body_from_bytes(row["body"]))
            metadata = {k: v for k, v in row.items() if k not in ("body", "id", "content_hash")}
            yield row["id"], digest, json.dumps(metadata, sort_keys=True, default=str, ensure_ascii=False)


def write_checksums(path: Path) -> None:
    lines = [f"{sha256_file(p)}  {p.relative_to(path).as_posix()}"
             for p in sorted(path.rglob("*")) if p.is_file() and p.name != CHECKSUMS]
    (path / CHECKSUMS).write_text("\n".join(lines) + "\n")


# ------------------------------------------------------------------------------ manifest and card


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

    from exports.perturb import PERTURBATIONS

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
                   "tables_missing": tables["missing"], "column_roles": tables["column_roles"]},
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


def _yaml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid YAML scalar


def dataset_card(manifest: dict[str, Any], reports: dict[str, Any], diff: dict[str, Any]) -> str:
    """README.md: the Hugging Face header (configs, licence) and a card a reader can trust."""
    from curation.taxonomy import tasks

    taxonomy = tasks()
    counts = manifest["counts"]
    splits = sorted(counts["by_split"])
    lines = ["---", f"pretty_name: {_yaml_string(manifest['name'])}", "license: other",
             "task_categories:", "- table-question-answering", "configs:"]
    lines += ["- config_name: default", "  data_files:"]
    for split in splits:
        lines += [f"  - split: {split}", f"    path: samples/*/{split}.parquet"]
    for task_key, by_split in sorted(counts["by_task_split"].items()):
        slug = task_slug(task_key)
        lines += [f"- config_name: {slug}", "  data_files:"]
        for split in sorted(by_split):
            lines += [f"  - split: {split}", f"    path: samples/{slug}/{split}.parquet"]
    for fmt in manifest["table_configurations"]["serializations"]:
        lines += [f"- config_name: tables-{fmt}", "  data_files:", "  - split: tables", f"    path: tables/{fmt}.parquet"]
    lines += ["---", ""]
    name, version = manifest["name"], manifest["version"]
    lines += [f"# {name} {version}", ""]
    if manifest.get("description"):
        lines += [manifest["description"], ""]
    imported = manifest["build"].get("import")
    lines += [(f"{counts['samples']:,} samples over {counts['tables']:,} tables of {imported['benchmark']}, imported "
               f"by `curate import {imported['format']}` from its published files: questions and gold answers as "
               "their authors published them, each sample keeping the benchmark's own id "
               "(`provenance.source_id`)." if imported else
               f"{counts['samples']:,} table-reasoning samples over {counts['tables']:,} tables, built by "
               "curate from real tables and databases. Every gold answer was computed by "
               "executing a program (DuckDB SQL or a reasoning chain) that ships with the sample, and was "
               "re-executed before release."), "",
              f"- fingerprint: `{manifest['fingerprint']}`",
              f"- parent: {manifest['parent']['version'] + ' (`' + manifest['parent']['fingerprint'] + '`)' if manifest['parent'] else 'none (first version)'}",
              f"- seed: {manifest['seed']}; built with curate at commit `{manifest['environment']['git_commit'] or 'unknown'}`",
              "", "## Loading", "", "```python", "import datasets",
              f"samples = datasets.load_dataset(\"path/to/{name}/{version}\")            # every task",
              f"one_task = datasets.load_dataset(\"path/to/{name}/{version}\", \"{manifest['configs'][0]}\")",
              f"tables = datasets.load_dataset(\"path/to/{name}/{version}\", \"tables-markdown\")",
              "```", "",
              "`answer` holds the gold answer as JSON text (numbers, text, lists and result tables share the "
              "column); the `.jsonl` files hold it as a JSON value. `program` holds what computes it. Tables "
              "are in `tables/tables.parquet` (typed bodies as Arrow IPC) and serialized in "
              f"`tables/<format>.parquet` ({', '.join(manifest['table_configurations']['serializations'])}).", ""]

    def table(title: str, header: list[str], rows: list[list[Any]]) -> None:
        lines.extend([f"### {title}", "", "| " + " | ".join(header) + " |", "|" + " --- |" * len(header)])
        lines.extend("| " + " | ".join(str(c) for c in row) + " |" for row in rows)
        lines.append("")

    lines += ["## Contents", ""]
    by_skill: dict[str, int] = {}
    for task_key, n in counts["by_task"].items():
        t = taxonomy.get(task_key)
        skill = (t.skill if t.skill == t.benchmark else f"{t.benchmark} {t.skill}") if t else "unknown"
        by_skill[skill] = by_skill.get(skill, 0) + n
    table("By skill", ["skill", "samples"], [[k, f"{v:,}"] for k, v in sorted(by_skill.items())])
    table("By task", ["task", "samples", "answer types", "metric"],
          [[k, f"{v:,}", ", ".join(taxonomy[k].answer_types or (taxonomy[k].answer_type,)) if k in taxonomy else "",
            taxonomy[k].metric if k in taxonomy else ""] for k, v in counts["by_task"].items()])
    table("By quality", ["quality", "samples"], [[k or "(none)", f"{v:,}"] for k, v in counts["by_quality"].items()])
    table("By origin", ["origin", "samples"], [[k, f"{v:,}"] for k, v in counts["by_origin"].items()])
    table("By split", ["split", "samples"], [[k, f"{v:,}"] for k, v in counts["by_split"].items()])

    if imported:
        lines += _card_import(imported, manifest["build"].get("corrected"), reports.get("errata"))
    else:
        lines += _card_built(manifest, reports)
    lines += ["## Sources and licences", ""]
    table("Tables by source", ["source", "licence", "tables"],
          [[r["source"], r["licence"] or "not stated by the source", r["tables"]] for r in manifest["sources"]])
    if manifest.get("packages"):
        lines += ["Each R package's data keeps its package's licence (as published on CRAN; rdatasets does not "
                  "record it): cite and license each table as its package does. The source tables by package:", ""]
        table("Source tables by package", ["package", "tables"],
              [[k.split(":", 1)[-1], v] for k, v in manifest["packages"].items()])
    changes = diff["samples"]
    lines += ["## Changes", "",
              (f"Against {diff['old']['version']}: {changes['added']:,} samples added, {changes['removed']:,} "
               f"removed, {changes['changed']:,} changed (see `diff.json`)." if diff.get("old", {}).get("version")
               else "First version."), "",
              "## Checking this release", "", "```bash",
              f"curate release verify {name}/{version}   # checksums, then every program re-executed", "```", ""]
    return "\n".join(lines)


def _card_built(manifest: dict[str, Any], reports: dict[str, Any]) -> list[str]:
    """How a built release was made: its stages, human review, questions, scoring and counts."""
    lines = _card_database_shares(reports.get("select", {}).get("database_share", {}))
    lines += ["## Method", ""]
    stages = manifest["build"].get("stages", {})
    for stage, info in stages.items():
        lines.append(f"- **{stage}** (`{info.get('dataset', '')}`): {_stage_line(stage, reports.get(stage, {}))}")
    lines += ["", "Quality labels: `rule-based` (a template's executed answer), `executed` (an executed SQL "
              "query), `declared-keys` / `inferred-keys` (key selection, by where the keys came from), "
              "`human-annotated` (accepted or fixed by annotators).", ""]
    rejected = reports.get("review", {}).get("rejected", [])
    if rejected:
        lines += ["### Removed by human review", "", "| sample | task | reasons | annotators |", "| --- | --- | --- | --- |"]
        lines += [f"| {r['id']} | {r['task']} | {'; '.join(r['reasons'])} | {', '.join(r['annotators'])} |"
                  for r in rejected]
        lines.append("")
    lines += _card_method(manifest, reports)
    return lines


def _card_import(imported: dict[str, Any], corrected: dict[str, Any] | None = None,
                 errata: dict[str, Any] | None = None) -> list[str]:
    """Where an imported release came from (every file with its sha256 and licence), the errata of a
    corrected one (`curate build RELEASE`), and how its authors score it (the official profile
    `curate evaluate` applies by default)."""
    lines = ["## Method", "",
             f"Imported with `curate import {imported['format']}` (importer version {imported['importer_version']}). "
             f"Citation: {imported['citation']}.", ""]
    if corrected:
        lines += [f"Corrected from version {corrected['from']['version']} (`{corrected['from']['fingerprint']}`) by "
                  "`curate build`: gold answers that `curate audit` found suspect were checked by annotators in "
                  "Label Studio; a confirmed or corrected gold replaces the published one (kept in "
                  "`provenance.gold_before_review`), a question marked ambiguous leaves the release.", ""]
    lines += [f"- {note}" for note in imported.get("notes", [])]
    lines += ["", "### Source files", "", "| file | sha256 | licence |", "| --- | --- | --- |"]
    lines += [f"| {s['path']} | `{s['sha256']}` | {s['licence']} |" for s in imported["sources"]]
    if errata is not None:
        def cell(v: Any) -> str:
            text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            return text.replace("|", "\\|").replace("\n", " ")[:200]

        lines += ["", "## Errata", "",
                  f"{len(errata['corrected'])} gold answers corrected, {len(errata['removed'])} samples removed, "
                  f"{len(errata['confirmed'])} audit findings checked and the published gold kept.", ""]
        if errata["corrected"]:
            lines += ["### Corrected gold answers", "",
                      "| source id | sample | task | question | published gold | corrected gold | by | finding |",
                      "| --- | --- | --- | --- | --- | --- | --- | --- |"]
            lines += [f"| {e['source_id']} | {e['id']} | {e['task']} | {cell(e['question'])} | {cell(e['gold_before'])} "
                      f"| {cell(e['gold'])} | {e['by']} | {e['finding'] or '-'} |" for e in errata["corrected"]]
            lines.append("")
        if errata["removed"]:
            lines += ["### Removed", "", "| source id | sample | task | question | published gold | reasons | finding |",
                      "| --- | --- | --- | --- | --- | --- | --- |"]
            lines += [f"| {e['source_id']} | {e['id']} | {e['task']} | {cell(e['question'])} | {cell(e['gold'])} | "
                      f"{cell('; '.join(e['reasons']))} | {e['finding'] or '-'} |" for e in errata["removed"]]
            lines.append("")
        if errata["confirmed"]:
            lines += ["### Checked, the published gold kept", "", "| source id | sample | gold | finding |",
                      "| --- | --- | --- | --- |"]
            lines += [f"| {e['source_id']} | {e['id']} | {cell(e['gold'])} | {e['finding'] or '-'} |"
                      for e in errata["confirmed"]]
            lines.append("")
    lines += ["", "## How answers are scored", "",
              f"`curate evaluate` scores this release with the benchmark's official metrics, reproduced from its "
              f"authors' evaluation code (profile `{imported['profile']}`), and beside them with curate's own "
              "metric per task (the task table); where the official code has a known defect both numbers are "
              "reported, never one for the other. `curate evaluate --backend gold` answers every sample with its "
              "own gold and must score 1.000 under curate's metrics.", "",
              "## Limitations", "",
              ("- The gold answers are the authors', but for the errata above." if errata is not None else
               "- The gold answers are the authors'; curate did not re-compute them (`curate audit` looks for wrong "
               "ones)."), ""]
    return lines


def _card_database_shares(share: dict[str, Any]) -> list[str]:
    """Each database's share of the multi-table samples, and the cap that bounds it."""
    by_task = share.get("by_database", {})
    if not by_task:
        return []
    totals: dict[str, int] = {}
    for counts in by_task.values():
        for db, n in counts.items():
            totals[db or "(none)"] = totals.get(db or "(none)", 0) + n
    whole = sum(totals.values())
    limits = share.get("per_database_limit", {})
    lines = ["### Multi-table samples by database", "",
             f"No database gives more than {share.get('max', 0):.0%} of a multi-table task's samples "
             f"({', '.join(share.get('tasks', []))}; with fewer databases than that share allows, an even split "
             "among them); the most one database gives per task: "
             + ", ".join(f"{t} {n:,}" for t, n in sorted(limits.items())) + ".", "",
             "| database | samples | share |", "| --- | --- | --- |"]
    lines += [f"| {db} | {n:,} | {n / whole:.1%} |" for db, n in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))]
    return lines + [""]


def _card_method(manifest: dict[str, Any], reports: dict[str, Any]) -> list[str]:
    """How questions were made, what a model is shown, how answers score, what to keep in mind,
    and counts that add up."""
    counts = manifest["counts"]
    verify = reports.get("verify", {})
    checked = verify.get("checked", 0)
    derived = counts.get("derived_tables", 0)
    roles = counts.get("column_roles", {})
    configs = manifest["table_configurations"]
    default = configs.get("default", {})
    role_text = ", ".join(f"{k} {v:,}" for k, v in sorted(roles.items(), key=lambda kv: -kv[1])) or "none recorded"
    lines = [
        "## How the questions were made", "",
        "Every question comes from a template (`generators/rules/templates/*.toml`, or MMQA's SQL templates) "
        "applied to one cleaned table or one database, and its gold answer is what the sample's program "
        "returns. Before a template asks anything, each column's role is inferred from its values, its name "
        "and its documentation (an R help page's Format section): only measures and counts are summed, "
        "averaged, compared, correlated or tested; codes and flags filter and group; row indices and "
        "identifiers are never asked about and never the answer; a row is named by its natural key (a "
        "name, or a unique year). A column is named by its documented label with its header, e.g. "
        "\"per capita crime rate (`crim`)\". Thresholds are rounded to 3 significant figures and the gold "
        "is computed with the rounded value. Candidates whose answer is ambiguous or says nothing are "
        "rejected and counted by reason in the rules report (ties, empty filters, a filter that leaves the "
        "answer unchanged, a target fixed by the filter, a variable tested against itself, totals of rates, "
        "correlation matrices read as data). Every convention a question depends on is in the question: "
        "rounding, the group a test statistic is computed for, the decision's words, list order.", "",
        f"Column roles over the source tables: {role_text}.", "",
        "## What the model is shown", "",
        f"Each sample names its tables by id; the release serializes every table in "
        f"{', '.join(configs['serializations'])} (default {default.get('serialization', 'markdown')}), with its "
        "caption, and hierarchical headers as merged cells in HTML and LaTeX. "
        f"{derived:,} of the {counts['tables']:,} tables are **derived** copies a template made and the sample "
        "is asked over: the table with its headers hidden (column naming) or with outliers injected into one "
        "column (anomaly detection). A derived table carries its source's name; its values differ only as "
        "described. "
        "`curate evaluate` puts each table in the prompt up to 30,000 characters (`max_table_chars`), and "
        "rule questions are asked only of tables whose markdown fits, so the model sees every row they ask "
        "about; tables of MMQA's databases can be longer and are cut there (the first 2,000 rows, then the "
        "character budget). "
        f"Tables over {configs.get('max_serialized_cells', 0):,} cells are not serialized in the release "
        f"({len(configs.get('not_serialized', [])):,} here); they are in the typed records of "
        "`tables/tables.parquet`. A multi-table question that needs such a table is released only where the "
        "contents are not needed: as text-to-SQL (the SQL is written from the schema) and selection of declared "
        "keys (inferred keys are asked only of tables shown whole: uniqueness is a property of every row); "
        f"{reports.get('sql', {}).get('queries_over_unserialized_tables', 0):,} of the generated SQL queries were of "
        "that kind, before selection (`provenance.not_serialized` names the tables).", "",
        "## How answers are scored", "",
        "`curate evaluate` extracts the final answer and scores it with the task's metric (see the task table): "
        "`exact_match` (equal after normalisation: 42 = \"42.0\", case and spacing ignored, lists in any "
        "order), `numeric_match` (numbers within 1% of the gold, item by item for lists such as [statistic, "
        "p-value, decision]), `set_f1` (the answer's items as a set), `retrieval_prf_at_k`, `key_selection` "
        "and `execution_match` (MMQA). A list answer is given as a JSON list when an item holds a comma. "
        "`curate evaluate --backend gold` answers every sample with its own gold and must score 1.000.", "",
        "## Counts", "",
        f"- {counts['samples']:,} samples; the verify stage re-executed {checked:,} programs (SQL and reasoning "
        f"chains) to their gold; the other {max(0, counts['samples'] - checked):,} samples' golds are read from "
        "a table's own metadata (a hidden header, declared or inferred keys) by a metadata program.",
        f"- {counts['tables']:,} tables: {counts['tables'] - derived:,} source tables the samples use (of the "
        f"{reports.get('clean', {}).get('kept', 0):,} cleaning kept) and {derived:,} derived copies.", "",
        "## Limitations", "",
        "- Questions are written by templates: they are exact and checkable, but plainer than a person's "
        "wording; a model may rephrase them (the LLM stages) without changing the program.",
        "- Column roles are inferred; a code without documentation can still be read as a quantity, and a "
        "label is the first clause of its documentation.",
        "- Multi-table (MMQA) databases of the R corpus are assembled by key inference within one R package: "
        "a foreign key needs every value found in the key it references (a handful of exceptions at most, "
        "named in its evidence), no dates or row numbers join tables, and a generic column such as a country "
        "joins only one dataset's tables or a table about that entity. Inferred keys remain inferences.",
        "- Gold answers are exact for the tables as released; they are not checked against the world.", "",
    ]
    return lines


def _stage_line(stage: str, report: dict[str, Any]) -> str:
    if stage == "ingest":
        return f"{report.get('tables', 0):,} tables and {report.get('databases', 0):,} databases read"
    if stage == "clean":
        return f"TReB's cleaning rules kept {report.get('kept', 0):,} of {report.get('tables_in', 0):,} tables"
    if stage == "rules":
        return (f"{report.get('samples', 0):,} rule-based QA pairs and reasoning chains from templates, gold answers "
                "by execution; ambiguous candidates rejected")
    if stage == "sql":
        return (f"{report.get('queries', 0):,} multi-table SQL queries kept of {report.get('candidates', 0):,} "
                f"candidates, {report.get('samples', 0):,} MMQA samples")
    if stage == "select":
        dropped = report.get("dropped", {})
        near = sum(d.get("near_duplicate", 0) for d in dropped.values())
        over = sum(d.get("over_cap", 0) for d in dropped.values())
        over_share = sum(d.get("over_database_share", 0) for d in dropped.values())
        cap = report.get("settings", {}).get("max_per_task", 0)
        share = report.get("settings", {}).get("max_database_share")
        return (f"{report.get('samples', 0):,} samples selected; {near:,} near-duplicate questions dropped"
                + (f", {over:,} over the cap of {cap:,} per task (spread evenly over templates)" if cap else "")
                + (f", {over_share:,} over a database's share of {share:.0%} of a multi-table task" if share else ""))
    if stage == "vote":
        agreement = ", ".join(f"{k} {v:,}" for k, v in sorted(report.get("agreement", {}).items()))
        how = ("RealHiTBench's frequency x judge score" if report.get("method") == "realhitbench"
               else "TReB's table")
        return (f"{report.get('voted', 0):,} samples no rule computed were answered by three models and decided by "
                f"{how} ({agreement or 'none'}); {report.get('replaced', 0):,} gold answers replaced, "
                f"{report.get('queued', 0):,} queued for human review")
    if stage == "phrase":
        return (f"{report.get('samples', 0):,} of {report.get('tried', 0):,} SQL samples phrased as natural questions by "
                "a model (MMQA), each still naming every value its query compares against")
    if stage == "questions":
        return (f"{report.get('samples', 0):,} questions written by a model from RealHiTBench's per-type prompts over "
                f"{report.get('tables', 0):,} tables; their answers are candidate golds for the vote and a human check")
    if stage == "classify":
        return (f"{report.get('checked', 0):,} questions classified into the task taxonomy by a model (TReB): "
                f"{report.get('agrees', 0):,} agree with their task, {report.get('disagrees', 0):,} queued for review, "
                f"{report.get('relabelled', 0):,} relabelled")
    if stage == "adversarial":
        return (f"{report.get('samples', 0):,} of {report.get('chains', 0):,} reasoning chains got LLM-written long and "
                "short questions that a discriminator passed (TReB's generator/discriminator loop)")
    if stage == "review":
        applied = report.get("applied", {})
        line = (f"human review in Label Studio: {applied.get('accept', 0):,} samples accepted, {applied.get('fix', 0):,} "
                f"gold answers fixed (the old one kept in provenance), {applied.get('reject', 0):,} samples rejected")
        waiting = report.get("open", 0) + report.get("queued_not_pushed", 0)
        if report.get("required"):
            return line + f"; review required: {report.get('held_back', 0):,} samples still waiting were held back"
        return line + (f"; {waiting:,} samples still waiting for review are included as they were" if waiting else "")
    if stage == "verify":
        return (f"{report.get('matched', 0):,} of {report.get('checked', 0):,} programs re-executed to their gold "
                f"answer ({report.get('mismatch_count', 0)} mismatches, {report.get('error_count', 0)} errors"
                + (f"; {report['human_fixed']:,} gold answers fixed by annotators differ from their program"
                   if report.get("human_fixed") else "") + ")")
    if stage == "contracts":
        passed = sum(1 for e in report.get("expectations", []) if e["success"])
        return f"{passed} of {len(report.get('expectations', []))} data-contract expectations met (Great Expectations)"
    return ""


# ------------------------------------------------------------------------------ diff


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
    from curation.pipeline import PIPELINE_ORDER

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


# ------------------------------------------------------------------------------ verify


def check_files(path: str) -> dict[str, Any]:
    """The file half of `curate release verify`: every checksum, no file unlisted, the fingerprint."""
    root = Path(path)
    if not (root / CHECKSUMS).exists() or not (root / MANIFEST).exists():
        raise SystemExit(f"{path}: not a release folder (no {CHECKSUMS} or {MANIFEST})")
    listed: dict[str, str] = {}
    malformed: list[str] = []
    for line in (root / CHECKSUMS).read_text().splitlines():
        digest, sep, rel = line.partition("  ")
        if not sep or len(digest) != 64:
            malformed.append(line)
            continue
        listed[rel] = digest
    changed, missing = [], []
    for rel, digest in sorted(listed.items()):
        p = root / rel
        if not p.is_file():
            missing.append(rel)
        elif sha256_file(p) != digest:
            changed.append(rel)
    present = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name != CHECKSUMS}
    unlisted = sorted(present - set(listed))
    manifest = read_manifest(root)
    fingerprint = content_fingerprint(root, int(manifest.get("format", 1)))
    inconsistent = _inconsistent(root, manifest)
    ok = not (changed or missing or unlisted or malformed or inconsistent) and fingerprint == manifest["fingerprint"]
    return {"path": path, "name": manifest.get("name"), "version": manifest.get("version"), "files": len(listed),
            "changed": changed, "missing": missing, "unlisted": unlisted, "malformed_lines": malformed[:5],
            "inconsistent": inconsistent,
            "fingerprint": {"manifest": manifest["fingerprint"], "computed": fingerprint}, "ok": ok}


def _inconsistent(root: Path, manifest: dict[str, Any]) -> list[str]:
    """The files that describe the content (card, diff), held against the manifest; the manifest's
    counts held against the samples."""
    found = []
    card = (root / CARD).read_text(errors="replace") if (root / CARD).exists() else ""
    if f"`{manifest['fingerprint']}`" not in card or str(manifest.get("version")) not in card:
        found.append(f"{CARD}: does not name the manifest's fingerprint {manifest['fingerprint']} and version")
    if (root / DIFF).exists():
        try:
            new = json.loads((root / DIFF).read_text()).get("new", {})
        except ValueError:
            new = {}
        if new.get("fingerprint") != manifest["fingerprint"] or new.get("version") != manifest.get("version"):
            found.append(f"{DIFF}: its new version is not the manifest's ({new.get('version')}, {new.get('fingerprint')})")
    counted = _count_samples(root)
    if counted is not None and counted != manifest.get("counts", {}).get("samples", counted):
        found.append(f"{MANIFEST}: counts {manifest['counts']['samples']} samples, the files hold {counted}")
    return found


def _count_samples(root: Path) -> int | None:
    import pyarrow.parquet as pq

    files = sorted((root / "samples").rglob("*.parquet")) if (root / "samples").is_dir() else []
    try:
        return sum(pq.ParquetFile(p).metadata.num_rows for p in files)
    except Exception:  # noqa: BLE001 - an unreadable file is reported by its checksum and the fingerprint
        return None

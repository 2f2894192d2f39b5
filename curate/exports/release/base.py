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
    tables/retrieval_keys.json       the column key of each pool table that has one ([[column, label], ...])
    diff.json                        samples added, removed and changed against the parent, by id
    SHA256SUMS                       the SHA-256 of every other file (`sha256sum -c` reads it)

The **fingerprint** hashes the content, not the bytes of a particular writer: the samples' JSON
Lines files, the serialized texts, the retrieval pool and its keys and the tables' content hashes. The same samples
and tables give the same fingerprint whatever machine or Parquet writer made them.

A release is written into a hidden temporary folder and renamed into place, so a killed build
leaves no half-written version; an existing version is never written again, and its files are
made read-only.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from curate.curation.config import with_defaults
from curate.curation.release_files import CHECKSUMS, TABLE_RECORDS, sha256_file  # noqa: F401 (part of this module's API)


MANIFEST, CARD, DIFF = "manifest.json", "README.md", "diff.json"


SEMVER = re.compile(r"(\d+)\.(\d+)\.(\d+)")  # used with fullmatch: "1.0.0\n" is not a version


RELEASE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


DEFAULT_SERIALIZATION, DEFAULT_PERTURBATION = "markdown", "none"


DEFAULTS: dict[str, Any] = {"name": "curate-rdatasets", "version": "", "serializations": [],
                            "max_serialized_cells": 50_000, "description": ""}


ANSWER_EXAMPLES = 1000  # samples whose gold changed, each listed by `curate diff`


DIFF_EXAMPLES = 10


SERIALIZE_CHUNK = 250  # tables per worker task




def _serialized_schema() -> Any:
    import pyarrow as pa

    return pa.schema([("table_id", pa.string()), ("name", pa.string()), ("text", pa.string())])


class ReleaseExists(RuntimeError):
    """Writing to a version that exists: releases are immutable."""


class ReleaseBusy(RuntimeError):
    """Another build is writing a release of the same name."""


def settings(config: dict[str, Any]) -> dict[str, Any]:
    from curate.exports.serialize import FORMATS

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



def read_manifest(path: Path) -> dict[str, Any]:
    return json.loads((path / MANIFEST).read_text())


@dataclass
class ReleaseInputs:
    """What the build hands the writer: files of the pipeline's datasets and what made them."""

    sample_files: list[str]
    table_files: list[str]  # in pipeline order: a later copy of a table wins
    derived_table_files: list[str] = field(default_factory=list)  # those of them a generator made (the card counts them)
    retrieval_pool: dict[str, list[str]] = field(default_factory=dict)  # database.table -> its columns
    retrieval_keys: dict[str, list[list[str]]] = field(default_factory=dict)  # database.table -> [[column, label]]
    build: dict[str, Any] = field(default_factory=dict)  # config, seed, signature, stages, models
    reports: dict[str, Any] = field(default_factory=dict)  # stage name -> report, for the card


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
        if p.is_file() and (p.suffix == ".jsonl" or p.name in ("retrieval_pool.json", "retrieval_keys.json")):
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

    from curate.curation.arrow_io import body_from_bytes
    from curate.curation.table import HeaderNode, table_content_hash

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

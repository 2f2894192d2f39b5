"""Published benchmarks imported as curate releases: `curate import FORMAT PATH...`.

One module per format behind `IMPORTERS` (lazy, like the readers in `curate.curation.sources`). An importer
reads the benchmark's own files and returns an `Imported`: Tables and Samples (each keeping the
benchmark's id in `provenance["source_id"]`), the files read with their sha256 and licence, and the
name of the official metric profile `curate evaluate` applies by default (`curate.evaluation.official`).
`write_import` hands them to the release writer that `curate build` uses (`curate.exports.release`), so an
imported release has the same layout, manifest, fingerprint and card as a built one.

Bad input raises `BadInput` naming the file, the line (or sample) and the field; the release is
written into a temporary folder and renamed into place, so nothing is ever half-written, and the
same files imported again give the same release ("up to date"), never a duplicate.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curate.curation.registry import Registry

# one module per benchmark, its reading function marked `@importer("name")` (listed from the source);
# `takes_map=True`: a factory that makes the reader from --map (jsonl)
IMPORTERS = Registry("import format", plugins="curate.importers.*", marker="importer")
importer = IMPORTERS.decorator

# bumped when an importer's reading of the same files changes (part of the release's signature)
IMPORT_VERSION = 1


class BadInput(ValueError):
    """A benchmark file that does not hold what its format promises."""

    def __init__(self, path: str | Path, where: str, field_name: str, reason: str) -> None:
        self.path, self.where, self.field, self.reason = str(path), where, field_name, reason
        at = f"{path}:{where}" if where else str(path)
        super().__init__(f"{at}: field {field_name!r}: {reason}" if field_name else f"{at}: {reason}")


def json_list(path: Path, what: str) -> list[Any]:
    """A file that holds one JSON list (MMQA's samples, Spider's questions)."""
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BadInput(path, "", "", f"not JSON ({e})") from None
    if not isinstance(items, list):
        raise BadInput(path, "", "", f"{what} is a JSON list")
    return items


def json_object(path: Path, where: str, line: str) -> dict[str, Any]:
    """One line of a JSON Lines file, which must hold an object."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        raise BadInput(path, where, "", f"not JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(record, dict):
        raise BadInput(path, where, "", f"a line must be a JSON object, got {type(record).__name__}")
    return record


def require(path: Path, where: str, record: dict[str, Any], fields: dict[str, Any]) -> None:
    """Every field there, each of its type; else the file, the place and the field are named."""
    for name, kind in fields.items():
        if name not in record:
            raise BadInput(path, where, name, "missing")
        if not isinstance(record[name], kind):
            raise BadInput(path, where, name, f"has the wrong type ({type(record[name]).__name__})")


@dataclass(frozen=True)
class SourceFile:
    path: str
    sha256: str
    licence: str


@dataclass
class Imported:
    benchmark: str  # the name the taxonomy and the card use: TableBench, MMQA, Spider
    profile: str  # the official metric profile (evaluation.official.PROFILES)
    citation: str
    licence: str
    tables: list[Any] = field(default_factory=list)  # curation.table.Table
    samples: list[Any] = field(default_factory=list)  # curation.sample.Sample
    sources: list[SourceFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the card should say about this import
    settings: dict[str, Any] = field(default_factory=dict)  # what the evaluator needs (e.g. table_file)
    skipped: list[dict[str, str]] = field(default_factory=list)  # published samples left out, each with why


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def read(fmt: str, paths: list[str], field_map: str | None = None) -> Imported:
    """The benchmark in `paths`, read by the `fmt` importer (KeyError names the known formats);
    `field_map` ("question=q,answer=a,table=t") for the `jsonl` format, which needs one."""
    if IMPORTERS.meta(fmt).get("takes_map"):  # a reader made from the mapping
        from curate.curation.registry import resolve

        if not field_map:
            raise ValueError(f"{fmt} needs --map question=FIELD,answer=FIELD,table=FIELD[,id=FIELD]")
        mapping = resolve("curate.importers.jsonl:parse_map")(field_map)
        return IMPORTERS.get(fmt)(mapping)([Path(p) for p in paths])
    if field_map:
        raise ValueError(f"--map is for the jsonl format; {fmt} has its own fields")
    return IMPORTERS.get(fmt)([Path(p) for p in paths])


def write_import(fmt: str, paths: list[str], name: str | None = None, version: str | None = None,
                 releases: str | Path = "releases", progress: Any = None, field_map: str | None = None
                 ) -> dict[str, Any]:
    """Read the benchmark and write it as a release under `releases/<name>/<version>/`."""
    from curate.curation.arrow_io import samples_to_arrow, tables_to_arrow
    from curate.curation.hashing import content_hash
    from curate.curation.pipeline.store import write_parquet
    from curate.exports.release import ReleaseInputs, write_release

    imported = read(fmt, paths, field_map)
    if not imported.samples:
        raise BadInput(paths[0] if paths else "", "", "", "holds no samples to import")
    sources = [s.__dict__ for s in imported.sources]
    record = {"format": fmt, "benchmark": imported.benchmark, "profile": imported.profile,
              "citation": imported.citation, "licence": imported.licence, "sources": sources,
              "notes": imported.notes, "settings": imported.settings, "skipped": imported.skipped,
              "importer_version": IMPORT_VERSION}
    # the same files read by the same importer are the same release: a rerun writes nothing
    signature = content_hash("import", IMPORT_VERSION, fmt, field_map or "", sorted(s["sha256"] for s in sources))[:16]
    release_name = name or f"{fmt}-import"
    config = {"name": release_name, "version": version or "",
              "description": f"{imported.benchmark}, imported by `curate import {fmt}` from its published files."}
    with tempfile.TemporaryDirectory(prefix="curate-import-") as tmp:
        samples_file, tables_file = Path(tmp) / "samples.parquet", Path(tmp) / "tables.parquet"
        unique = {t.id: t for t in imported.tables}
        write_parquet(tables_file, tables_to_arrow(unique[k] for k in sorted(unique)))
        by_id: dict[str, Any] = {}
        for sample in imported.samples:  # the same question, tables and program twice is one sample
            first = by_id.setdefault(sample.id, sample)
            if first is not sample:
                imported.skipped.append({"source_id": sample.provenance.get("source_id", ""), "field": "question",
                                         "reason": "repeats source_id "
                                                   f"{first.provenance.get('source_id', '')} (same question, tables "
                                                   "and program): one sample"})
        if len(by_id) < len(imported.samples):
            record["notes"] = [*imported.notes, f"{len(imported.samples) - len(by_id)} published samples repeat "
                               "another's question, tables and program: each kept once (build.import.skipped)."]
        write_parquet(samples_file, samples_to_arrow(by_id[k] for k in sorted(by_id)))
        inputs = ReleaseInputs(sample_files=[str(samples_file)], table_files=[str(tables_file)],
                               build={"import": record, "signature": signature, "seed": 0, "config": {}},
                               reports={})
        return write_release(inputs, Path(releases), config, progress)

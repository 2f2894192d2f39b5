"""Published benchmarks imported as curate releases: `curate import FORMAT PATH...`.

One module per format behind `IMPORTERS` (lazy, like the readers in `curate.curation.sources`). An importer
reads the benchmark's own files and returns an `Imported`: Tables and Samples (each keeping the
benchmark's id in `provenance["source_id"]`), the files read with their sha256 and licence, and the
name of the official metric profile `curate evaluate` applies by default (`curate.evaluation.official`).
`write_import` hands them to the release writer that `curate build` uses (`curate.exports.release`), so an
imported release has the same layout, manifest, fingerprint and card as a built one.

Import is per record: a record that cannot be read is refused (`Imported.refuse`: a `BadInput`
naming the file, the line or sample, the field and why), listed in the manifest's
`build.import.skipped` with kind `unreadable`, and left out; every other record comes in. `strict`
(`curate import --strict`) keeps all-or-nothing: the first refusal stops the import. Each importer
counts how it read every field (`Imported.read_as`: "answer: pandas split object" 39, ...), so a
form nobody expected shows up as a count (docs/import.md). A file that cannot be read at all
still raises. The release is written into a temporary folder and renamed into place, so nothing
is ever half-written, and the same files imported again give the same release ("up to date").
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curate.curation.registry import Registry

# one module per benchmark, its reading function marked `@importer("name")` (listed from the source);
# `takes_map=True`: a factory that makes the reader from --map (jsonl)
IMPORTERS = Registry("import format", plugins="curate.importers.*", marker="importer")
importer = IMPORTERS.decorator

# bumped when an importer's reading of the same files changes (part of the release's signature);
# 2: per-record import, every published answer form, MMQA's SQL in SQLite, duplicate ids kept
IMPORT_VERSION = 2

# why a published record is not in the release (`build.import.skipped[].kind`; docs/import.md)
LEFT_OUT_KINDS = {"unreadable": "the record cannot be read",
                  "gold_sql_fails": "its gold SQL fails, so it has no gold",
                  "no_gold": "published without a gold answer",
                  "repeat": "the same question, tables and program as another record"}


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
    refused: list[BadInput] = field(default_factory=list)  # the unreadable records (`strict` stops at the first)
    forms: dict[str, Counter] = field(default_factory=dict)  # field -> form it was read in -> records
    flags: list[dict[str, str]] = field(default_factory=list)  # what is odd about records brought in (for the audit)

    def refuse(self, error: BadInput, source_id: str = "") -> None:
        """Leave an unreadable record out, listed with the file, place, field and reason."""
        self.refused.append(error)
        where = f"{error.path}:{error.where}" if error.where else error.path
        self.skipped.append({"source_id": source_id, "where": where, "field": error.field, "reason": error.reason,
                             "kind": "unreadable"})

    def read_as(self, field_name: str, form: str) -> None:
        """Count one record's `field_name` as read in `form` (the summary's per-field counts)."""
        self.forms.setdefault(field_name, Counter())[form] += 1

    def summary(self) -> dict[str, Any]:
        """Per field, the records read in each form; the records left out, counted by kind and field."""
        left: Counter = Counter()
        for s in self.skipped:
            left[(s.get("kind", "other"), re.sub(r"\[\d+\]", "[]", s.get("field", "")))] += 1
        by_count = lambda kv: (-kv[1], kv[0])  # noqa: E731
        return {"forms": {f: dict(sorted(c.items(), key=by_count)) for f, c in sorted(self.forms.items())},
                "left_out": [{"kind": k, "field": f, "count": n} for (k, f), n in sorted(left.items())],
                "flags": dict(Counter(f["kind"] for f in self.flags))}


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def read(fmt: str, paths: list[str], field_map: str | None = None, strict: bool = False) -> Imported:
    """The benchmark in `paths`, read by the `fmt` importer (KeyError names the known formats);
    `field_map` ("question=q,answer=a,table=t") for the `jsonl` format, which needs one. `strict`:
    the first unreadable record raises its `BadInput` (all or nothing)."""
    if IMPORTERS.meta(fmt).get("takes_map"):  # a reader made from the mapping
        from curate.curation.registry import resolve

        if not field_map:
            raise ValueError(f"{fmt} needs --map question=FIELD,answer=FIELD,table=FIELD[,id=FIELD]")
        mapping = resolve("curate.importers.jsonl:parse_map")(field_map)
        imported = IMPORTERS.get(fmt)(mapping)([Path(p) for p in paths])
    else:
        if field_map:
            raise ValueError(f"--map is for the jsonl format; {fmt} has its own fields")
        imported = IMPORTERS.get(fmt)([Path(p) for p in paths])
    if strict and imported.refused:
        raise imported.refused[0]
    return imported


def write_import(fmt: str, paths: list[str], name: str | None = None, version: str | None = None,
                 releases: str | Path = "releases", progress: Any = None, field_map: str | None = None,
                 strict: bool = False) -> dict[str, Any]:
    """Read the benchmark and write it as a release under `releases/<name>/<version>/`; the result
    carries `import`: the forms each field was read in and the records left out (`Imported.summary`)."""
    from curate.curation.arrow_io import samples_to_arrow, tables_to_arrow
    from curate.curation.hashing import content_hash
    from curate.curation.pipeline.store import write_parquet
    from curate.exports.release import ReleaseInputs, write_release

    imported = read(fmt, paths, field_map, strict)
    if not imported.samples:
        first = f" (the first refused: {imported.refused[0]})" if imported.refused else ""
        raise BadInput(paths[0] if paths else "", "", "", f"holds no samples to import{first}")
    sources = [s.__dict__ for s in imported.sources]
    record = {"format": fmt, "benchmark": imported.benchmark, "profile": imported.profile,
              "citation": imported.citation, "licence": imported.licence, "sources": sources,
              "notes": imported.notes, "settings": imported.settings, "skipped": imported.skipped,
              "flags": imported.flags, "forms": imported.summary()["forms"], "importer_version": IMPORT_VERSION}
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
                                         "kind": "repeat", "reason": "repeats source_id "
                                                   f"{first.provenance.get('source_id', '')} (same question, tables "
                                                   "and program): one sample"})
        if len(by_id) < len(imported.samples):
            record["notes"] = [*imported.notes, f"{len(imported.samples) - len(by_id)} published samples repeat "
                               "another's question, tables and program: each kept once (build.import.skipped)."]
        write_parquet(samples_file, samples_to_arrow(by_id[k] for k in sorted(by_id)))
        inputs = ReleaseInputs(sample_files=[str(samples_file)], table_files=[str(tables_file)],
                               build={"import": record, "signature": signature, "seed": 0, "config": {}},
                               reports={})
        result = write_release(inputs, Path(releases), config, progress)
    return {**result, "import": imported.summary(), "skipped": imported.skipped}

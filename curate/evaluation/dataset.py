"""A release as the evaluator reads it: its samples, its tables, and its table configurations.

A configuration is a serialization and a perturbation, named "serialization:perturbation"
("markdown:none", "html:row_shuffle"); the release's manifest lists both, and its default. The
default configuration's text is read from the release's serialization files; any other is made
from the table record (`tables/tables.parquet`), perturbed with the release's seed, so every
evaluation of a release sees the same tables.

Every file is opened through `curate.curation.release_files`: only files `SHA256SUMS` lists, regular,
inside the release, no link followed, each hashed against its listing; a sample id held twice
is refused (one copy must never silently win).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any


class ReleaseError(ValueError):
    """Not a release, a release file that may not be read, or a configuration or sample the release does not have."""


@dataclass(frozen=True)
class EvalSample:
    id: str
    task: str
    question: str
    answer: Any
    answer_type: str
    table_ids: tuple[str, ...]
    program: dict[str, str] | None
    split: str
    provenance: dict[str, str] = field(default_factory=dict)  # an imported sample's source id, type, verbatim gold


@dataclass(frozen=True)
class Configuration:
    serialization: str
    perturbation: str

    @property
    def name(self) -> str:
        return f"{self.serialization}:{self.perturbation}"


class ReleaseData:
    def __init__(self, path: str | Path) -> None:
        from curate.curation.release_files import ReleaseIntegrityError, open_release

        self.path = Path(path)
        if not (self.path / "manifest.json").exists():
            raise ReleaseError(f"{self.path}: not a release (no manifest.json); releases live in "
                               "releases/<name>/<version>/")
        try:
            self.files = open_release(self.path)
            self.manifest = json.loads(self.files.path("manifest.json").read_text())
        except ReleaseIntegrityError as e:
            raise ReleaseError(str(e)) from None
        tc = self.manifest.get("table_configurations", {})
        self.serializations: list[str] = tc.get("serializations", [])
        self.perturbations: list[str] = tc.get("perturbations", ["none"])
        default = tc.get("default", {"serialization": "markdown", "perturbation": "none"})
        self.default = Configuration(default["serialization"], default["perturbation"])
        self.seed = int(self.manifest.get("seed", 0))
        self._text: dict[str, dict[str, str]] = {}
        self._records_file: str | None = None

    @property
    def name(self) -> str:
        return f"{self.manifest.get('name')}/{self.manifest.get('version')}"

    @property
    def imported(self) -> dict[str, Any]:
        """What `curate import` recorded (format, benchmark, official profile, source files); {} if built."""
        return self.manifest.get("build", {}).get("import") or {}

    def configuration(self, name: str | None) -> Configuration:
        """"serialization:perturbation" (or a serialization alone: unperturbed), checked against the release."""
        if not name:
            return self.default
        serialization, _, perturbation = name.partition(":")
        perturbation = perturbation or "none"
        if serialization not in self.serializations or perturbation not in self.perturbations:
            raise ReleaseError(f"configuration {name!r}: this release has serializations "
                               f"{', '.join(self.serializations)} and perturbations {', '.join(self.perturbations)} "
                               "(name one as serialization:perturbation)")
        return Configuration(serialization, perturbation)

    def samples(self, split: str | None = None, tasks: list[str] | None = None) -> list[EvalSample]:
        """The listed samples (of a split, of tasks); ReleaseError if a sample id is held twice,
        in any split, naming both files."""
        import pyarrow.parquet as pq

        out = []
        held: dict[str, str] = {}
        columns = ["id", "task", "question", "answer", "answer_type", "table_ids", "program", "split", "provenance"]
        for file in self._listed(self.files.sample_files):
            rel = file.relative_to(self.files.root).as_posix()
            wanted = not split or file.stem == split
            seen_here: set[str] = set()
            for row in pq.read_table(file, columns=columns if wanted else ["id"]).to_pylist():
                if held.setdefault(row["id"], rel) != rel or row["id"] in seen_here:
                    raise ReleaseError(f"{self.path}: sample id {row['id']} is in {held[row['id']]} and in {rel}: "
                                       "a release holds each sample once (`curate release verify` lists them all)")
                seen_here.add(row["id"])
                if not wanted or tasks and not any(row["task"].startswith(t) for t in tasks):
                    continue
                provenance = row["provenance"]
                out.append(EvalSample(row["id"], row["task"], row["question"], json.loads(row["answer"]),
                                      row["answer_type"], tuple(row["table_ids"]), row["program"], row["split"],
                                      json.loads(provenance) if isinstance(provenance, str) else dict(provenance or {})))
        return sorted(out, key=lambda s: s.id)

    def _listed(self, read: Any, *args: Any) -> Any:
        """`read` of the release's files, a file that may not be read as a ReleaseError."""
        from curate.curation.release_files import ReleaseIntegrityError

        try:
            return read(*args)
        except ReleaseIntegrityError as e:
            raise ReleaseError(str(e)) from None

    def _file(self, rel: str) -> str | None:
        """A listed file's path to read (None: the release lists no such file)."""
        return str(self._listed(self.files.path, rel)) if self.files.has(rel) else None

    @property
    def _records(self) -> str:
        """tables/tables.parquet, checked once; the cached readers below are keyed by this path."""
        if self._records_file is None:
            self._records_file = self._file("tables/tables.parquet")
            if self._records_file is None:
                raise ReleaseError(f"{self.path}: SHA256SUMS lists no tables/tables.parquet")
        return self._records_file

    # ---------------------------------------------------------------- tables

    def table(self, table_id: str, configuration: Configuration | None = None) -> Any:
        """The table record, perturbed as the configuration says."""
        return _table(self._records, table_id, configuration.perturbation if configuration else "none", self.seed)

    def table_text(self, table_id: str, configuration: Configuration) -> str:
        if configuration.perturbation == "none":
            texts = self._text.get(configuration.serialization)
            if texts is None:
                import pyarrow.parquet as pq

                file = self._file(f"tables/{configuration.serialization}.parquet")
                data = pq.read_table(file, columns=["table_id", "text"]).to_pydict() if file else {}
                texts = self._text[configuration.serialization] = dict(zip(data.get("table_id", []),
                                                                           data.get("text", [])))
            if table_id in texts:
                return texts[table_id]
        return _serialized(self._records, table_id, configuration.serialization, configuration.perturbation,
                           self.seed)

    def table_caption(self, table_id: str) -> str:
        """A table's caption (its title; "" for none), one column of tables.parquet read once."""
        return _table_captions(self._records).get(table_id) or ""

    def table_notes(self, table_id: str) -> tuple[str, ...]:
        """A table's notes (lines around the grid: units, footnotes, sources), one column read once."""
        return tuple(_table_notes(self._records).get(table_id) or ())

    def table_key(self, table_id: str) -> tuple[tuple[str, str], ...]:
        """A table's column key ((header, label) per documented column it shows), read once."""
        return tuple(_table_keys(self._records).get(table_id) or ())

    def table_name(self, table_id: str) -> str:
        """A table's name, without reading the table (one column of tables.parquet, read once)."""
        return _table_names(self._records)[table_id]

    @property
    def retrieval_pool(self) -> dict[str, list[str]]:
        """The tables MMQA's retrieval task chooses among, each with its columns
        (tables/retrieval_pool.json; a release written before columns were kept lists names only)."""
        path = self._file("tables/retrieval_pool.json")
        pool = json.loads(Path(path).read_text()) if path else {}
        return {name: [] for name in pool} if isinstance(pool, list) else pool

    @property
    def retrieval_keys(self) -> dict[str, list[tuple[str, str]]]:
        """The column key of each pool table that has one (tables/retrieval_keys.json; none in a
        release written before the pool's keys were kept)."""
        path = self._file("tables/retrieval_keys.json")
        keys = json.loads(Path(path).read_text()) if path else {}
        return {name: [tuple(pair) for pair in pairs] for name, pairs in keys.items()}

    def has_table(self, table_id: str) -> bool:
        return table_id in _release_index(self._records)


# a prompt never holds more rows than this (it is cut at a character budget anyway); the release
# leaves tables of over 50,000 cells unserialized, and writing all of one per question would dominate
MAX_PROMPT_ROWS = 2000


@lru_cache(maxsize=128)
def _serialized(records: str, table_id: str, serialization: str, perturbation: str, seed: int) -> str:
    from dataclasses import replace

    from curate.exports.serialize import serialize

    table = _table(records, table_id, perturbation, seed)
    if table.n_rows <= MAX_PROMPT_ROWS:
        return serialize(table, serialization)
    head = replace(table, body=table.body.slice(0, MAX_PROMPT_ROWS))
    return serialize(head, serialization) + f"\n... (the first {MAX_PROMPT_ROWS:,} of {table.n_rows:,} rows)"


@lru_cache(maxsize=64)
def _table(records: str, table_id: str, perturbation: str, seed: int) -> Any:
    """`records`: a release's tables/tables.parquet, as `ReleaseData` checked it."""
    from curate.curation.arrow_io import table_at

    index = _release_index(records)
    if table_id not in index:
        raise ReleaseError(f"table {table_id} is not in the release {Path(records).parent.parent}")
    table = table_at(*index[table_id])
    if perturbation == "none":
        return table
    from curate.exports.perturb import perturb

    if table.is_hierarchical:  # ToRR's perturbations are for flat tables; a merged header stays as it is
        return table
    return perturb(table, perturbation, seed)


@lru_cache(maxsize=8)
def _release_index(records: str) -> dict[str, tuple[str, int]]:
    from curate.curation.arrow_io import table_index

    return table_index([records])


@lru_cache(maxsize=8)
def _table_names(records: str) -> dict[str, str]:
    import pyarrow.parquet as pq

    data = pq.read_table(records, columns=["id", "name"]).to_pydict()
    return dict(zip(data["id"], data["name"]))


@lru_cache(maxsize=8)
def _table_notes(records: str) -> dict[str, list[str]]:
    import pyarrow.parquet as pq

    if "notes" not in pq.read_schema(records).names:
        return {}
    data = pq.read_table(records, columns=["id", "notes"]).to_pydict()
    return dict(zip(data["id"], data["notes"]))


@lru_cache(maxsize=8)
def _table_keys(records: str) -> dict[str, tuple[tuple[str, str], ...]]:
    import pyarrow.parquet as pq

    from curate.curation import semantics
    from curate.curation.column_key import entries

    if not {"semantics", "columns"} <= set(pq.read_schema(records).names):
        return {}
    data = pq.read_table(records, columns=["id", "columns", "semantics"]).to_pydict()
    return {table_id: entries(semantics.from_json(infos), columns or ())
            for table_id, columns, infos in zip(data["id"], data["columns"], data["semantics"])}


@lru_cache(maxsize=8)
def _table_captions(records: str) -> dict[str, str]:
    import pyarrow.parquet as pq

    file = records
    if "caption" not in pq.read_schema(file).names:  # a release written before captions were kept
        return {}
    data = pq.read_table(file, columns=["id", "caption"]).to_pydict()
    return dict(zip(data["id"], data["caption"]))

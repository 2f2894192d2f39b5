"""A release as the evaluator reads it: its samples, its tables, and its table configurations.

A configuration is a serialization and a perturbation, named "serialization:perturbation"
("markdown:none", "html:row_shuffle"); the release's manifest lists both, and its default. The
default configuration's text is read from the release's serialization files; any other is made
from the table record (`tables/tables.parquet`), perturbed with the release's seed, so every
evaluation of a release sees the same tables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any


class ReleaseError(ValueError):
    """Not a release, or a configuration or sample the release does not have."""


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
        self.path = Path(path)
        manifest = self.path / "manifest.json"
        if not manifest.exists():
            raise ReleaseError(f"{self.path}: not a release (no manifest.json); releases live in "
                               "releases/<name>/<version>/")
        self.manifest = json.loads(manifest.read_text())
        tc = self.manifest.get("table_configurations", {})
        self.serializations: list[str] = tc.get("serializations", [])
        self.perturbations: list[str] = tc.get("perturbations", ["none"])
        default = tc.get("default", {"serialization": "markdown", "perturbation": "none"})
        self.default = Configuration(default["serialization"], default["perturbation"])
        self.seed = int(self.manifest.get("seed", 0))
        self._text: dict[str, dict[str, str]] = {}

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
        import pyarrow.parquet as pq

        out = []
        for file in sorted((self.path / "samples").glob("*/*.parquet")):
            if split and file.stem != split:
                continue
            columns = ["id", "task", "question", "answer", "answer_type", "table_ids", "program", "split", "provenance"]
            for row in pq.read_table(file, columns=columns).to_pylist():
                if tasks and not any(row["task"].startswith(t) for t in tasks):
                    continue
                provenance = row["provenance"]
                out.append(EvalSample(row["id"], row["task"], row["question"], json.loads(row["answer"]),
                                      row["answer_type"], tuple(row["table_ids"]), row["program"], row["split"],
                                      json.loads(provenance) if isinstance(provenance, str) else dict(provenance or {})))
        return sorted(out, key=lambda s: s.id)

    # ---------------------------------------------------------------- tables

    def table(self, table_id: str, configuration: Configuration | None = None) -> Any:
        """The table record, perturbed as the configuration says."""
        return _table(str(self.path), table_id, configuration.perturbation if configuration else "none", self.seed)

    def table_text(self, table_id: str, configuration: Configuration) -> str:
        if configuration.perturbation == "none":
            texts = self._text.get(configuration.serialization)
            if texts is None:
                import pyarrow.parquet as pq

                file = self.path / "tables" / f"{configuration.serialization}.parquet"
                data = pq.read_table(file, columns=["table_id", "text"]).to_pydict() if file.exists() else {}
                texts = self._text[configuration.serialization] = dict(zip(data.get("table_id", []),
                                                                           data.get("text", [])))
            if table_id in texts:
                return texts[table_id]
        return _serialized(str(self.path), table_id, configuration.serialization, configuration.perturbation,
                           self.seed)

    def table_caption(self, table_id: str) -> str:
        """A table's caption (its title; "" for none), one column of tables.parquet read once."""
        return _table_captions(str(self.path)).get(table_id) or ""

    def table_name(self, table_id: str) -> str:
        """A table's name, without reading the table (one column of tables.parquet, read once)."""
        return _table_names(str(self.path))[table_id]

    @property
    def retrieval_pool(self) -> dict[str, list[str]]:
        """The tables MMQA's retrieval task chooses among, each with its columns
        (tables/retrieval_pool.json; a release written before columns were kept lists names only)."""
        path = self.path / "tables" / "retrieval_pool.json"
        pool = json.loads(path.read_text()) if path.exists() else {}
        return {name: [] for name in pool} if isinstance(pool, list) else pool

    def has_table(self, table_id: str) -> bool:
        return table_id in _release_index(str(self.path))


# a prompt never holds more rows than this (it is cut at a character budget anyway); the release
# leaves tables of over 50,000 cells unserialized, and writing all of one per question would dominate
MAX_PROMPT_ROWS = 2000


@lru_cache(maxsize=128)
def _serialized(release: str, table_id: str, serialization: str, perturbation: str, seed: int) -> str:
    from dataclasses import replace

    from exports.serialize import serialize

    table = _table(release, table_id, perturbation, seed)
    if table.n_rows <= MAX_PROMPT_ROWS:
        return serialize(table, serialization)
    head = replace(table, body=table.body.slice(0, MAX_PROMPT_ROWS))
    return serialize(head, serialization) + f"\n... (the first {MAX_PROMPT_ROWS:,} of {table.n_rows:,} rows)"


@lru_cache(maxsize=64)
def _table(release: str, table_id: str, perturbation: str, seed: int) -> Any:
    from curation.arrow_io import table_at

    index = _release_index(release)
    if table_id not in index:
        raise ReleaseError(f"table {table_id} is not in the release {release}")
    table = table_at(*index[table_id])
    if perturbation == "none":
        return table
    from exports.perturb import perturb

    if table.is_hierarchical:  # ToRR's perturbations are for flat tables; a merged header stays as it is
        return table
    return perturb(table, perturbation, seed)


@lru_cache(maxsize=8)
def _release_index(release: str) -> dict[str, tuple[str, int]]:
    from curation.arrow_io import table_index

    return table_index([str(Path(release) / "tables" / "tables.parquet")])


@lru_cache(maxsize=8)
def _table_names(release: str) -> dict[str, str]:
    import pyarrow.parquet as pq

    data = pq.read_table(Path(release) / "tables" / "tables.parquet", columns=["id", "name"]).to_pydict()
    return dict(zip(data["id"], data["name"]))


@lru_cache(maxsize=8)
def _table_captions(release: str) -> dict[str, str]:
    import pyarrow.parquet as pq

    file = Path(release) / "tables" / "tables.parquet"
    if "caption" not in pq.read_schema(file).names:  # a release written before captions were kept
        return {}
    data = pq.read_table(file, columns=["id", "caption"]).to_pydict()
    return dict(zip(data["id"], data["caption"]))

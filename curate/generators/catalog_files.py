"""Template catalogs as data: TOML files of `[[template]]` entries, and choosing among them.

Both catalogs (rule QA, SQL) read their files the same way, so they report a bad file, a missing
field or a duplicate id in the same words.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")


def template_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.toml"))


def fingerprint(directory: Path) -> str:
    """Changes whenever a template file does, so editing one reruns generation."""
    from curate.curation.hashing import content_hash

    return content_hash([(p.name, p.read_text()) for p in template_files(directory)])


def template_entries(directory: Path, required: set[str]) -> Iterator[tuple[dict[str, Any], dict[str, Any], str]]:
    """(file data, entry, where) for every entry in file and entry order; `where` names both for errors."""
    seen: set[str] = set()
    for path in template_files(directory):
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{path}: not valid TOML ({e})") from None
        data.setdefault("family", path.stem)
        for entry in data.get("template", []):
            where = f"{path.name}: template {entry.get('id', '?')!r}"
            missing = required - entry.keys()
            if missing:
                raise ValueError(f"{where}: missing {', '.join(sorted(missing))}")
            if entry["id"] in seen:
                raise ValueError(f"{where}: duplicate id")
            seen.add(entry["id"])
            yield data, entry, where


def choose(items: list[T], only: list[str] | None, exclude: list[str] | None,
           matches: Callable[[T, str], bool]) -> list[T]:
    """Keep the items that some name in `only` matches (all when empty), minus those `exclude` matches."""
    if only:
        unknown = [n for n in only if not any(matches(t, n) for t in items)]
        if unknown:
            raise ValueError(f"no template matches {', '.join(unknown)}")
        items = [t for t in items if any(matches(t, n) for n in only)]
    if exclude:
        items = [t for t in items if not any(matches(t, n) for n in exclude)]
    return items

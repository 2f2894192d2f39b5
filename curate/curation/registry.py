"""Lazy registries: names listed without importing anything, each object imported on first use.

A registry is bound to a plugin package (`plugins="curate.curation.sources.readers.*"`) whose modules
register themselves with a decorator (`@reader("csv", extensions=(".csv",))`). The names are found by
reading those modules' source (AST), so `--help` and an unknown-name error import none of them; the
decorator's literal keyword arguments are the entry's metadata (a reader's file extensions). Adding a
reader, a metric or a backend is one new file in its package. The same literal `"package.*"` string is
what the code fingerprint (`curate.curation.pipeline.code`) follows: the module that makes the registry has
every module of that package in its import closure, so adding or editing a plugin reruns the stages
that can reach it.

A registry may read several plugin packages (`plugins=("curate.importers.*", "curate.validators.*")`: the stages,
which live beside the code they run, `curate.curation.pipeline.graph`); `marks()` gives each mark with where
it is written, in the order of the source (packages as listed, modules by name, marks top to bottom).

Entries can also be given as `"package.module:attribute"` strings (`Registry("executor", {...})`,
`register(...)`, which tests use for a backend that lives in `tests/`).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Mark:
    """One `@marker("name", key=literal, ...)` as read from the source."""

    name: str
    target: str  # "package.module:attribute"
    meta: dict[str, Any]
    where: str  # "path:line" of the mark


class Registry:
    """Names -> `"package.module:attribute"` targets (given, or discovered in plugin packages)."""

    def __init__(self, kind: str, entries: dict[str, str] | None = None,
                 plugins: str | tuple[str, ...] | None = None, marker: str | None = None) -> None:
        """`plugins`: "package.*" (or several), the packages whose modules register with `@marker(...)`
        (default: `kind`)."""
        packages = (plugins,) if isinstance(plugins, str) else tuple(plugins or ())
        for package in packages:
            if not package.endswith(".*"):
                raise ValueError(f"{kind}: plugins names a package as 'package.*', got {package!r}")
        self.kind = kind
        self.packages = tuple(p[:-2] for p in packages)
        self.marker = marker or kind
        self._given: dict[str, str] = {}
        self._meta: dict[str, dict[str, Any]] = {}
        self._marks: list[Mark] | None = None
        self._found: dict[str, str] | None = None
        self._loaded: dict[str, Any] = {}
        for name, target in (entries or {}).items():
            self.register(name, target)

    # ------------------------------------------------------------------ declaring

    def decorator(self, name: str, **meta: Any) -> Callable[[T], T]:
        """`@reader("csv", extensions=(".csv",))`: marks a plugin. The mark is read from the source, so
        its arguments must be literals; when the module is imported it only checks that the source
        reading found it (a mark written some other way would otherwise go unlisted)."""
        def mark(obj: T) -> T:
            target = f"{getattr(obj, '__module__', '')}:{getattr(obj, '__qualname__', '')}"
            self._entries()
            if (self._found or {}).get(name) != target:  # what the source reading found, not a test's override
                raise ValueError(f"{target}: @{self.marker}({name!r}) was not found by reading the source of "
                                 f"{', '.join(self.packages) or 'no plugin package'}; write it literally, on a "
                                 "top-level function or class of a module there")
            return obj
        return mark

    def register(self, name: str, target: str, **meta: Any) -> None:
        """An entry by target string, beside (or over) the discovered ones."""
        if ":" not in target:
            raise ValueError(f"{self.kind} {name!r}: target must look like 'package.module:attribute', got {target!r}")
        self._given[name] = target
        self._meta[name] = meta
        self._loaded.pop(name, None)

    # ------------------------------------------------------------------ reading

    def _entries(self) -> dict[str, str]:
        if self._found is None:
            self._marks = discover(self.packages, self.marker)
            self._found = {}
            for mark in self._marks:
                self._found[mark.name] = mark.target
                self._meta.setdefault(mark.name, mark.meta)
        return {**self._found, **self._given}

    def marks(self) -> list[Mark]:
        """Every mark found in the source, in the source's order (not the entries given by target string)."""
        self._entries()
        return list(self._marks or [])

    def names(self) -> list[str]:
        return sorted(self._entries())

    def target(self, name: str) -> str:
        try:
            return self._entries()[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise KeyError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def meta(self, name: str) -> dict[str, Any]:
        """The literal keyword arguments of the entry's decorator (`extensions` of a reader)."""
        self.target(name)
        return dict(self._meta.get(name, {}))

    def get(self, name: str) -> Any:
        if name not in self._loaded:
            self._loaded[name] = resolve(self.target(name))
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def plugin_files(package: str) -> list[Path]:
    """The modules of a plugin package, found on the import path."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"plugin package {package!r} not found")
    return [p for folder in spec.submodule_search_locations for p in modules_in(Path(folder))]


def modules_in(folder: Path) -> list[Path]:
    """A plugin package's modules, sorted: its `.py` files but `__init__` (which holds the registry).
    The one rule for what discovery reads and what the code fingerprint covers."""
    return sorted(p for p in folder.glob("*.py") if p.name != "__init__.py")


def discover(packages: str | tuple[str, ...], marker: str) -> list[Mark]:
    """Every `@marker("name", key=literal, ...)` on a function or class at the top of a module of
    `packages`, in the source's order (packages as given, modules by name, marks top to bottom); two
    plugins of one name are an error naming both."""
    found: dict[str, Mark] = {}
    called = re.compile(rf"@\s*(?:\w+\s*\.\s*)*{re.escape(marker)}\s*\(")  # files without one are not parsed
    for package, path in [(p, f) for p in ((packages,) if isinstance(packages, str) else packages)
                          for f in plugin_files(p)]:
        text = path.read_text(encoding="utf-8")
        if not called.search(text):
            continue
        module = f"{package}.{path.stem}"
        for node in ast.parse(text, filename=str(path)).body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for mark in node.decorator_list:
                if not (isinstance(mark, ast.Call) and _called(mark.func) == marker):
                    continue
                where = f"{path}:{mark.lineno}"
                try:
                    name = ast.literal_eval(mark.args[0]) if len(mark.args) == 1 else None
                    meta = {k.arg: ast.literal_eval(k.value) for k in mark.keywords if k.arg}
                except ValueError:
                    name = None
                if not isinstance(name, str) or len(mark.keywords) != len(meta):
                    raise ValueError(f"{where}: @{marker}(...) takes a literal name and literal keyword "
                                     "arguments (they are read from the source, not run)")
                if name in found:
                    raise ValueError(f"{where}: {marker} {name!r} is registered twice (also in {found[name].where})")
                found[name] = Mark(name, f"{module}:{node.name}", meta, where)
    return list(found.values())


def _called(func: ast.expr) -> str:
    """`reader` for `@reader(...)` and `@readers.reader(...)`."""
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def resolve(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj

"""The code a stage runs, found from its imports, so that no edit can be served from a stale cache.

A stage's signature holds the hash of its module and of every module of this repository that it
imports, directly or not, at the top of a file or inside a function (stages import lazily), of
every module a lazy registry names (`"curate.curation.sources.readers.csv:read"`), and of every module of a
plugin package a registry discovers (`"curate.curation.sources.readers.*"`, see `curate.curation.registry`), so
adding or editing a reader reruns ingest. Editing `format_answer` reruns
every stage whose code reaches it; editing the CLI reruns nothing. The names in the stage graph and
its registry (`curate.curation.pipeline`, `curate.curation.pipeline.graph`: the packages stages are found in, every
stage by name) are not followed: a stage does not run the other stages' code, so adding a stage file
reruns that stage and, through their inputs' signatures, the stages that read it, and no other.
"""

from __future__ import annotations

import ast
import hashlib
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the folder that holds `curate/`
PACKAGES = ("curate",)  # every module of this repository is under the one namespace
REGISTRY_TARGET = re.compile(rf"^((?:{'|'.join(PACKAGES)})(?:\.\w+)+):\w+(?:\.\w+)*$")
PLUGIN_PACKAGE = re.compile(rf"^((?:{'|'.join(PACKAGES)})(?:\.\w+)*)\.\*$")  # Registry(plugins="pkg.*")
NOT_FOLLOWED = frozenset({"curate.curation.pipeline", "curate.curation.pipeline.graph"})  # the stage graph: every stage's package


def module_file(name: str) -> Path | None:
    """The file of a module of this repository, or None (a third-party or missing module)."""
    if name.split(".")[0] not in PACKAGES:
        return None
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def plugin_modules(package: str) -> list[str]:
    """Every module of a plugin package (what a discovering registry may load), read under ROOT."""
    from curate.curation.registry import modules_in

    init = module_file(package)
    if init is None or init.name != "__init__.py":
        return []
    return [f"{package}.{p.stem}" for p in modules_in(init.parent)]


def _resolve(module: str, level: int, importer: str, is_package: bool) -> str:
    """The absolute name of `from .x import y` inside `importer`."""
    if level == 0:
        return module
    parts = importer.split(".")
    base = parts if is_package else parts[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


@lru_cache(maxsize=None)
def direct_imports(name: str) -> frozenset[str]:
    """The modules of this repository that `name` imports or names in a registry, its parent packages included."""
    path = module_file(name)
    if path is None:
        return frozenset()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module or "", node.level, name, is_package)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import module`
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and name not in NOT_FOLLOWED:
            m = REGISTRY_TARGET.match(node.value)
            if m:
                found.add(m.group(1))
            m = PLUGIN_PACKAGE.match(node.value)
            if m:
                found.update(plugin_modules(m.group(1)))
    out: set[str] = set()
    for module in found:
        parts = module.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))  # importing a.b.c runs a and a.b
    return frozenset(m for m in out if m != name and module_file(m) is not None)


def import_closure(name: str) -> list[str]:
    """`name` and every module of this repository it reaches, sorted."""
    seen = {name}
    frontier = [name]
    while frontier:
        for module in direct_imports(frontier.pop()):
            if module not in seen:
                seen.add(module)
                frontier.append(module)
    return sorted(m for m in seen if module_file(m) is not None)


def code_fingerprint(name: str) -> str:
    """The hash of the source of every module in `name`'s import closure (paths relative to the root)."""
    digest = hashlib.sha256()
    for module in import_closure(name):
        path = module_file(module)
        assert path is not None
        digest.update(module.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]

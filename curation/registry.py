"""Lazy name -> "module:attribute" registries: nothing is imported until it is used."""

from __future__ import annotations

import importlib
from typing import Any, Iterator


class Registry:
    """A mapping of names to `"package.module:attribute"` strings, resolved on first use.

    Adding a stage, source, rule or metric is one new module plus one line here, and listing
    the names (for `--help`) imports nothing.
    """

    def __init__(self, kind: str, entries: dict[str, str] | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, str] = dict(entries or {})
        self._loaded: dict[str, Any] = {}

    def register(self, name: str, target: str) -> None:
        if ":" not in target:
            raise ValueError(f"{self.kind} {name!r}: target must look like 'package.module:attribute', got {target!r}")
        self._entries[name] = target
        self._loaded.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def target(self, name: str) -> str:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise KeyError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def get(self, name: str) -> Any:
        if name not in self._loaded:
            self._loaded[name] = resolve(self.target(name))
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def resolve(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj

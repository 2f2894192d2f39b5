"""The build config: a TOML file whose tables configure the stages ([clean], ...)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

KNOWN_SECTIONS = {"build", "sources", "clean", "generate", "pipeline"}


def load_config(path: str | None) -> dict[str, Any]:
    if not path:
        return {}
    try:
        config = tomllib.loads(Path(path).read_text())
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML ({e})") from None
    unknown = sorted(set(config) - KNOWN_SECTIONS)
    if unknown:
        raise ValueError(f"{path}: unknown section(s) {', '.join(unknown)}; known: {', '.join(sorted(KNOWN_SECTIONS))}")
    return config

"""The template catalog: one TOML file per family under `templates/`, one entry per template."""

from __future__ import annotations

import string
import tomllib
from pathlib import Path

from curation.hashing import content_hash
from generators.rules.engine import OPS, Template

TEMPLATE_DIR = Path(__file__).with_name("templates")


def template_files(directory: Path = TEMPLATE_DIR) -> list[Path]:
    return sorted(directory.glob("*.toml"))


def load_templates(directory: Path = TEMPLATE_DIR, only: list[str] | None = None,
                   exclude: list[str] | None = None, caps: dict[str, int] | None = None) -> list[Template]:
    """All templates, in file and entry order; `only`/`exclude` take template ids or id prefixes."""
    templates: list[Template] = []
    seen: set[str] = set()
    for path in template_files(directory):
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{path}: not valid TOML ({e})") from None
        for entry in data.get("template", []):
            where = f"{path.name}: template {entry.get('id', '?')!r}"
            missing = {"id", "task", "op", "phrasings"} - entry.keys()
            if missing:
                raise ValueError(f"{where}: missing {', '.join(sorted(missing))}")
            if entry["op"] not in OPS:
                raise ValueError(f"{where}: unknown op {entry['op']!r}; known: {', '.join(sorted(OPS))}")
            if entry["id"] in seen:
                raise ValueError(f"{where}: duplicate id")
            seen.add(entry["id"])
            try:
                template = Template.from_entry(entry, data.get("family", path.stem))
            except KeyError as e:
                raise ValueError(f"{where}: {e.args[0]}") from None
            _check_phrasings(template, where)
            templates.append(template)

    def chosen(t: Template, names: list[str]) -> bool:
        return any(t.id == n or t.id.startswith(n.rstrip(".") + ".") or t.task == n for n in names)

    if only:
        unknown = [n for n in only if not any(chosen(t, [n]) for t in templates)]
        if unknown:
            raise ValueError(f"no template matches {', '.join(unknown)}")
        templates = [t for t in templates if chosen(t, only)]
    if exclude:
        templates = [t for t in templates if not chosen(t, exclude)]
    for name, cap in (caps or {}).items():
        matched = [t for t in templates if chosen(t, [name])]
        if not matched:
            raise ValueError(f"caps: no template matches {name!r}")
        for t in matched:
            t.cap = int(cap)
    return templates


def _check_phrasings(template: Template, where: str) -> None:
    for text in template.phrasings + template.short:
        try:
            list(string.Formatter().parse(text))
        except ValueError as e:
            raise ValueError(f"{where}: bad phrasing {text!r}: {e}") from None


def catalog_fingerprint(directory: Path = TEMPLATE_DIR) -> str:
    """Changes whenever a template file does, so editing one reruns generation."""
    return content_hash([(p.name, p.read_text()) for p in template_files(directory)])

"""The template catalog: one TOML file per family under `templates/`, one entry per template."""

from __future__ import annotations

import string
from pathlib import Path

from curate.generators import catalog_files
from curate.generators.rules.engine import Template
from curate.generators.rules.ops import OPS

TEMPLATE_DIR = Path(__file__).with_name("templates")


def template_files(directory: Path = TEMPLATE_DIR) -> list[Path]:
    return catalog_files.template_files(directory)


def load_templates(directory: Path = TEMPLATE_DIR, only: list[str] | None = None,
                   exclude: list[str] | None = None, caps: dict[str, int] | None = None) -> list[Template]:
    """All templates, in file and entry order; `only`/`exclude` take template ids or id prefixes."""
    templates: list[Template] = []
    for data, entry, where in catalog_files.template_entries(directory, {"id", "task", "op", "phrasings"}):
        if entry["op"] not in OPS:
            raise ValueError(f"{where}: unknown op {entry['op']!r}; known: {', '.join(OPS.names())}")
        try:
            template = Template.from_entry(entry, data["family"])
        except KeyError as e:
            raise ValueError(f"{where}: {e.args[0]}") from None
        _check_phrasings(template, where)
        templates.append(template)

    def chosen(t: Template, name: str) -> bool:
        return t.id == name or t.id.startswith(name.rstrip(".") + ".") or t.task == name

    named = set(only or ())
    templates = [t for t in templates if not t.params.get("opt_in") or any(chosen(t, n) for n in named)]
    templates = catalog_files.choose(templates, only, exclude, chosen)
    for name, cap in (caps or {}).items():
        matched = [t for t in templates if chosen(t, name)]
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
    return catalog_files.fingerprint(directory)

"""What a stage passed over, named on the console: the first few files skipped, tables dropped or tables
without a question, then how many more and the report that lists every one (a count alone sends the user
hunting)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIRST = 5


def name_first(console: Any, label: str, lines: list[str], report: str) -> None:
    """The first `FIRST` lines, each after `label`; then the rest as a count and where the full list is."""
    for line in lines[:FIRST]:
        console.print(f"[yellow]{label}[/] {_escape(line)}", highlight=False, soft_wrap=True)
    if len(lines) > FIRST:
        console.print(f"... and {len(lines) - FIRST:,} more: every one is listed in {report}", highlight=False,
                      markup=False, soft_wrap=True)


def skipped_files(report: dict[str, Any]) -> list[str]:
    """An ingest report's files not read, each with its reason."""
    from curate.curation.pipeline.reports import IngestReport

    return [f"{f['path']}: {f['reason']}" for f in IngestReport.from_json(report).passed_over()]


def dropped_tables(report: dict[str, Any]) -> list[str]:
    """A clean report's dropped tables, each with the rule and its reason (a report written before the
    list existed: its examples)."""
    from curate.curation.pipeline.reports import CleanReport

    clean = CleanReport.from_json(report)
    if clean.dropped_tables or clean.kept == clean.tables_in:
        return [f"{d['table']} ({d['rule']}): {d['reason']}" for d in clean.dropped_tables]
    return [f"{item} ({key.split(':')[0]})" for key, items in sorted(report.get("examples", {}).items())
            if key.endswith(":drop") for item in items]


def tables_without_questions(report: dict[str, Any]) -> list[str]:
    """A generator's tables that gave no question, each with the reason most of its candidates were
    rejected for (`without_questions_tables`; a report written before the list existed: none)."""
    return [f"{t['table']}: {t['reason']}" for t in report.get("without_questions_tables", [])]


def name_step(console: Any, step: dict[str, Any]) -> None:
    """After a build step's line: the files ingest skipped, the tables clean dropped, the tables the
    rules gave no question."""
    listing = {"ingest": ("skipped", skipped_files), "clean": ("dropped", dropped_tables),
               "rules": ("no question", tables_without_questions)}.get(step["stage"])
    if not listing:
        return
    label, lines_of = listing
    for path in step.get("reports", []):
        try:
            report = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            continue
        name_first(console, label, lines_of(report), path)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)

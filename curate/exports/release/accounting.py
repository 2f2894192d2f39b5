"""Every table accounted for: the source tables no released question asks about, counted by why.

A table drops out at one of four places: ingest could not read its file, cleaning dropped it, no
template found a question it could ask (the rules report names the reason most of its candidates were
rejected for), or selection left out every question it had. The manifest keeps the counts by reason and
the card states them; the rules and clean reports in the workspace name every table.
"""

from __future__ import annotations

from typing import Any

NOT_SELECTED = "questions_left_out_by_selection"  # it had questions; the per-task cap or near-duplicates took them
NOT_ASKED = "no_single_table_generator_ran"  # a build without the rules stage asks no table alone
DROPPED = "dropped_by_cleaning"


def copied_from(copy: tuple[str, str], source: tuple[str, str]) -> bool:
    """Whether a derived copy (name, file) was made from a source table (name, file): it keeps the
    source's file and its name, or adds a note in brackets ("NAME (headers hidden)")."""
    return copy[1] == source[1] and (copy[0] == source[0] or copy[0].startswith(source[0] + " ("))


def tables_without_questions(source_tables: dict[str, Any], used: set[str], reports: dict[str, Any]) -> dict[str, Any]:
    """`source_tables`: the ids of every table cleaning kept; `used`: the ids the released samples
    ask about (directly, or through a derived copy); `reports`: the build's stage reports. Returns {"tables": how many were read, "with_questions",
    "without": {reason: count}, most first, "unreadable_files"}."""
    rules = reports.get("rules")
    reasons = {t["id"]: t["reason"] for t in (rules or {}).get("without_questions_tables", [])}
    without: dict[str, int] = {}
    for table_id in source_tables:
        if table_id not in used:
            why = reasons.get(table_id, NOT_SELECTED if rules is not None else NOT_ASKED)
            without[why] = without.get(why, 0) + 1
    for rule, n in (reports.get("clean") or {}).get("dropped_by", {}).items():
        if n:
            without[f"{DROPPED}: {rule}"] = without.get(f"{DROPPED}: {rule}", 0) + n
    with_questions = sum(1 for t in source_tables if t in used)
    return {"tables": with_questions + sum(without.values()), "with_questions": with_questions,
            "without": dict(sorted(without.items(), key=lambda kv: (-kv[1], kv[0]))),
            "unreadable_files": int((reports.get("ingest") or {}).get("failed", 0))}


def accounting_line(accounting: dict[str, Any]) -> str:
    """"72 tables: 63 with questions in the release; 9 without (no_numeric_column 9)"."""
    without = accounting.get("without", {})
    line = f"{accounting.get('tables', 0):,} tables: {accounting.get('with_questions', 0):,} with questions in the release"
    if without:
        line += (f"; {sum(without.values()):,} without (" +
                 ", ".join(f"{why} {n:,}" for why, n in without.items()) + ")")
    if accounting.get("unreadable_files"):
        line += f"; {accounting['unreadable_files']:,} files could not be read"
    return line

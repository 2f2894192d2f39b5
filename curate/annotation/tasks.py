"""A sample as a Label Studio task, and an annotation as a review decision.

The task's data carries the sample id (`sample_id`): push reconciles by it, pull maps back by it.
The table is HTML with merged headers kept (rowspan/colspan: the release's own HTML
serialization), the candidates a small HTML table of model, answer and agreement.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

CONFIGS = Path(__file__).with_name("configs")
KINDS = ("answer", "question", "audit")  # answer review (accept / fix / reject), question review (RealHiTBench),
# audit review (a `curate audit` finding: confirm / correct / keep / ambiguous)
VERDICTS = ("accept", "fix", "reject")
# an audit verdict as the review verdict the build applies: confirm and correct replace the gold (with the
# audit's proposed answer, or the annotator's), keep leaves it, ambiguous takes the sample out
AUDIT_VERDICTS = {"confirm": "fix", "correct": "fix", "keep": "accept", "ambiguous": "reject"}
REJECT_REASONS = ("unanswerable", "ambiguous", "wrong table", "bad question")
CRITERIA = ("relevance", "completeness", "feasibility", "clarity")
MAX_TABLE_ROWS = 200  # a reviewer judges at a glance; the rest is summarised


def label_config(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"review kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return (CONFIGS / f"{kind}_review.xml").read_text()


def shown(answer: Any) -> str:
    if isinstance(answer, list):
        return ", ".join(str(a) for a in answer)
    if isinstance(answer, dict):
        return json.dumps(answer, ensure_ascii=False)
    return str(answer)


def table_html(tables: list[Any]) -> str:
    from dataclasses import replace

    from curate.curation.registry import resolve

    serialize = resolve("curate.exports.serialize:serialize")  # the release's HTML: rowspan / colspan kept
    parts = []
    for table in tables:
        head = table if table.n_rows <= MAX_TABLE_ROWS else replace(table, body=table.body.slice(0, MAX_TABLE_ROWS))
        more = (f"<p>... the first {MAX_TABLE_ROWS} of {table.n_rows:,} rows</p>" if table.n_rows > MAX_TABLE_ROWS
                else "")
        parts.append(f"<h4>{html.escape(table.name)}</h4>{serialize(head, 'html')}{more}")
    return "".join(parts) or "<p>(no table)</p>"


def candidates_html(sample: Any) -> str:
    if not sample.votes:
        return "<p>(no candidate answers)</p>"
    rows = "".join(f"<tr><td>{html.escape(v.model)}</td><td>{html.escape(shown(v.answer))}</td>"
                   f"<td>{'' if v.agrees_with_gold is None else 'yes' if v.agrees_with_gold else 'no'}</td></tr>"
                   for v in sample.votes)
    return f"<table><tr><th>model</th><th>answer</th><th>agrees</th></tr>{rows}</table>"


def task_data(sample: Any, tables: list[Any], reason: str) -> dict[str, Any]:
    """What the annotator sees (and `sample_id`, by which push and pull find the sample)."""
    return {"sample_id": sample.id, "task_name": f"{sample.task} ({reason})", "question": sample.question,
            "question_short": sample.question_short or "", "gold": shown(sample.answer),
            "table_html": table_html(tables), "candidates_html": candidates_html(sample),
            "program": sample.program.text if sample.program else "(no program: the gold came from a model or an import)",
            "reason": reason, "agreement": sample.judge_verdict}


def audit_task_data(sample: Any, tables: list[Any], finding: dict[str, Any]) -> dict[str, Any]:
    """An audit finding as a task: the question, the table, the published gold, the recomputed answer,
    the correction `confirm` applies, and the evidence (the finding's kind, why, engines, confidence,
    and the rows of the table that hold the values)."""
    recomputed = finding.get("recomputed")
    why = (f"<p><b>{html.escape(finding['kind'])}</b> (confidence {finding.get('confidence', 0):.2f}; "
           f"{html.escape(', '.join(finding.get('engines') or []) or 'no engine')}): "
           f"{html.escape(str(finding.get('detail', '')))}</p>")
    for name, part in (finding.get("evidence") or {}).items():
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in part["columns"])
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>"
                       for row in part["rows"])
        why += (f"<p>{html.escape(name)}: {part['matching_rows']} rows hold a value of the gold or the recomputed "
                f"answer</p><table><tr>{head}</tr>{body}</table>")
    return {"sample_id": sample.id, "task_name": f"{sample.task} (audit: {finding['kind']})",
            "question": sample.question, "gold": shown(finding.get("gold", sample.answer)),
            "recomputed": "(nothing recomputed)" if recomputed is None else json.dumps(recomputed, ensure_ascii=False),
            "proposed": finding.get("proposed"),
            "proposed_shown": finding.get("proposed") or "(none: give the right answer with 'correct')",
            "table_html": table_html(tables), "evidence_html": why,
            "programs": "\n".join(finding.get("programs") or []) or "(none)", "finding": finding["kind"],
            "source_id": str(finding.get("source_id", ""))}


def _values(result: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for region in result:
        value = region.get("value", {})
        for key in ("choices", "text", "rating"):
            if key in value:
                out[region.get("from_name", "")] = value[key]
    return out


def decision(kind: str, result: list[dict[str, Any]], data: dict[str, Any] | None = None) -> dict[str, Any]:
    """An annotation's result regions -> {verdict, answer, reason, difficulty, comment, criteria}.

    Question review maps to a verdict too: every criterion met is accept, any unmet is reject
    with the unmet criteria as the reason. Audit review maps by `AUDIT_VERDICTS`: confirm is a fix
    with the task's proposed answer (`data["proposed"]`), correct a fix with the annotator's."""
    values = _values(result)
    first = lambda key: (values.get(key) or [None])[0] if isinstance(values.get(key), list) else values.get(key)  # noqa: E731
    comment = first("comment") or ""
    if kind == "audit":
        said = first("verdict") or ""
        verdict = AUDIT_VERDICTS.get(said, "")
        answer = (data or {}).get("proposed") if said == "confirm" else first("corrected_answer") if said == "correct" \
            else None
        return {"verdict": verdict, "answer": answer, "reason": "ambiguous" if said == "ambiguous" else "",
                "difficulty": None, "comment": comment, "criteria": {"audit": said} if said else {}}
    if kind == "question":
        criteria = {c: first(c) for c in CRITERIA}
        unmet = [c for c, v in criteria.items() if v == "no"]
        verdict = "reject" if unmet else ("accept" if all(criteria.values()) else "")
        return {"verdict": verdict, "answer": None, "reason": ", ".join(unmet), "difficulty": None,
                "comment": comment, "criteria": criteria}
    verdict = first("verdict") or ""
    return {"verdict": verdict if verdict in VERDICTS else "", "answer": first("corrected_answer"),
            "reason": first("reject_reason") or "", "difficulty": first("difficulty"), "comment": comment,
            "criteria": {}}

"""An audit's findings: what `curate audit` reports about one gold (its kind, the recomputed answer, who found
it, the evidence), shared by the SQL check (`audit.py`) and the vote on golds without a program
(`audit_vote.py`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

KINDS = ("presentation", "wrong_value", "missing_or_extra_items", "question_sql_disagree", "sql_fails", "ambiguous")


@dataclass
class Finding:
    sample_id: str
    source_id: str
    kind: str
    gold: Any
    recomputed: Any
    wrong_gold: bool
    confidence: float
    engines: list[str]
    programs: list[str]
    detail: str
    question: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)  # table excerpt: {table: {columns, rows}}
    votes: list[dict[str, Any]] = field(default_factory=list)  # the vote's candidates (validators.audit_vote)
    judge: dict[str, Any] | None = None  # who decided a disagreement and why; reason "needs judge/review" if nobody

    @property
    def needs_review(self) -> bool:
        """A person should look: the gold may be wrong, or the question may have no single answer, or
        it names what its SQL does not. A gold that is only shaped differently needs nobody."""
        return bool(self.sample_id) and (self.wrong_gold or self.kind in ("ambiguous", "question_sql_disagree"))

    @property
    def proposed(self) -> str | None:
        """The recomputed answer written as the gold is (one value, or values separated by ", "), the
        correction an annotator confirms; None where the finding proposes none."""
        return proposed_answer(self.gold, self.recomputed) if self.kind in CORRECTING else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "needs_review": self.needs_review, "proposed": self.proposed}


CORRECTING = ("wrong_value", "missing_or_extra_items")  # kinds whose recomputed answer is a correction


def proposed_answer(gold: Any, recomputed: Any) -> str | None:
    """`recomputed` (an SQL result as rows, or a candidate's answer) in the gold's shape: a gold in JSON
    (a list, a table) gets JSON, a gold in text one value or values separated by ", " (rows repeated by
    a SQL without DISTINCT once, whole floats as integers: 231794.0 is 231794)."""
    from curate.curation.answers import plain

    if recomputed is None or recomputed == [] or recomputed == "":
        return None

    def cell(v: Any) -> Any:
        v = plain(v)
        return int(v) if isinstance(v, float) and v.is_integer() and abs(v) < 1e15 else v

    if isinstance(recomputed, list) and all(isinstance(r, list) for r in recomputed):
        rows = list(dict.fromkeys(tuple(cell(v) for v in r) for r in recomputed))
        values: Any = [v for r in rows for v in r]
    else:
        values = [cell(v) for v in recomputed] if isinstance(recomputed, list) else cell(recomputed)
    if not isinstance(gold, str):
        return json.dumps(values, ensure_ascii=False)
    if isinstance(values, list):
        return ", ".join(str(v) for v in values)
    return str(values)


def excerpt(bodies: dict[str, Any], values: list[Any], limit: int = 8) -> dict[str, Any]:
    """The rows of each table that hold a value of the gold or the recomputed answer (the evidence)."""
    from curate.curation.answers import normalize_answer, plain

    def flat(v: Any) -> list[Any]:
        return [x for item in v for x in flat(item)] if isinstance(v, (list, tuple)) else [v]

    wanted = {w for v in flat(values) if v not in (None, "") and not isinstance(w := normalize_answer(v), list)}
    out = {}
    for name, body in bodies.items():
        rows = []
        for x in body.slice(0, 5000).to_pylist():
            r = list(x.values())
            if any(isinstance(c, (str, int, float)) and normalize_answer(plain(c)) in wanted for c in r):
                rows.append(r)
        if rows:
            out[name] = {"columns": body.column_names, "rows": plain(rows[:limit]), "matching_rows": len(rows)}
    return out

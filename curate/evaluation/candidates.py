"""Candidate answers for `curate audit` from a replayed file of model outputs: the same replay
`curate evaluate --backend replay` reads (`{source_id or sample_id, reply}` per line), run as it runs
them: a PoT reply's program in the sandbox (`curate.evaluation.sandbox`), its printed final answer
extracted. A line without a `mode` is a PoT reply. `curate.validators.audit` votes the answers with the
rule judge (the CLI passes them on: evaluation imports no validator).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any


def replayed_answers(release: str, path: str, isolation: str = "bwrap") -> tuple[dict[str, Any], dict[str, str]]:
    """({sample_id: answer}, {sample_id: program}) of one file of replies (one candidate model)."""
    from curate.evaluation.evaluate import Evaluator, Settings

    lines = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory(prefix="curate-audit-") as tmp:
        replay = Path(tmp) / Path(path).name
        replay.write_text("".join(json.dumps({"mode": "pot", **r}, ensure_ascii=False) + "\n" for r in lines))
        evaluator = Evaluator(release, Path(tmp) / "run", Settings(modes=["pot"], sandbox=isolation,
                                                                   sandbox_workers=1), replay=replay)
        try:
            evaluator._run_replay(evaluator.samples())
            rows = evaluator.store.rows(evaluator.model)
        finally:
            evaluator.store.db.close()
    from curate.curation.answers import final_answer

    answers = {}
    for r in rows:
        answer = json.loads(r["answer"]) if r["answer"] not in (None, "null") else None
        if isinstance(answer, str) and "final answer" in answer.lower():  # a program that printed the line
            answer = final_answer(answer)
        if answer not in (None, ""):
            answers[r["sample_id"]] = answer
    programs = {r["sample_id"]: r["program"] or "" for r in rows}
    return answers, programs
